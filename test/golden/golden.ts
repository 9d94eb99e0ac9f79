/**
 * Golden-file helper: compares with the stored file, or rewrites it when UPDATE_GOLDEN=1. A golden directory holds
 * exactly the files its tests read (expectOnly): a golden no test reads any more (its input was renamed or removed)
 * fails the suite, as Istio's do, and UPDATE_GOLDEN=1 deletes it.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';

export const updating = process.env.UPDATE_GOLDEN === '1';

export function expectGolden(file: URL, actual: string): void {
  if (updating) {
    mkdirSync(dirname(file.pathname), { recursive: true });
    writeFileSync(file, actual);
    return;
  }
  if (!existsSync(file))
    throw new Error(`golden file ${file.pathname} is missing: run with UPDATE_GOLDEN=1 to create it`);
  expect(actual).toBe(readFileSync(file, 'utf8'));
}

/** Every file below `dir`, as paths relative to it. */
function filesBelow(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? filesBelow(p).map((q) => join(f, q)) : [f];
  });
}

/**
 * The golden files below `dir` that are not among `expected` (URLs the tests pass to expectGolden): none may be
 * left. With UPDATE_GOLDEN=1 they are deleted instead.
 */
export function expectOnly(dir: URL, expected: readonly URL[]): void {
  const root = fileURLToPath(dir);
  const wanted = new Set(expected.map((u) => relative(root, fileURLToPath(u))));
  const orphans = filesBelow(root)
    .filter((f) => !wanted.has(f))
    .sort();
  if (updating) {
    for (const f of orphans) rmSync(join(root, f));
    return;
  }
  expect(orphans, `golden files no test reads below ${root} (UPDATE_GOLDEN=1 deletes them)`).toEqual([]);
}
