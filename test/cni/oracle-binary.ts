/**
 * Finds and runs the CNI oracle built by scripts/build-cni-oracle.sh (real libcni + go-cni, see
 * test/cni/oracle/main.go). The cache key is computed from the script's inputs (test/support/build-cache.ts), so a
 * changed oracle source never runs a stale binary. A missing build is an error naming the script, never a skip.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { buildCacheKey, finishedBuild } from '../support/build-cache.ts';

/** The two builds: libcni as containerd 1.6.20 vendors it, and the newest releases. */
export type OracleVariant = 'cni-oracle' | 'cni-oracle-latest';

/** scripts/build-cni-oracle.sh's key inputs, in its order. */
const ORACLE_INPUTS = ['go.mod', 'go.sum', 'go.latest.mod', 'go.latest.sum', 'main.go']
  .map((f) => `test/cni/oracle/${f}`)
  .concat('scripts/build-cni-oracle.sh');

export function oracleCacheKey(): string {
  return buildCacheKey(ORACLE_INPUTS);
}

export function oraclePath(variant: OracleVariant): string {
  const dir = finishedBuild('cni-oracle', ORACLE_INPUTS, 'scripts/build-cni-oracle.sh', 'about a minute');
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
