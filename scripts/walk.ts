/**
 * The walk of one admission request through src/ (issue 35): from an entry function, every function it calls under
 * src/, depth first, each once, in the order the source calls them (TypeScript's call hierarchy, so static: every
 * branch is walked, as a reader following the code would). Prints the folders the walk visits and how often it
 * changes folder, so a newcomer's distance through the decision can be measured before and after a move.
 *
 *   node scripts/walk.ts                         # /mutate and /validate from their handlers
 *   node scripts/walk.ts src/admission/mutate.ts:mutate --depth 2 --list
 */
import { readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import ts from 'typescript';

const ROOT = join(import.meta.dirname, '..');
const SRC = join(ROOT, 'src');

export interface Walk {
  entry: string;
  /** `folder/file.ts:function`, in the order first reached. */
  steps: string[];
  /** The distinct folders of the steps, in the order first reached (a folder under src/policy/ counts as policy/). */
  folders: string[];
  /** How often two consecutive steps sit in different folders. */
  changes: number;
  /** The same for the decision alone: the steps left when the folders below it (BELOW) are set aside. */
  decision: { folders: string[]; changes: number };
}

/**
 * What the decision calls into but is not the decision: the contract floor and the folders a decision reads from
 * (pod and Node shapes, the mesh's data, the configuration, the caches behind its dependencies).
 */
export const BELOW: ReadonlySet<string> = new Set([
  'contract',
  'util',
  'log',
  'cni',
  'validator',
  'pod',
  'node',
  'tls',
  'manifests',
  'mark',
  'mesh',
  'facts',
  'config',
  'kube',
]);

function summary(seq: readonly string[]): { folders: string[]; changes: number } {
  return { folders: [...new Set(seq)], changes: seq.filter((f, i) => i > 0 && f !== seq[i - 1]).length };
}

/** The folder a step counts in: its top folder under src/ (one decision tree = one folder). */
export function folderOf(file: string): string {
  return relative(SRC, file).split('/')[0];
}

/** One language service over src/, to walk several entries with. */
export function service(): ts.LanguageService {
  const cfgPath = join(ROOT, 'tsconfig.json');
  const parsed = ts.parseJsonConfigFileContent(
    ts.readConfigFile(cfgPath, ts.sys.readFile).config,
    ts.sys,
    dirname(cfgPath),
  );
  const files = parsed.fileNames.filter((f) => f.startsWith(SRC));
  const host: ts.LanguageServiceHost = {
    getScriptFileNames: () => files,
    getScriptVersion: () => '1',
    getScriptSnapshot: (f) => {
      try {
        return ts.ScriptSnapshot.fromString(readFileSync(f, 'utf8'));
      } catch {
        return undefined;
      }
    },
    getCurrentDirectory: () => ROOT,
    getCompilationSettings: () => parsed.options,
    getDefaultLibFileName: (o) => ts.getDefaultLibFilePath(o),
    fileExists: ts.sys.fileExists,
    readFile: ts.sys.readFile,
  };
  return ts.createLanguageService(host);
}

/** The position of `name`'s declaration in `file` (a function, or a const holding one). */
function positionOf(file: string, name: string): number {
  const text = readFileSync(file, 'utf8');
  const m = new RegExp(`(?:function\\s+|const\\s+)${name}\\b`).exec(text);
  if (!m) throw new Error(`${relative(ROOT, file)}: no function or const named ${name}`);
  return m.index + m[0].length - name.length;
}

export function walk(entry: string, maxDepth = Number.POSITIVE_INFINITY, ls = service()): Walk {
  const [fileArg, name] = entry.split(':');
  if (!fileArg || !name) throw new Error(`entry ${entry}: expected <file>:<function>`);
  const file = join(ROOT, fileArg);
  const seen = new Set<string>();
  const steps: string[] = [];
  const visit = (item: ts.CallHierarchyItem, depth: number): void => {
    const key = `${item.file}:${item.selectionSpan.start}`;
    if (seen.has(key) || !item.file.startsWith(SRC)) return;
    seen.add(key);
    steps.push(`${relative(SRC, item.file)}:${item.name}`);
    if (depth >= maxDepth) return;
    const calls = ls
      .provideCallHierarchyOutgoingCalls(item.file, item.selectionSpan.start)
      .sort((a, b) => (a.fromSpans[0]?.start ?? 0) - (b.fromSpans[0]?.start ?? 0));
    for (const c of calls) visit(c.to, depth + 1);
  };
  const start = ls.prepareCallHierarchy(file, positionOf(file, name));
  const items = Array.isArray(start) ? start : start ? [start] : [];
  if (items.length === 0) throw new Error(`entry ${entry}: not a function`);
  for (const i of items) visit(i, 0);
  const folderSeq = steps.map((s) => folderOf(join(SRC, s.split(':')[0])));
  const decision = summary(folderSeq.filter((f) => !BELOW.has(f)));
  return { entry, steps, ...summary(folderSeq), decision };
}

/** The decision core's walks: what /mutate and /validate call below their admission adapters. */
export const ENTRIES = ['src/admission/mutate.ts:mutate', 'src/admission/validate.ts:validate'] as const;

if (import.meta.main) {
  const args = process.argv.slice(2);
  const list = args.includes('--list');
  const d = args.indexOf('--depth');
  const depth = d >= 0 ? Number(args[d + 1]) : Number.POSITIVE_INFINITY;
  const entries = args.filter((a, i) => !a.startsWith('--') && (d < 0 || i !== d + 1));
  const ls = service();
  for (const e of entries.length ? entries : ENTRIES) {
    const w = walk(e, depth, ls);
    console.log(
      `walk ${w.entry}: ${w.steps.length} functions, ${w.folders.length} folders, ${w.changes} folder changes; ` +
        `the decision: ${w.decision.folders.length} folders (${w.decision.folders.join(', ')}), ${w.decision.changes} folder changes`,
    );
    if (list) for (const s of w.steps) console.log(`  ${s}`);
  }
}
