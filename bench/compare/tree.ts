/**
 * Another state of the code, side by side with this one: `git archive REF` extracted into a temp dir, with this
 * checkout's node_modules linked in, so its bench/server.ts and its src run as they were at REF. Only the server
 * and the in-process loop run from it; the load generator, the corpus and the report are this tree's.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from '../../test/e2e/harness/binaries.ts';

export interface Tree {
  ref: string;
  commit: string;
  dir: string;
  remove(): void;
}

export function extractTree(ref: string): Tree {
  const commit = execFileSync('git', ['rev-parse', '--verify', `${ref}^{commit}`], {
    cwd: repoRoot,
    encoding: 'utf8',
  }).trim();
  const dir = mkdtempSync(join(tmpdir(), 'meshgate-tree-'));
  execFileSync('sh', ['-c', `git archive ${commit} | tar -x -C "${dir}"`], { cwd: repoRoot });
  symlinkSync(join(repoRoot, 'node_modules'), join(dir, 'node_modules'));
  return { ref, commit: commit.slice(0, 12), dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
