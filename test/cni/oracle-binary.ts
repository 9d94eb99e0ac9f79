/**
 * Finds and runs the CNI oracle built by scripts/build-cni-oracle.sh (real libcni + go-cni, see
 * test/cni/oracle/main.go). The cache key is recomputed here exactly as the script does, so a changed oracle
 * source never runs a stale binary. A missing build is an error naming the script, never a skip.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

/** The two builds: libcni as containerd 1.6.20 vendors it, and the newest releases. */
export type OracleVariant = 'cni-oracle' | 'cni-oracle-latest';

/** sha256(go.mod ‖ go.sum ‖ go.latest.mod ‖ go.latest.sum ‖ main.go ‖ script), first 12 hex digits. */
export function oracleCacheKey(): string {
  const hash = createHash('sha256');
  const mod = 'test/cni/oracle';
  for (const f of [
    `${mod}/go.mod`,
    `${mod}/go.sum`,
    `${mod}/go.latest.mod`,
    `${mod}/go.latest.sum`,
    `${mod}/main.go`,
    'scripts/build-cni-oracle.sh',
  ]) {
    hash.update(readFileSync(join(repoRoot, f)));
  }
  return hash.digest('hex').slice(0, 12);
}

export function oraclePath(variant: OracleVariant): string {
  const cache = process.env.MESHGATE_CACHE || join(homedir(), '.cache', 'meshgate');
  const dir = join(cache, `cni-oracle-${oracleCacheKey()}`);
  if (!existsSync(join(dir, '.complete'))) {
    throw new Error(
      `the CNI oracle is not built for this source: ${dir}/.complete is missing. Run \`bash scripts/build-cni-oracle.sh\` (npm test does it via scripts/bootstrap.mjs; about a minute).`,
    );
  }
  return join(dir, 'bin', variant);
}

export interface OracleNetwork {
  file?: string;
  name: string;
  cniVersion: string;
  plugins: string[];
}

export interface OracleResult {
  id: string;
  files: string[];
  containerd: { ok: boolean; error?: string; networks?: OracleNetwork[] };
  crio: {
    error?: string;
    files: Array<{
      file: string;
      outcome: 'loaded' | 'load_error' | 'invalid';
      error?: string;
      network?: OracleNetwork;
    }>;
    default?: string;
  };
}

export interface OracleRun {
  libcni: string;
  goCni: string;
  go: string;
  results: OracleResult[];
}

export interface OracleCase {
  id: string;
  confDir: string;
  binDirs: string[];
  maxConfNum: number;
}

/** One process for all cases: the oracle reads them as JSON on stdin. */
export function runOracle(variant: OracleVariant, cases: OracleCase[]): OracleRun {
  const res = spawnSync(oraclePath(variant), [], { input: JSON.stringify({ cases }), maxBuffer: 256 * 1024 * 1024 });
  if (res.status !== 0) throw new Error(`${variant} exited ${res.status ?? res.signal}: ${res.stderr?.toString()}`);
  return JSON.parse(res.stdout.toString()) as OracleRun;
}
