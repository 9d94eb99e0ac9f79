// The real-node tier runs as ONE network namespace that the run creates (`unshare --net`): etcd, the apiserver,
// meshgate, every containerd and kubelet, the pods' bridges and the test process itself. Nothing in it can reach
// the machine's network: it has only lo, the node bridge and the pod bridges/veths, and no default route. This
// machine's own gateway is 192.0.2.1, so a pod packet that reached the real root netns would go to a real host;
// assertIsolated() proves before the first pod starts that it cannot. The namespace, its lo and the route check are
// the ones every tier uses (test/support/isolation.ts); this tier adds the lock, the watchdog and the link check.
//
// Not `ip netns exec`: iproute2 also unshares the mount namespace and remounts /sys there, so kubelet's volume
// mounts would be invisible to a containerd started by another `ip netns exec`.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { assertNoRouteOut, currentNetns, netnsCommand, OUTER_NETNS_ENV } from '../../support/isolation.ts';
import { BASE, LOCK_FILE, runCleanup } from './host.ts';

/** Set in the re-executed child; its value is the outer process's pid (for the watchdog's messages). */
export const INSIDE_ENV = 'MESHGATE_REALNODE_INSIDE';
/** The judge's probe (judge.ts dials it from pods to see where their packets go): unreachable, like the gateway. */
const PROBE_ADDRESS = '203.0.113.1';
/** The bridge holding the node IPs (no `dummy` link type in this kernel). */
export const NODE_BRIDGE = 'mg0';
/** How long a second run waits for the lock before giving up: a whole run takes about a minute or two. */
const LOCK_WAIT_SECONDS = 900;

export const isInside = () => process.env[INSIDE_ENV] !== undefined;

/**
 * In the outer process: re-runs this script (same argv) inside `flock LOCK unshare --net` and exits with the
 * child's status. SIGINT (Ctrl-C) and SIGTERM are forwarded; the child tears down and exits. After the
 * child ends, cleanup.sh for that run sweeps whatever a crash left; a detached watchdog does the same if this
 * process is killed outright (SIGKILL), once the child is gone too.
 */
export function reexecIsolated(): never | Promise<never> {
  if (process.getuid?.() !== 0) {
    console.error('scenarios: the real-node tier needs root (network namespace, cgroups, containerd, kubelet).');
    process.exit(2);
  }
  mkdirSync(BASE, { recursive: true });
  const runId = `r${Date.now().toString(36)}`;
  // Own process group (detached), so signals reach it only as forwarded below: the same way from a terminal's
  // Ctrl-C and from a `kill` of this process. flock keeps the lock while its command runs (the command inherits
  // the locked fd), even if flock itself dies of the signal.
  const child = spawn(
    'flock',
    [
      '-w',
      String(LOCK_WAIT_SECONDS),
      '-E',
      '75',
      LOCK_FILE,
      ...netnsCommand([process.execPath, ...process.execArgv, ...process.argv.slice(1)]),
    ],
    {
      stdio: 'inherit',
      detached: true,
      env: {
        ...process.env,
        [INSIDE_ENV]: String(process.pid),
        [OUTER_NETNS_ENV]: currentNetns(),
        MESHGATE_REALNODE_RUN: runId,
      },
    },
  );
  const watchdog = spawn(
    'sh',
    [
      '-c',
      'while kill -0 "$1" 2>/dev/null || kill -0 "$2" 2>/dev/null; do sleep 1; done; flock "$3" bash "$4" "$5" >/dev/null 2>&1',
      'meshgate-realnode-watchdog',
      String(process.pid),
      String(child.pid),
      LOCK_FILE,
      cleanupScriptPath(),
      runId,
    ],
    { detached: true, stdio: 'ignore' },
  );
  watchdog.unref();
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.on(sig, () => {
      try {
        process.kill(-child.pid!, sig); // flock, and the run inside it, which tears down and exits
      } catch {
        // already gone
      }
    });
  }
  return new Promise<never>(() => {
    child.on('exit', (code, signal) => {
      if (code === 75) console.error(`scenarios: another real-node run held ${LOCK_FILE} for ${LOCK_WAIT_SECONDS}s`);
      const swept = spawnSync('flock', ['-w', '60', LOCK_FILE, 'bash', cleanupScriptPath(), runId], {
        encoding: 'utf8',
      });
      if (swept.stderr.trim()) process.stderr.write(`after-run sweep (leftovers of a crash):\n${swept.stderr}`);
      process.exit(code ?? 128 + (signal === 'SIGKILL' ? 9 : 15));
    });
  });
}

function cleanupScriptPath(): string {
  return new URL('../cleanup.sh', import.meta.url).pathname;
}

const sh = (cmd: string, args: string[]) =>
  execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

/**
 * In the child: checks that this is a namespace of its own (lo is already up), brings up the node bridge with the
 * node IPs, then asserts isolation. Also sweeps leftovers of earlier runs (we hold the lock, so none is live).
 */
export function setUpNamespace(nodeIps: string[]): { sweep: string } {
  const own = currentNetns();
  const outer = process.env[OUTER_NETNS_ENV];
  if (!outer || own === outer)
    throw new Error(`refusing to run: this process is not in a network namespace of its own (${own}, outer ${outer})`);
  const sweep = runCleanup('--all');
  // A second cluster in the same namespace (the next line of scenarios/lines.ts) starts from fresh bridges: the node
  // bridge and the earlier nodes' pod bridges (mg-rn-1 …), whose pod-CIDR routes the control plane refuses.
  for (const link of linkNames().filter((l) => l === NODE_BRIDGE || l.startsWith('mg-')))
    sh('ip', ['link', 'del', link]);
  sh('ip', ['link', 'add', NODE_BRIDGE, 'type', 'bridge']);
  for (const ip of nodeIps) sh('ip', ['addr', 'add', `${ip}/32`, 'dev', NODE_BRIDGE]);
  sh('ip', ['link', 'set', NODE_BRIDGE, 'up']);
  assertIsolated();
  return { sweep };
}

/**
 * Throws unless the namespace has no route out (assertNoRouteOut: the gateway, the `kubernetes` Service IP, the
 * judge's probe, no default route) and no link that could lead out (only lo, our bridges and the pods' veths).
 * Call before the first pod starts, and again any time. The pod CIDR is not checked here: the pod bridges route it.
 */
export function assertIsolated(): void {
  assertNoRouteOut('real-node pods (ISOLATION BROKEN)', { addresses: [PROBE_ADDRESS] });
  const links = linkNames();
  const foreign = links.filter((l) => l !== 'lo' && l !== NODE_BRIDGE && !/^(mg-|veth)/.test(l));
  if (foreign.length > 0)
    throw new Error(`ISOLATION BROKEN: unexpected links in the test namespace: ${foreign.join(', ')}`);
}

/** The namespace's links by name (a veth's peer suffix `@…` dropped). */
function linkNames(): string[] {
  return sh('ip', ['-o', 'link', 'show'])
    .split('\n')
    .filter(Boolean)
    .map((l) => l.split(':')[1].trim().split('@')[0]);
}
