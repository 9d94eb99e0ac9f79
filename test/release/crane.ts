/**
 * go-containerregistry's crane (scripts/build-crane.sh) as the release tests and the real-node tier use it: a real OCI
 * registry (`crane registry serve`, the distribution API, blobs in memory) on loopback, started only inside a
 * network namespace the test made itself, and `crane push`/`digest`/`manifest`/`validate` against it as a user's
 * tools would. The cache key is computed from the script's inputs (test/support/build-cache.ts): a changed go.mod
 * never runs a stale crane; a missing build is an error naming the script, never a skip.
 */
import { appendFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as procs from '../e2e/harness/procs.ts';
import { runTool } from '../e2e/harness/net.ts';
import { waitFor } from '../e2e/harness/wait.ts';
import { buildCacheKey, finishedBuild } from '../support/build-cache.ts';

/** scripts/build-crane.sh's key inputs, in its order. */
const CRANE_INPUTS = ['test/release/crane/go.mod', 'test/release/crane/go.sum', 'scripts/build-crane.sh'];

export function craneCacheKey(): string {
  return buildCacheKey(CRANE_INPUTS);
}

export function craneBinary(): string {
  return join(finishedBuild('crane', CRANE_INPUTS, 'scripts/build-crane.sh', 'about a minute cold'), 'bin', 'crane');
}

/** Runs crane; rejects with its stderr unless it exits 0. Plain HTTP is for the loopback registries here only. */
export async function crane(args: string[], timeoutMs = 120_000): Promise<string> {
  const res = await runTool(craneBinary(), args, { timeoutMs });
  if (res.code !== 0) throw new Error(`crane ${args.join(' ')} failed (exit ${res.code}): ${res.stderr}`);
  return res.stdout;
}

export interface Registry {
  /** host:port, e.g. 127.0.0.1:41234. */
  address: string;
  component: procs.Component;
  /** The registry's request log ("GET /v2/<repo>/manifests/<ref>" …), one line a request. */
  requests(): string[];
  stop(): Promise<void>;
}

/**
 * Starts `crane registry serve` on 127.0.0.1 (a free port) logging to `<dir>/registry.log`. Call it only inside a
 * network namespace of the test's own (vitest and the real-node tier run in one).
 */
export async function startRegistry(dir: string, pgidFile = join(dir, 'registry.pgids')): Promise<Registry> {
  const logPath = join(dir, 'registry.log');
  appendFileSync(pgidFile, '');
  const component = procs.startComponent('registry', craneBinary(), ['registry', 'serve', '--address', '127.0.0.1:0'], {
    logPath,
    pgidFile,
  });
  const port = await waitFor(
    'crane registry serve listening',
    () => {
      procs.assertRunning(component);
      return /serving on port (\d+)/.exec(readFileSync(logPath, 'utf8'))?.[1];
    },
    { timeoutMs: 30_000, describe: () => procs.tail(logPath, 20) },
  );
  return {
    address: `127.0.0.1:${port}`,
    component,
    requests: () =>
      readFileSync(logPath, 'utf8')
        .split('\n')
        .map((l) => /\d\d:\d\d:\d\d ((?:GET|HEAD|PUT|POST|PATCH|DELETE) \S+)/.exec(l)?.[1])
        .filter((l): l is string => l !== undefined),
    stop: () => procs.stopComponent(component),
  };
}
