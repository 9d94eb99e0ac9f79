/**
 * The cache dirs scripts/build-*.sh build into, found the way their preamble (scripts/lib/build-common.sh) names
 * them: `<cache>/<part>-<key>`, the key being the first 12 hex digits of sha256 over the script's input files, in the
 * script's order, followed by the preamble itself. Computing it here, once, keeps a test from running binaries built
 * from another tree; test/meshbin/cache-keys.test.ts checks every script prints the same dir (`--print-dir`).
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Repository root (this file is test/support/build-cache.ts). */
export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

/** Every key ends with this file: editing the shared preamble rebuilds every part. */
export const BUILD_PREAMBLE = 'scripts/lib/build-common.sh';

/** `${MESHGATE_CACHE:-$HOME/.cache/meshgate}`, as the scripts read it. */
export function cacheRoot(): string {
  return process.env.MESHGATE_CACHE || join(homedir(), '.cache', 'meshgate');
}

/** The key of a build whose inputs are `files` (repo-relative or absolute, in the script's order). */
export function buildCacheKey(files: readonly string[], root = repoRoot): string {
  const hash = createHash('sha256');
  for (const f of [...files, BUILD_PREAMBLE]) hash.update(readFileSync(isAbsolute(f) ? f : join(root, f)));
  return hash.digest('hex').slice(0, 12);
}

/** `<cache>/<part>-<key>`, whether built or not. */
export function buildCacheDir(part: string, files: readonly string[], root = repoRoot): string {
  return join(cacheRoot(), `${part}-${buildCacheKey(files, root)}`);
}

/**
 * The finished dir of a build, or an error naming the script to run (a missing build is never a skip). `hint` says
 * how long a cold build takes.
 */
export function finishedBuild(part: string, files: readonly string[], script: string, hint: string): string {
  const dir = buildCacheDir(part, files);
  if (!existsSync(join(dir, '.complete'))) {
    throw new Error(
      `${part} is not built for this source: ${dir}/.complete is missing. Run \`bash ${script}\` (npm test does it ` +
        `via scripts/bootstrap.mjs; ${hint}).`,
    );
  }
  return dir;
}
