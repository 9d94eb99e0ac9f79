/**
 * One name, one meaning (issue 35): an exported name under src/ names one declaration. Two files may export the
 * same name only when one re-exports the other's declaration; two different declarations under one name (two
 * `Verdict`s, three `Parsed`s) make a reader guess which one an import means, so the test lists them and fails.
 * The TypeScript compiler resolves each export through its re-exports to the declaration it stands for.
 */
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '../..');
const SRC = join(ROOT, 'src');

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? tsFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** Where a declaration lives, as `file:line`, relative to root. */
function place(d: ts.Declaration, root: string): string {
  const file = d.getSourceFile();
  const { line } = file.getLineAndCharacterOfPosition(d.getStart());
  return `${relative(root, file.fileName)}:${line + 1}`;
}

/**
 * Each exported name of the files under root, with the declarations it stands for after following re-exports:
 * one entry per name, the places sorted, so a name with more than one place names more than one thing. Names
 * that stand for a library's declarations (re-exported types of node: or a package) are left out.
 */
function exportedNames(root: string, options: ts.CompilerOptions): Map<string, string[]> {
  const files = tsFiles(root);
  const program = ts.createProgram(files, { ...options, noEmit: true });
  const checker = program.getTypeChecker();
  const byName = new Map<string, Map<ts.Symbol, string>>();
  for (const file of files) {
    const source = program.getSourceFile(file);
    const module = source && checker.getSymbolAtLocation(source);
    if (!module) continue;
    for (const exported of checker.getExportsOfModule(module)) {
      const target = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
      const first = target.declarations?.[0];
      if (!first?.getSourceFile().fileName.startsWith(`${root}/`)) continue;
      const seen = byName.get(exported.name) ?? new Map<ts.Symbol, string>();
      seen.set(target, place(first, root));
      byName.set(exported.name, seen);
    }
  }
  return new Map([...byName].map(([name, seen]) => [name, [...seen.values()].sort()]));
}

/** The names that stand for two or more declarations, one line each: `Name: a.ts:3, b.ts:9`. */
function duplicates(names: ReadonlyMap<string, readonly string[]>): string[] {
  return [...names]
    .filter(([, places]) => places.length > 1)
    .map(([name, places]) => `${name}: ${places.join(', ')}`)
    .sort();
}

function compilerOptions(): ts.CompilerOptions {
  const config = ts.readConfigFile(join(ROOT, 'tsconfig.json'), ts.sys.readFile);
  return ts.parseJsonConfigFileContent(config.config, ts.sys, ROOT).options;
}

/** Three files: b.ts re-exports a.ts's Shape (one meaning), c.ts declares a Shape of its own (a second one). */
const FIXTURE: Record<string, string> = {
  'a.ts': 'export type Other = number;\nexport interface Shape {\n  a: string;\n}\n',
  'b.ts': "export { Shape } from './a.ts';\nexport const other = 1;\n",
  'c.ts': "export const kind = 'c';\nexport type Shape = { c: number };\n",
};

describe('one name, one meaning', () => {
  it('no exported name under src/ stands for two declarations', () => {
    const names = exportedNames(SRC, compilerOptions());
    expect(names.size).toBeGreaterThan(1000);
    expect(duplicates(names)).toEqual([]);
  });

  it('tells a re-export of one declaration from a second declaration under the same name', () => {
    const dir = mkdtempSync(join(tmpdir(), 'names-'));
    try {
      for (const [file, text] of Object.entries(FIXTURE)) writeFileSync(join(dir, file), text);
      expect(duplicates(exportedNames(dir, compilerOptions()))).toEqual(['Shape: a.ts:2, c.ts:2']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
