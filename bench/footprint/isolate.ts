/**
 * `--footprint` runs in a network namespace of its own (`unshare --net`, lo up, no other link): the apiserver it
 * starts dials whatever a webhook configuration names, and the daemons dial the apiserver; inside, nothing but
 * loopback exists, so nothing can leave this machine (its default gateway routes off it). The outer process re-runs
 * the same command inside and exits with its status; the inner one checks it really is elsewhere before it starts.
 */
import { spawn, spawnSync } from 'node:child_process';
import { readlinkSync } from 'node:fs';

/** Set in the re-run child: the outer process's netns (e.g. net:[4026531840]). */
const OUTER_NETNS_ENV = 'MESHGATE_FOOTPRINT_OUTER_NETNS';
/** This machine's gateway, a ClusterIP, and a documentation address: none may have a route inside. */
const MUST_BE_UNREACHABLE = ['192.0.2.1', '10.96.0.1', '203.0.113.1'];

export const isIsolated = () => process.env[OUTER_NETNS_ENV] !== undefined;

/** Re-runs this process's command under `unshare --net` and resolves with its exit code. */
export function rerunIsolated(): Promise<number> {
  if (process.getuid?.() !== 0) throw new Error('--footprint needs root: it runs in a network namespace of its own');
  const child = spawn('unshare', ['--net', '--', process.execPath, ...process.execArgv, ...process.argv.slice(1)], {
    stdio: 'inherit',
    env: { ...process.env, [OUTER_NETNS_ENV]: readlinkSync('/proc/self/ns/net') },
  });
  for (const sig of ['SIGINT', 'SIGTERM'] as const) process.on(sig, () => child.kill(sig));
  return new Promise((resolve) => child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0))));
}

/** Inside: lo up, then proof that this is another namespace with no route anywhere but loopback. */
export function setUpIsolation(): void {
  const own = readlinkSync('/proc/self/ns/net');
  if (own === process.env[OUTER_NETNS_ENV]) throw new Error(`refusing to run: still in the outer netns ${own}`);
  const up = spawnSync('ip', ['link', 'set', 'lo', 'up'], { encoding: 'utf8' });
  if (up.status !== 0) throw new Error(`ip link set lo up failed: ${up.stderr.trim()}`);
  for (const addr of MUST_BE_UNREACHABLE) {
    const r = spawnSync('ip', ['route', 'get', addr], { encoding: 'utf8' });
    if (r.status === 0) throw new Error(`isolation broken: a route to ${addr} exists: ${r.stdout.trim()}`);
  }
  const links = spawnSync('ip', ['-o', 'link', 'show'], { encoding: 'utf8' })
    .stdout.split('\n')
    .filter(Boolean)
    .map((l) => l.split(':')[1].trim());
  if (links.some((l) => l !== 'lo')) throw new Error(`isolation broken: links other than lo: ${links.join(', ')}`);
}
