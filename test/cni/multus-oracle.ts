/**
 * Runs the Multus oracle built by scripts/build-multus-oracle.sh (test/cni/multus-oracle/main.go: multus-cni v4.2.3's
 * own LoadNetConf, GetDefaultNetworks, TryLoadPodDelegates and the thick daemon's config generator). The cache key is
 * computed from the script's inputs (test/support/build-cache.ts); a missing build is an error naming the script, never a skip.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { buildCacheKey, finishedBuild } from '../support/build-cache.ts';

/** scripts/build-multus-oracle.sh's key inputs, in its order. */
const MULTUS_INPUTS = [
  ...['go.mod', 'go.sum', 'main.go'].map((f) => `test/cni/multus-oracle/${f}`),
  'scripts/build-multus-oracle.sh',
];

export function multusCacheKey(): string {
  return buildCacheKey(MULTUS_INPUTS);
}

export interface MultusCase {
  id: string;
  /** The Multus plugin configuration as the runtime hands it to Multus. */
  conf: string;
  pod?: { namespace: string; networks?: string; defaultNetwork?: string };
  nads?: Array<{ namespace: string; name: string; config?: string }>;
}

export interface MultusResult {
  id: string;
  error?: string;
  /** Every delegate in the order Multus runs them: the default network first. */
  delegates?: Array<{ name: string; plugins: string[] }>;
}

function binary(): string {
  const dir = finishedBuild('multus-oracle', MULTUS_INPUTS, 'scripts/build-multus-oracle.sh', '2-7 minutes cold');
  return join(dir, 'bin', 'multus-oracle');
}

function run<T>(command: string, input: unknown): T {
  const res = spawnSync(binary(), [command], { input: JSON.stringify(input), maxBuffer: 64 * 1024 * 1024 });
  if (res.status !== 0) throw new Error(`multus-oracle ${command} exited ${res.status ?? res.signal}: ${res.stderr}`);
  return JSON.parse(res.stdout.toString()) as T;
}

export function resolveWithMultus(cases: MultusCase[]): MultusResult[] {
  return run<MultusResult[]>('resolve', cases);
}

/** The thick daemon's 00-multus.conf for a daemon config file (its multusAutoconfigDir must hold the primary). */
export function generateThickConf(daemonConfig: string): { config?: string; error?: string } {
  return run('generate', { daemonConfig });
}
