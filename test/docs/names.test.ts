/**
 * A doc cannot name what does not exist (issue 34 §7): every `meshgate <command> --flag` in the README, docs/**.md
 * and the chart's NOTES.txt is a command of src/cli/commands.ts with flags of its table; every chart value they name
 * (`--set a.b=…`, `values.path` in backticks) is a key of values.schema.json; and the README's rollout is the one
 * short path the guides and NOTES extend: its commands appear in docs/istio.md, docs/linkerd.md (for Linkerd) in
 * the same order, and NOTES.txt carries its steps after the install. kubectl and helm lines are run, not read:
 * test/e2e/docs-commands.test.ts.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { COMMANDS, type CommandName } from '../../src/cli/commands.ts';
import { repoRoot } from '../e2e/harness/binaries.ts';

const files = (dir: string): string[] =>
  readdirSync(join(repoRoot, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.md') ? [join(dir, e.name)] : [],
  );
const DOCS = ['README.md', ...files('docs'), 'charts/meshgate/templates/NOTES.txt'];
const text = (f: string) => readFileSync(join(repoRoot, f), 'utf8');

/** The code of a doc: its fenced blocks, its inline code spans, and NOTES.txt's indented command lines. */
function code(doc: string): string[] {
  const blocks = [...doc.matchAll(/```[a-z]*\n([\s\S]*?)```/g)].map((m) => m[1].replace(/\\\n\s*/g, ' '));
  const rest = doc.replace(/```[\s\S]*?```/g, '');
  const inline = [...rest.matchAll(/`([^`\n]+)`/g)].map((m) => m[1]);
  const indented = [...rest.replace(/\\\n\s*/g, ' ').matchAll(/^ {4,}(\S.*)$/gm)].map((m) => m[1]);
  return [...blocks.flatMap((b) => b.split('\n')), ...inline, ...indented];
}

/** The meshgate command lines a doc shows, as `<command> <args…>`. */
function meshgateLines(doc: string): string[] {
  const out: string[] = [];
  for (const c of code(doc)) {
    const m =
      /^(?:\$ )?(?:meshgate|node_modules\/\.bin\/node bin\/meshgate\.js|npx meshgate) ([a-z][a-z-]*(?:\s.*)?)$/.exec(
        c.trim(),
      );
    if (m)
      out.push(
        m[1]
          .replace(/\s+#.*$/, '')
          .replace(/\s*[|;&].*$/, '')
          .trim(),
      );
  }
  return out;
}

/** Why a `meshgate …` line names a command or flag that does not exist, or undefined. */
function problem(line: string): string | undefined {
  const [cmd, ...args] = line.split(/\s+/);
  if (!(cmd in COMMANDS)) return `no command "${cmd}"`;
  const flags = COMMANDS[cmd as CommandName].flags as Record<string, { short?: string }>;
  const shorts = new Set(Object.values(flags).flatMap((f) => (f.short ? [f.short] : [])));
  for (const a of args) {
    if (a === '-' || !a.startsWith('-')) continue;
    if (a.startsWith('--')) {
      const name = a.slice(2).split('=')[0];
      if (!(name in flags)) return `meshgate ${cmd} has no flag --${name}`;
    } else if (!shorts.has(a.slice(1, 2))) return `meshgate ${cmd} has no flag ${a}`;
  }
  return undefined;
}

type Schema = { properties?: Record<string, Schema>; $ref?: string; allOf?: Schema[]; additionalProperties?: unknown };
const SCHEMA = JSON.parse(text('charts/meshgate/values.schema.json')) as Schema & {
  definitions: Record<string, Schema>;
};
const resolve = (s: Schema): Schema => (s.$ref ? resolve(SCHEMA.definitions[s.$ref.split('/').at(-1)!]) : s);

/** Whether `a.b.c` is a value of the chart (maps with open keys accept any key below them). */
function isValue(path: string): boolean {
  let node: Schema = SCHEMA;
  for (const key of path.split('.')) {
    node = resolve(node);
    const props = { ...node.properties, ...Object.assign({}, ...(node.allOf ?? []).map((a) => resolve(a).properties)) };
    if (key in props) node = props[key];
    else return node.additionalProperties !== undefined && node.additionalProperties !== false;
  }
  return true;
}

/** Chart values a doc names: `--set path=` arguments and backticked paths under a top-level value. */
function valuePaths(doc: string): string[] {
  const top = Object.keys(SCHEMA.properties ?? {}).filter((k) => !['mesh', 'config', 'global'].includes(k));
  // --set of meshgate's own release only (the guides install other charts too).
  const sets = [
    ...doc.replace(/\\\n\s*/g, ' ').matchAll(/^.*helm (?:install|upgrade|template) meshgate .*$/gm),
  ].flatMap((l) => [...l[0].matchAll(/--set(?:-string)?[ =]([\w.-]+)=/g)].map((m) => m[1]));
  const named = [...doc.matchAll(new RegExp(`\`((?:${top.join('|')})\\.[A-Za-z][\\w.]*)(?:[:=][^\`]*)?\``, 'g'))].map(
    (m) => m[1].replace(/\.$/, ''),
  );
  // File names (`image.ts`) are not values.
  return [...sets, ...named.filter((p) => !/\.(ts|js|go|rs|md|ya?ml|json|sh|tpl)$/.test(p))];
}

describe.each(DOCS)('%s', (file) => {
  const doc = text(file);

  it('names only meshgate commands and flags that exist', () => {
    const wrong = meshgateLines(doc)
      .map((l) => [l, problem(l)])
      .filter(([, p]) => p);
    expect(wrong, relative(repoRoot, join(repoRoot, file))).toEqual([]);
  });

  it('names only chart values that exist', () => {
    expect(valuePaths(doc).filter((p) => !isValue(p))).toEqual([]);
  });
});

describe('the rules above can fail', () => {
  it('a made-up flag, command or value is caught', () => {
    expect(problem('explain --mesh-confg x.yaml')).toMatch(/no flag --mesh-confg/);
    expect(problem('explian -f x')).toMatch(/no command/);
    expect(problem('check -q')).toMatch(/no flag -q/);
    expect(isValue('webhook.podDisruptionBudget.maxUnavailable')).toBe(true);
    expect(isValue('webhook.podDisruptionBudget.maxUnavaliable')).toBe(false);
    expect(isValue('webhook.podLabels.anything')).toBe(true);
  });
});

/** The README's rollout: its sh block's commands, comments dropped. */
function readmePath(): string[] {
  const readme = text('README.md');
  const section = readme.slice(
    readme.indexOf('## Rollout: audit first, then enforce'),
    readme.indexOf('## The two commands'),
  );
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
  return block
    .split('\n')
    .map((l) => l.replace(/\s+#.*$/, '').trim())
    .filter((l) => l && !l.startsWith('#'));
}

describe('one short path: the README’s rollout, which the guides and NOTES extend', () => {
  const path = readmePath();

  it('is install → audit → enforce', () => {
    expect(path.map((l) => l.split(' ').slice(0, 2).join(' '))).toEqual([
      'meshgate check',
      'kubectl create',
      'kubectl label',
      'helm install',
      'meshgate check',
      'meshgate explain',
      'kubectl label',
      'helm upgrade',
    ]);
  });

  it.each([
    ['docs/istio.md', (l: string) => l],
    [
      'docs/linkerd.md',
      (l: string) =>
        l.replace('--mesh istio', '--mesh linkerd').replace('meshgate-istio.yaml', 'meshgate-linkerd.yaml'),
    ],
  ])('%s installs as it does and rolls out in the same order', (file, forMesh) => {
    const guide = text(file);
    const rollout = guide.slice(guide.indexOf('## 3. Rollout'), guide.indexOf('## 4.'));
    const install = path.filter((l) => /^(kubectl create|kubectl label namespace meshgate |helm install)/.test(l));
    for (const line of install.map(forMesh)) expect(guide, `${file}: ${line}`).toContain(line);
    let at = 0;
    // explain deploy/… is the README's own example of step 3; the guides show their namespaces' workloads.
    const steps = path.filter((l) => !install.includes(l) && !l.startsWith('meshgate explain'));
    for (const line of steps.map(forMesh)) {
      const found = rollout.indexOf(line, at);
      expect(found, `${file}, its rollout: "${line}" after offset ${at}`).toBeGreaterThanOrEqual(0);
      at = found + line.length;
    }
  });

  it('NOTES.txt carries the steps after the install: check --audit, promote, the default', () => {
    const notes = text('charts/meshgate/templates/NOTES.txt');
    const after = [
      'meshgate check --audit',
      'meshgate.io/enforcement=enforce --overwrite',
      '--set config.enforcement.default=enforce',
    ];
    let at = 0;
    for (const s of after) {
      const found = notes.indexOf(s, at);
      expect(found, s).toBeGreaterThanOrEqual(0);
      at = found;
    }
  });
});
