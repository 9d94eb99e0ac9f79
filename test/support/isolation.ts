// No test or benchmark may send a packet off this machine (issue 21). A chart installed into a harness cluster keeps
// its Service-based webhook configuration; once a selected pod is created, the kube-apiserver dials the Service's
// ClusterIP (10.96.0.0/16), and on these machines that packet leaves through the default gateway (192.0.2.1). So:
//   - isolateThisRun(): the entry points (vitest.config.ts, bench/run.ts, scripts/demo.ts) re-execute their own
//     command under `unshare --net` with lo up. Every process of the run (test workers, apiservers, webhook servers,
//     helm, kubectl, Istio's injector, Kyverno) inherits a namespace holding only lo and the links tests add.
//   - assertNoRouteOut(): whatever starts a kube-apiserver or a peer that talks to one calls it first, so a run
//     that bypassed the re-exec (another config, a script of its own) refuses instead of leaking.
// The real-node tier (test/realnode/harness/isolation.ts) adds a lock and a watchdog to the same re-exec.
import { spawn, spawnSync } from 'node:child_process';
import { readlinkSync } from 'node:fs';
import { constants } from 'node:os';
import { isatty } from 'node:tty';

/** Set in a re-executed run: the network namespace of the process that re-executed (e.g. net:[4026531833]). */
export const OUTER_NETNS_ENV = 'MESHGATE_OUTER_NETNS';

/**
 * Unreachable whatever the cluster's CIDRs: the `kubernetes` Service IP (the first ClusterIP of the harness range)
 * and this machine's default gateway, which is where anything routed off loopback goes.
 */
export const MUST_BE_UNREACHABLE: readonly string[] = ['10.96.0.1', '192.0.2.1'];

/** How `ip route get` says an address has no route (unreachable or prohibiting routes answer differently). */
const NO_ROUTE = /Network is unreachable|No route to host|Permission denied/;

export const currentNetns = (): string => readlinkSync('/proc/self/ns/net');

/** True in a run that isolateThisRun() (or the real-node tier) re-executed into a namespace of its own. */
export function inOwnNetns(): boolean {
  const outer = process.env[OUTER_NETNS_ENV];
  return outer !== undefined && outer !== currentNetns();
}

/**
 * The command line that runs `argv` in a new network namespace with lo up. As root: `unshare --net`. Otherwise a
 * user namespace maps us to root just long enough to bring lo up, and a nested one maps us back to our own uid and
 * gid, so the run keeps no capability (and root-only tests still see a non-root user).
 */
export function netnsCommand(argv: readonly string[]): string[] {
  const uid = process.getuid?.() ?? 0;
  const gid = process.getgid?.() ?? 0;
  const inside = uid === 0 ? 'exec "$@"' : `exec unshare --user --map-user=${uid} --map-group=${gid} -- "$@"`;
  const userns = uid === 0 ? [] : ['--user', '--map-root-user'];
  return ['unshare', ...userns, '--net', '--', 'sh', '-c', `ip link set lo up && ${inside}`, 'meshgate-netns', ...argv];
}

/**
 * In the outer process: re-runs this very command (same node, flags and argv) inside netnsCommand() and exits with
 * its status; the returned promise never settles there. In the re-executed run: checks the namespace
 * (assertNoRouteOut) and resolves. `what` names the run in messages ("vitest", "bench").
 *
 * The child stays in our process group so a terminal's Ctrl-C (and vitest's watch-mode keys) reach it directly;
 * SIGTERM and SIGHUP are forwarded, SIGINT too when there is no terminal to have sent it to both of us. If this
 * process is killed outright, the child gets SIGTERM (setpriv --pdeathsig) and tears its clusters down.
 */
export function isolateThisRun(what: string): Promise<void> {
  if (inOwnNetns()) {
    assertNoRouteOut(what);
    return Promise.resolve();
  }
  const [probe, ...probeArgs] = netnsCommand(['true']);
  const preflight = spawnSync(probe, probeArgs, { encoding: 'utf8' });
  if (preflight.status !== 0) {
    console.error(
      `${what}: cannot create a network namespace for this run (\`${[probe, ...probeArgs].join(' ')}\` failed: ` +
        `${(preflight.error?.message ?? preflight.stderr).trim()}). Tests and benchmarks start kube-apiservers, which ` +
        'must never reach the network (issue 21): run as root, or enable unprivileged user namespaces ' +
        '(sysctl kernel.unprivileged_userns_clone=1), with util-linux and iproute2 installed.',
    );
    process.exit(2);
  }
  const [cmd, ...args] = [
    'setpriv',
    '--pdeathsig',
    'TERM',
    '--',
    ...netnsCommand([process.execPath, ...process.execArgv, ...process.argv.slice(1)]),
  ];
  const child = spawn(cmd, args, { stdio: 'inherit', env: { ...process.env, [OUTER_NETNS_ENV]: currentNetns() } });
  const terminal = isatty(0);
  const forwarded: NodeJS.Signals[] = terminal ? ['SIGTERM', 'SIGHUP'] : ['SIGTERM', 'SIGHUP', 'SIGINT'];
  for (const sig of forwarded) process.on(sig, () => child.kill(sig));
  if (terminal) process.on('SIGINT', () => {}); // the terminal sent it to the child too: wait for its exit
  return new Promise<void>(() => {
    child.on('error', (err) => {
      console.error(`${what}: could not re-execute in a network namespace: ${err.message}`);
      process.exit(2);
    });
    child.on('exit', (code, signal) => process.exit(code ?? 128 + (signal ? constants.signals[signal] : 0)));
  });
}

export interface RouteCheck {
  /** IPv4 CIDRs the cluster uses (service range, pod CIDR): no route may reach any part of them. */
  cidrs?: readonly string[];
  /** Further addresses that must have no route (e.g. a probe address a tier dials on purpose to see it fail). */
  addresses?: readonly string[];
}

/**
 * Throws, naming every reachable address, unless this network namespace has no route to MUST_BE_UNREACHABLE,
 * `addresses` and the first address of each CIDR (`ip route get` fails), and no default route nor route into a
 * CIDR in any table (a route to part of a range, e.g. 10.96.5.0/24, escapes the first address's lookup). Asks the
 * kernel over netlink only: sends no packet. `what` names what is refusing to start.
 */
export function assertNoRouteOut(what: string, check: RouteCheck = {}): void {
  const cidrs = (check.cidrs ?? []).map(parseCidr);
  const probes = [...new Set([...MUST_BE_UNREACHABLE, ...(check.addresses ?? []), ...cidrs.map(firstAddress)])];
  const found: string[] = [];
  for (const addr of probes) {
    const r = spawnSync('ip', ['route', 'get', addr], { encoding: 'utf8' });
    if (r.error) throw new Error(`${what}: cannot check network isolation: \`ip\`: ${r.error.message} (iproute2)`);
    if (r.status === 0) found.push(`${addr} (\`ip route get ${addr}\`: ${oneLine(r.stdout)})`);
    else if (!NO_ROUTE.test(r.stderr))
      throw new Error(`${what}: cannot check network isolation: \`ip route get ${addr}\` failed: ${oneLine(r.stderr)}`);
  }
  const shown = spawnSync('ip', ['-j', 'route', 'show', 'table', 'all'], { encoding: 'utf8' });
  if (shown.status !== 0)
    throw new Error(`${what}: cannot list routes: \`ip -j route show table all\`: ${oneLine(shown.stderr)}`);
  for (const route of JSON.parse(shown.stdout) as IpRoute[]) {
    if (['blackhole', 'unreachable', 'prohibit', 'throw'].includes(route.type ?? 'unicast')) continue;
    const where = [
      route.dst,
      ...(['gateway', 'dev', 'table'] as const).map((k) => route[k] && `${k === 'gateway' ? 'via' : k} ${route[k]}`),
    ]
      .filter(Boolean)
      .join(' ');
    if (route.dst === 'default') found.push(`everything (default route: ${where})`);
    else if (!route.dst.includes(':')) {
      const dst = readCidr(route.dst.includes('/') ? route.dst : `${route.dst}/32`);
      const hit = dst && cidrs.find((c) => c.first <= dst.last && dst.first <= c.last);
      if (!dst) found.push(`somewhere this check cannot read (route ${where})`);
      else if (hit) found.push(`${route.dst} in cluster CIDR ${hit.text} (route ${where})`);
    }
  }
  if (found.length > 0)
    throw new Error(
      `refusing to start ${what}: this network namespace (${currentNetns()}) has a route to ${found.join('; ')}. A ` +
        'kube-apiserver dials whatever a webhook or APIService names (a Service-based webhook: a ClusterIP), and ' +
        'through such a route the packet would leave this machine. Run through vitest, `npm run bench` or ' +
        '`npm run demo` (they re-execute themselves under `unshare --net`), or wrap the command in ' +
        "`unshare --net sh -c 'ip link set lo up && exec …'` (issue 21).",
    );
}

/** The fields of `ip -j route` read here; a missing type is a unicast route, a missing table is main. */
interface IpRoute {
  type?: string;
  dst: string;
  gateway?: string;
  dev?: string;
  table?: string;
}

interface Cidr {
  text: string;
  first: number;
  last: number;
}

function parseCidr(text: string): Cidr {
  const c = readCidr(text);
  if (!c) throw new Error(`network isolation: ${JSON.stringify(text)} is not an IPv4 CIDR (a.b.c.d/n)`);
  return c;
}

/** a.b.c.d/n as a range of 32-bit numbers (host bits ignored), or undefined when it is not one. */
function readCidr(text: string): Cidr | undefined {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\/(\d{1,2})$/.exec(text);
  const octets = m?.slice(1, 5).map(Number) ?? [];
  const bits = Number(m?.[5]);
  if (!m || octets.some((o) => o > 255) || bits > 32) return undefined;
  const size = 2 ** (32 - bits);
  const first = Math.floor(octets.reduce((a, o) => a * 256 + o, 0) / size) * size;
  return { text, first, last: first + size - 1 };
}

/** The range's first host (10.96.0.0/16 → 10.96.0.1): the address the apiserver gives its first Service. */
function firstAddress(c: Cidr): string {
  const n = c.last > c.first ? c.first + 1 : c.first;
  return [24, 16, 8, 0].map((shift) => Math.floor(n / 2 ** shift) % 256).join('.');
}

const oneLine = (s: string) => s.trim().replace(/\s+/g, ' ');
