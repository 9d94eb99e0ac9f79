/**
 * Network-namespace plumbing for the redirect tests: a "pod" netns and a "remote" netns joined by a veth pair, both
 * created (and deleted) by the test. Every address used lives only inside these namespaces, so the tests never send
 * a packet to the machine's real networks; createTopology checks that with `ip route get` before anything connects.
 * Commands run synchronously: they are quick and their order matters.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { isAlive } from '../e2e/harness/procs.ts';

/** Names are mgv-<pid>-<random>-pod|remote: the pid lets a later run delete leftovers of dead runs only. */
const PREFIX = 'mgv-';

export interface Topology {
  readonly pod: string;
  readonly remote: string;
  /** The pod's address on its eth0 (a /30 in 10.244.0.0/16, chosen at random; exists only in the pod netns). */
  readonly podIp: string;
  /** The remote end of the veth, the pod's default gateway. */
  readonly remoteIp: string;
  /** IPv6 counterparts (fd00::/8 ULA, random), or null for an IPv4-only topology. */
  readonly podIp6: string | null;
  readonly remoteIp6: string | null;
}

/** RFC 5737 TEST-NET-1 address of the external probe; the test assigns it to the remote netns only. */
export const TEST_NET_ADDRESS = '192.0.2.1';
/** An address no interface in either namespace has: its route lookup shows where an unknown address would go. */
const NOWHERE = '198.51.100.7';

export function run(cmd: string, args: string[], input?: string): string {
  try {
    return execFileSync(cmd, args, { encoding: 'utf8', input, stdio: ['pipe', 'pipe', 'pipe'] });
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`${cmd} ${args.join(' ')} failed: ${e.stderr?.trim() || e.message}`);
  }
}

function have(cmd: string): boolean {
  return ['/usr/sbin', '/sbin', '/usr/bin', '/bin'].some((dir) => existsSync(`${dir}/${cmd}`));
}

/** The tests need root, iproute2, iptables, setpriv and sysctl. Missing any is a failure with a fix, never a skip. */
export function assertPrerequisites(): void {
  const problems: string[] = [];
  if (process.getuid?.() !== 0) problems.push(`not running as root (uid ${process.getuid?.()})`);
  for (const [cmd, pkg] of [
    ['ip', 'iproute2'],
    ['iptables', 'iptables'],
    ['ip6tables', 'iptables'],
    ['setpriv', 'util-linux'],
    ['sysctl', 'procps'],
  ]) {
    if (!have(cmd)) problems.push(`\`${cmd}\` is missing (Debian package ${pkg})`);
  }
  if (problems.length > 0) {
    throw new Error(
      `the netns redirect tests cannot run: ${problems.join('; ')}. Run them as root via \`npm test\` ` +
        '(its bootstrap installs iproute2 and iptables with apt-get) or `apt-get install iproute2 iptables util-linux procps`.',
    );
  }
}

/** Deletes namespaces with our prefix left by runs whose process is gone (a live parallel run keeps its own). */
export function deleteLeftovers(): string[] {
  const deleted: string[] = [];
  for (const line of run('ip', ['netns', 'list']).split('\n')) {
    const name = line.split(' ')[0];
    const m = new RegExp(`^${PREFIX}(\\d+)-`).exec(name ?? '');
    if (!m || isAlive(Number(m[1]))) continue;
    run('ip', ['netns', 'del', name]);
    deleted.push(name);
  }
  return deleted;
}

function sysctl(ns: string, settings: string[]): void {
  run('ip', ['netns', 'exec', ns, 'sysctl', '-q', '-w', ...settings]);
}

/**
 * Creates pod and remote namespaces and the veth pair (created directly inside them: nothing in the host netns).
 * IPv4-only unless `ipv6`: then IPv6 is disabled on eth0 before it exists, so the kernel sends nothing on its own
 * (no router solicitations, DAD or MLD) and the pod's transmit counter counts only what the test made it send.
 */
export function createTopology(opts: { ipv6?: boolean } = {}): Topology {
  const base = `${PREFIX}${process.pid}-${randomBytes(3).toString('hex')}`;
  const octet = 1 + (randomBytes(1)[0] % 250);
  const ula = `fd00:${randomBytes(2).toString('hex')}`;
  const t: Topology = {
    pod: `${base}-pod`,
    remote: `${base}-remote`,
    podIp: `10.244.${octet}.1`,
    remoteIp: `10.244.${octet}.2`,
    podIp6: opts.ipv6 ? `${ula}::1` : null,
    remoteIp6: opts.ipv6 ? `${ula}::2` : null,
  };
  run('ip', ['netns', 'add', t.pod]);
  run('ip', ['netns', 'add', t.remote]);
  for (const ns of [t.pod, t.remote]) {
    sysctl(
      ns,
      opts.ipv6
        ? [
            'net.ipv6.conf.default.accept_dad=0',
            'net.ipv6.conf.default.router_solicitations=0',
            'net.ipv6.conf.default.accept_ra=0',
          ]
        : ['net.ipv6.conf.default.disable_ipv6=1'],
    );
  }
  run('ip', ['link', 'add', 'eth0', 'netns', t.pod, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', t.remote]);
  run('ip', ['-n', t.pod, 'addr', 'add', `${t.podIp}/30`, 'dev', 'eth0']);
  run('ip', ['-n', t.remote, 'addr', 'add', `${t.remoteIp}/30`, 'dev', 'eth0']);
  run('ip', ['-n', t.remote, 'addr', 'add', `${TEST_NET_ADDRESS}/32`, 'dev', 'lo']);
  if (t.podIp6 && t.remoteIp6) {
    run('ip', ['-n', t.pod, 'addr', 'add', `${t.podIp6}/64`, 'dev', 'eth0', 'nodad']);
    run('ip', ['-n', t.remote, 'addr', 'add', `${t.remoteIp6}/64`, 'dev', 'eth0', 'nodad']);
  }
  for (const ns of [t.pod, t.remote]) {
    run('ip', ['-n', ns, 'link', 'set', 'lo', 'up']);
    run('ip', ['-n', ns, 'link', 'set', 'eth0', 'up']);
  }
  assertContained(t);
  setDefaultRoute(t, true);
  return t;
}

/**
 * The `ip route get` pre-check (no packet is sent by it): before the pod gets its default route, no probe address is
 * reachable from it at all; afterwards, every one goes to the remote netns over the veth; and the remote netns is a
 * dead end (no route beyond its own addresses). So whatever a probe sends can only reach the remote netns.
 */
export function assertContained(t: Topology): void {
  const unreachable = (ns: string, addr: string, family: '-4' | '-6') => {
    let out: string;
    try {
      out = run('ip', ['-n', ns, family, 'route', 'get', addr]);
    } catch (err) {
      if (/unreachable/i.test((err as Error).message)) return;
      throw err;
    }
    throw new Error(`${ns} has a route to ${addr} before the test gave it one: ${out.trim()} — refusing to probe`);
  };
  unreachable(t.pod, TEST_NET_ADDRESS, '-4');
  unreachable(t.pod, NOWHERE, '-4');
  unreachable(t.remote, NOWHERE, '-4');
  if (t.podIp6) {
    unreachable(t.pod, '::6', '-6');
    unreachable(t.pod, '2001:db8::7', '-6');
    unreachable(t.remote, '2001:db8::7', '-6');
  }
}

/** A pod always has a default route (via the remote netns here); removing it shows the probe must be routable. */
export function setDefaultRoute(t: Topology, present: boolean): void {
  if (present) {
    run('ip', ['-n', t.pod, 'route', 'replace', 'default', 'via', t.remoteIp]);
    if (t.remoteIp6) run('ip', ['-n', t.pod, '-6', 'route', 'replace', 'default', 'via', t.remoteIp6]);
    const route = run('ip', ['-n', t.pod, 'route', 'get', TEST_NET_ADDRESS]);
    if (!route.includes(`via ${t.remoteIp} dev eth0`))
      throw new Error(`the pod's route to ${TEST_NET_ADDRESS} is not the test's veth: ${route.trim()}`);
  } else {
    run('ip', ['-n', t.pod, 'route', 'del', 'default']);
    if (t.remoteIp6) run('ip', ['-n', t.pod, '-6', 'route', 'del', 'default']);
  }
}

/** Assigns or removes an address on the pod's lo, as istio-iptables does with ::6 (`ip -6 addr add ::6/128 dev lo`). */
export function setLoopbackAddress(t: Topology, cidr: string, present: boolean): void {
  if (present) {
    run('ip', ['-n', t.pod, 'addr', 'replace', cidr, 'dev', 'lo']);
    return;
  }
  const [local, prefix] = cidr.split('/');
  const links = JSON.parse(run('ip', ['-n', t.pod, '-j', 'addr', 'show', 'dev', 'lo'])) as Array<{
    addr_info: Array<{ local: string; prefixlen: number }>;
  }>;
  const has = links.some((l) => l.addr_info.some((a) => a.local === local && String(a.prefixlen) === prefix));
  if (has) run('ip', ['-n', t.pod, 'addr', 'del', cidr, 'dev', 'lo']);
}

/** Packets the pod has transmitted on every interface but lo: what left the pod, whatever the protocol (ARP too). */
export function podTxPackets(t: Topology): number {
  const links = JSON.parse(run('ip', ['-n', t.pod, '-s', '-j', 'link', 'show'])) as Array<{
    ifname: string;
    stats64: { tx: { packets: number } };
  }>;
  return links.filter((l) => l.ifname !== 'lo').reduce((n, l) => n + l.stats64.tx.packets, 0);
}

/** Deletes what createTopology made; tolerates a half-built topology. */
export function destroyTopology(t: Topology | undefined): void {
  if (!t) return;
  const existing = run('ip', ['netns', 'list']);
  for (const ns of [t.pod, t.remote]) {
    if (existing.split('\n').some((l) => l.split(' ')[0] === ns)) run('ip', ['netns', 'del', ns]);
  }
}
