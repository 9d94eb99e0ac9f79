/**
 * Runs the real CLI (`node bin/meshgate.js validate-redirect`) inside the pod netns the way the init container runs:
 * as a given non-root UID/GID, no capabilities (bounding set emptied), no_new_privs. Returns what a kubelet would
 * see: exit code, output, the termination message file, and the wall time.
 */
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const NODE = join(ROOT, 'node_modules/.bin/node');
export const MESHGATE = join(ROOT, 'bin/meshgate.js');

/** Linkerd's network validator runs as nobody. */
export const NOBODY = 65534;

export interface Identity {
  readonly uid: number;
  readonly gid: number;
}

export interface ValidatorRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** The termination log's content; "" when nothing was written. */
  readonly termination: string;
  readonly wallMs: number;
}

export async function runValidator(
  ns: string,
  args: string[],
  as: Identity,
  opts: { nodeName?: string } = {},
): Promise<ValidatorRun> {
  const dir = mkdtempSync(join(tmpdir(), 'mgv-termlog-'));
  const log = join(dir, 'termination-log');
  // Like the kubelet: the file exists before the container starts and the container's user can write it.
  writeFileSync(log, '');
  chmodSync(dir, 0o755);
  chmodSync(log, 0o666);
  const privs = [
    'setpriv',
    `--reuid=${as.uid}`,
    `--regid=${as.gid}`,
    '--clear-groups',
    '--no-new-privs',
    '--inh-caps=-all',
    '--bounding-set=-all',
  ];
  const argv = ['netns', 'exec', ns, ...privs, NODE, MESHGATE, 'validate-redirect', '--termination-log', log, ...args];
  const started = performance.now();
  try {
    return await new Promise((resolve, reject) => {
      const child = spawn('ip', argv, {
        env: { PATH: process.env.PATH ?? '/usr/sbin:/usr/bin', NODE_NAME: opts.nodeName ?? 'node-under-test' },
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => (stdout += d));
      child.stderr.on('data', (d) => (stderr += d));
      child.on('error', reject);
      child.on('close', (code) => {
        resolve({ code, stdout, stderr, termination: readFileSync(log, 'utf8'), wallMs: performance.now() - started });
      });
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The parsed termination message; fails the caller with stderr when there is none. */
export function terminationOf(run: ValidatorRun): Record<string, unknown> {
  if (run.termination === '') throw new Error(`no termination message (exit ${run.code}; stderr: ${run.stderr})`);
  return JSON.parse(run.termination) as Record<string, unknown>;
}
