/**
 * Finds and runs the CNI oracles: the go-cni ones built by scripts/build-cni-oracle.sh (containerd's selection
 * over the real libcni of each line, test/cni/oracle/main.go) and the ocicni ones built by
 * scripts/build-ocicni-oracle.sh (CRI-O's own selection code, test/cni/ocicni-oracle/main.go). The cache keys are
 * computed from the scripts' inputs (test/support/build-cache.ts), so a changed oracle source never runs a stale
 * binary. A missing build is an error naming the script, never a skip.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { LibcniLine } from '../../src/cni/types.ts';
import { buildCacheKey, finishedBuild, repoRoot } from '../support/build-cache.ts';

/** The ocicni snapshots, beside the clone as scripts/build-ocicni-oracle.sh finds them. */
const vendorRoot = () => process.env.MESHGATE_VENDOR || join(repoRoot, '..', 'shared', 'vendor');

/** containerd's selection (go-cni) over each libcni line. */
export const GOCNI_ORACLES: Record<LibcniLine, string> = {
  '1.1': 'cni-oracle',
  '1.2': 'cni-oracle-libcni12',
  '1.3': 'cni-oracle-latest',
};

/** CRI-O's selection (ocicni) over each libcni line. */
export const OCICNI_ORACLES: Record<LibcniLine, string> = {
  '1.1': 'ocicni-oracle-libcni11',
  '1.2': 'ocicni-oracle-libcni12',
  '1.3': 'ocicni-oracle-latest',
};

/** scripts/build-cni-oracle.sh's key inputs, in its order. */
const ORACLE_INPUTS = [
  ...['go.mod', 'go.sum', 'go.latest.mod', 'go.latest.sum', 'go.libcni12.mod', 'go.libcni12.sum', 'main.go'].map(
    (f) => `test/cni/oracle/${f}`,
  ),
  'scripts/build-cni-oracle.sh',
];

export function oracleCacheKey(): string {
  return buildCacheKey(ORACLE_INPUTS);
}

/** scripts/build-ocicni-oracle.sh's key inputs, in its order (the .go files of a snapshot in byte order). */
function ocicniInputs(): string[] {
  const own = ['go.mod', 'go.sum', 'go.libcni12.mod', 'go.libcni12.sum', 'go.libcni11.mod', 'go.libcni11.sum'];
  const files = [...own, 'main.go', 'export.go.in'].map((f) => `test/cni/ocicni-oracle/${f}`);
  files.push('scripts/build-ocicni-oracle.sh');
  for (const snapshot of ['ocicni-latest', 'ocicni-libcni-1.1']) {
    const dir = join(vendorRoot(), snapshot);
    files.push(...['SOURCE', 'go.mod', 'go.sum'].map((f) => join(dir, f)));
    const goFiles = readdirSync(join(dir, 'pkg/ocicni'))
      .filter((f) => f.endsWith('.go'))
      .sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
    files.push(...goFiles.map((f) => join(dir, 'pkg/ocicni', f)));
  }
  return files;
}

export function ocicniCacheKey(): string {
  return buildCacheKey(ocicniInputs());
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

export interface OcicniResult {
  id: string;
  error?: string;
  /** Every conf file, in name order, with what ocicni's loop did with it. */
  files: Array<{ file: string; outcome: 'loaded' | 'load_error' | 'invalid'; error?: string }>;
  /** The default network ocicni chose (its name after ocicni's fallback to the file name). */
  default?: OracleNetwork & { file: string };
}

export interface OcicniRun {
  ocicni: string;
  libcni: string;
  go: string;
  results: OcicniResult[];
}

function runJson<T>(path: string, cases: unknown[]): T {
  const res = spawnSync(path, [], { input: JSON.stringify({ cases }), maxBuffer: 256 * 1024 * 1024 });
  if (res.status !== 0) throw new Error(`${path} exited ${res.status ?? res.signal}: ${res.stderr?.toString()}`);
  return JSON.parse(res.stdout.toString()) as T;
}

/** One process for all cases: the oracle reads them as JSON on stdin. */
export function runOracle(line: LibcniLine, cases: OracleCase[]): OracleRun {
  const dir = finishedBuild('cni-oracle', ORACLE_INPUTS, 'scripts/build-cni-oracle.sh', 'about a minute');
  const path = join(dir, 'bin', GOCNI_ORACLES[line]);
  return runJson<OracleRun>(path, cases);
}

export function runOcicniOracle(line: LibcniLine, cases: OracleCase[]): OcicniRun {
  const dir = finishedBuild('ocicni-oracle', ocicniInputs(), 'scripts/build-ocicni-oracle.sh', 'about a minute');
  const path = join(dir, 'bin', OCICNI_ORACLES[line]);
  return runJson<OcicniRun>(
    path,
    cases.map(({ id, confDir, binDirs }) => ({ id, confDir, binDirs })),
  );
}
