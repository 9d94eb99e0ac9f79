/**
 * The import floor (issue 22): src/contract/ holds the names, reason codes, patch type and the pod and Node shapes
 * everything shares, and imports nothing; every other folder imports only from folders in layers below its own.
 * So no import runs upward and no circle can form between folders; inside a folder, no file imports itself back
 * through others. A new folder must be placed here before it can import anything.
 *
 * src/policy/ is one decision seen from its sides (issue 35), layered inside too: ambient mode's rules and the
 * container contracts (judge/) at its bottom, the shared pod judgement in policy/ itself, then the mutating and the
 * validating cores, which never import each other.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const SRC = join(import.meta.dirname, '../../src');

/** Bottom first. A folder may import from its own folder and from any folder of a lower layer. */
const LAYERS: readonly (readonly string[])[] = [
  ['contract'],
  ['util', 'log'],
  ['cni', 'validator'],
  ['pod', 'node', 'tls', 'manifests', 'mark'],
  ['mesh', 'facts'],
  ['config'],
  ['policy/ambient'],
  ['policy/judge'],
  ['policy'],
  ['policy/mutate', 'policy/validate'],
  ['kube'],
  ['admission', 'agent'],
  ['check', 'server'],
  ['repair'],
  ['uninstall'],
  ['cli'],
];

const layerOf = new Map(LAYERS.flatMap((folders, i) => folders.map((f) => [f, i] as const)));

/** Folders whose subfolders are layered apart (a file directly in one counts as the folder itself). */
const TREES: ReadonlySet<string> = new Set(['policy']);

/** The layered folder a path under src/ belongs to: its top folder, or `top/sub` inside a tree. */
function unitOf(path: string): string {
  const parts = path.split('/');
  return TREES.has(parts[0]) && parts.length > 2 ? `${parts[0]}/${parts[1]}` : parts[0];
}

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? tsFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** Each relative import of a file under src/, as `file -> target` with both folders. */
function imports(): Array<{ file: string; from: string; to: string; target: string }> {
  return tsFiles(SRC).flatMap((file) => {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    const from = unitOf(relative(SRC, file));
    return importedFiles
      .filter((i) => i.fileName.startsWith('.'))
      .map((i) => {
        const target = relative(SRC, normalize(join(dirname(file), i.fileName)));
        return { file: relative(SRC, file), from, to: unitOf(target), target };
      });
  });
}

/** Why an import breaks the floor, or undefined when it keeps it. */
function violation(from: string, to: string): string | undefined {
  if (from === to) return undefined;
  const a = layerOf.get(from);
  const b = layerOf.get(to);
  if (a === undefined) return `folder src/${from}/ is in no layer of test/contract/layers.test.ts`;
  if (b === undefined) return `folder src/${to}/ is in no layer of test/contract/layers.test.ts`;
  if (b >= a) return `src/${from}/ (layer ${a}) may import only from lower layers; src/${to}/ is layer ${b}`;
  return undefined;
}

/** Files that import themselves back through others, as `a -> b -> a` chains (empty when there are none). */
function circles(edges: ReadonlyArray<{ file: string; target: string }>): string[] {
  const next = new Map<string, string[]>();
  for (const e of edges) next.set(e.file, [...(next.get(e.file) ?? []), e.target]);
  const state = new Map<string, 'open' | 'done'>();
  const found: string[] = [];
  const visit = (file: string, path: string[]): void => {
    state.set(file, 'open');
    for (const t of next.get(file) ?? []) {
      if (state.get(t) === 'open') found.push([...path.slice(path.indexOf(t)), file, t].join(' -> '));
      else if (!state.has(t)) visit(t, [...path, file]);
    }
    state.set(file, 'done');
  };
  for (const f of next.keys()) if (!state.has(f)) visit(f, []);
  return found;
}

describe('the import floor', () => {
  it('every import under src/ runs downward (or stays in its folder)', () => {
    const all = imports();
    expect(all.length).toBeGreaterThan(500);
    const bad = all.flatMap((i) => {
      const why = violation(i.from, i.to);
      return why ? [`${i.file} imports ${i.target}: ${why}`] : [];
    });
    expect(bad).toEqual([]);
  });

  it('src/contract/ imports nothing but itself, and no library', () => {
    const floor = join(SRC, 'contract');
    const own = tsFiles(floor).flatMap((file) =>
      ts.preProcessFile(readFileSync(file, 'utf8'), true, true).importedFiles.map((i) => ({ file, spec: i.fileName })),
    );
    expect(own.length).toBeGreaterThan(10);
    const inside = (file: string, spec: string) =>
      spec.startsWith('.') && spec.endsWith('.ts') && normalize(join(dirname(file), spec)).startsWith(`${floor}/`);
    expect(own.filter((i) => !inside(i.file, i.spec)).map((i) => `${relative(SRC, i.file)}: ${i.spec}`)).toEqual([]);
  });

  it('no file imports itself back through others (dynamic imports included)', () => {
    expect(circles(imports())).toEqual([]);
  });

  it('refuses an upward import, a sideways one and an unplaced folder, and finds a circle', () => {
    expect(
      circles([
        { file: 'a.ts', target: 'b.ts' },
        { file: 'b.ts', target: 'c.ts' },
        { file: 'c.ts', target: 'a.ts' },
      ]),
    ).toEqual(['a.ts -> b.ts -> c.ts -> a.ts']);
    expect(circles([{ file: 'a.ts', target: 'b.ts' }])).toEqual([]);
    expect(violation('policy', 'contract')).toBeUndefined();
    expect(violation('contract', 'policy/mutate')).toMatch(/layer 0.*layer 9/);
    expect(violation('policy/mutate', 'policy/validate')).toMatch(/only from lower layers/);
    expect(violation('policy/judge', 'policy')).toMatch(/only from lower layers/);
    expect(unitOf('policy/mutate/decide.ts')).toBe('policy/mutate');
    expect(unitOf('policy/screen.ts')).toBe('policy');
    expect(unitOf('check/run.ts')).toBe('check');
    expect(violation('newthing', 'util')).toMatch(/src\/newthing\/ is in no layer/);
  });
});
