/**
 * Where the source emits a code, read statically (no type checker): every string literal in a position that produces
 * a value — a `reason`/`why`/`hold`/`code`/`outcome` property, a call's argument, a constant, a returned value or
 * tuple — through `?:`, `??`, `||`, `as` and `satisfies`, with constants resolved by name and code-shaped template
 * literals (`${x}_allowed`) as patterns. Comparisons, `case` labels, sets of codes to test against, property names and types are reads, not
 * emissions. A `reason` property's literal and an Event-shaped argument (CamelCase `Mesh…`/`Node…`) are `strict`:
 * those must be catalogue codes (test/contract/codes.test.ts); typed positions (ReasonCode, CniReasonCode, …) are
 * held to the catalogue by tsc already. Go: `…Code = "…"` constants of the NRI plugin.
 */
import ts from 'typescript';

export interface Emission {
  file: string;
  line: number;
  /** The code, or for a template literal the pattern it matches (`^[a-z_]+_allowed$`). */
  code: string | RegExp;
  /** A `reason:` literal or an Event reason argument: it must be a catalogue code. */
  strict: boolean;
}

/** Reasons that are not meshgate's: the Kubernetes Status reasons of an admission answer (metav1.StatusReason). */
export const KUBERNETES_REASONS: ReadonlySet<string> = new Set(['Forbidden', 'InternalError']);

const EVENT_REASON = /^(Mesh|Node)[A-Z][A-Za-z]+$/;
const CODE_PROPERTIES = new Set(['reason', 'why', 'hold', 'code', 'outcome']);
/** Calls that test a value against codes rather than produce one. */
const READS = new Set(['includes', 'has', 'indexOf', 'startsWith', 'endsWith', 'get', 'delete', 'test', 'exec']);

const transparent = (up: ts.Node, p: ts.Node): boolean =>
  ts.isParenthesizedExpression(up) ||
  (ts.isConditionalExpression(up) && up.condition !== p) ||
  ts.isAsExpression(up) ||
  ts.isSatisfiesExpression(up) ||
  ts.isNonNullExpression(up) ||
  (ts.isBinaryExpression(up) &&
    up.right === p &&
    (up.operatorToken.kind === ts.SyntaxKind.QuestionQuestionToken ||
      up.operatorToken.kind === ts.SyntaxKind.BarBarToken)) ||
  (ts.isBinaryExpression(up) && up.left === p && up.operatorToken.kind === ts.SyntaxKind.BarBarToken);

/** What `node`'s value becomes: the position it produces into, or undefined when it is read, not produced. */
function producedInto(node: ts.Node, sf: ts.SourceFile): { strict: boolean } | undefined {
  let p = node;
  let up = node.parent;
  while (up && transparent(up, p)) [p, up] = [up, up.parent];
  if (ts.isArrayLiteralExpression(up)) {
    // A tuple returned ([reason, detail]), not a list of codes to test against.
    const tuple = up;
    let q: ts.Node = tuple;
    let top = tuple.parent;
    while (top && transparent(top, q)) [q, top] = [top, top.parent];
    return ts.isReturnStatement(top) || (ts.isArrowFunction(top) && top.body === q) ? { strict: false } : undefined;
  }
  if (ts.isPropertyAssignment(up) && up.initializer === p) {
    const name = up.name.getText(sf);
    return CODE_PROPERTIES.has(name) ? { strict: name === 'reason' } : undefined;
  }
  if (ts.isCallExpression(up) || ts.isNewExpression(up)) {
    if (!up.arguments?.includes(p as ts.Expression)) return undefined;
    const callee = up.expression;
    if (ts.isPropertyAccessExpression(callee) && READS.has(callee.name.text)) return undefined;
    return { strict: false };
  }
  if (ts.isVariableDeclaration(up) || ts.isParameter(up) || ts.isReturnStatement(up)) return { strict: false };
  if (ts.isArrowFunction(up) && up.body === p) return { strict: false };
  return undefined;
}

/** `const NAME = 'literal'` (through `satisfies`/`as`) of a file: constants other files emit by name. */
export function stringConstants(file: string, text: string): Map<string, string> {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const out = new Map<string, string>();
  for (const st of sf.statements) {
    if (!ts.isVariableStatement(st) || !(st.declarationList.flags & ts.NodeFlags.Const)) continue;
    for (const d of st.declarationList.declarations) {
      let init = d.initializer;
      while (init && (ts.isSatisfiesExpression(init) || ts.isAsExpression(init))) init = init.expression;
      if (init && ts.isStringLiteral(init) && ts.isIdentifier(d.name)) out.set(d.name.text, init.text);
    }
  }
  return out;
}

/** The emissions of one TypeScript file; `constants` are every file's stringConstants, by name. */
export function emissions(file: string, text: string, constants: ReadonlyMap<string, string>): Emission[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const out: Emission[] = [];
  const at = (n: ts.Node) => sf.getLineAndCharacterOfPosition(n.getStart(sf)).line + 1;
  const visit = (n: ts.Node): void => {
    if (ts.isStringLiteral(n) || ts.isNoSubstitutionTemplateLiteral(n)) {
      const into = producedInto(n, sf);
      if (into) {
        const event = EVENT_REASON.test(n.text) && (ts.isCallExpression(n.parent) || into.strict);
        out.push({ file, line: at(n), code: n.text, strict: into.strict || event });
      }
    } else if (ts.isIdentifier(n) && constants.has(n.text) && !ts.isVariableDeclaration(n.parent)) {
      const into = ts.isImportSpecifier(n.parent) || ts.isExportSpecifier(n.parent) ? undefined : producedInto(n, sf);
      if (into) out.push({ file, line: at(n), code: constants.get(n.text) as string, strict: into.strict });
    } else if (ts.isTemplateExpression(n) && producedInto(n, sf)) {
      const parts = [n.head.text, ...n.templateSpans.map((s) => s.literal.text)];
      const literal = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      // Only a code-shaped template: its text is snake_case joined to a value by `_` (`${mesh}_validation_failed`).
      const joined = parts.some((s) => /^_[a-z_]*[a-z]$|^[a-z][a-z_]*_$/.test(s));
      if (joined && parts.every((s) => /^[a-z_]*$/.test(s)))
        out.push({ file, line: at(n), code: new RegExp(`^${parts.map(literal).join('[a-z_]+')}$`), strict: false });
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out;
}

/** The NRI plugin's codes: `xxxCode = "code"` constants of its Go sources. */
export function goEmissions(file: string, text: string): Emission[] {
  return [...text.matchAll(/\b\w+Code\s*=\s*"([a-z_]+)"/g)].map((m) => ({
    file,
    line: text.slice(0, m.index).split('\n').length,
    code: m[1],
    strict: true,
  }));
}
