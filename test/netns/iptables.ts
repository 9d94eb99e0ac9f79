/**
 * iptables inside the test's namespaces: picks a working binary (nft backend first, legacy as fallback), installs
 * the mesh-style REDIRECT rules, and reads packet counters in the remote netns to prove what did or did not arrive.
 */
import { run } from './netns.ts';

export interface Iptables {
  /** "iptables" or "iptables-legacy". */
  readonly bin: string;
  /** e.g. "iptables v1.8.9 (nf_tables)". */
  readonly version: string;
  exec(ns: string, args: string[]): string;
}

/**
 * Tries each binary on the nat table of `ns` (the kernel must support that backend's NAT); first one that works.
 * MESHGATE_TEST_IPTABLES=iptables-legacy forces one, to check both backends on a machine that has both.
 */
export function pickIptables(ns: string, forced = process.env.MESHGATE_TEST_IPTABLES): Iptables {
  const errors: string[] = [];
  for (const bin of forced ? [forced] : ['iptables', 'iptables-legacy']) {
    try {
      run('ip', ['netns', 'exec', ns, bin, '-t', 'nat', '-S']);
      const version = run(bin, ['--version']).trim();
      return { bin, version, exec: (n, args) => run('ip', ['netns', 'exec', n, bin, ...args]) };
    } catch (err) {
      errors.push((err as Error).message);
    }
  }
  throw new Error(`no usable iptables inside a network namespace:\n${errors.join('\n')}`);
}

/** The proxy's UID: istio-iptables and linkerd proxy-init exempt its traffic so the proxy's own connections go out. */
export const PROXY_UID = 1337;

/**
 * Outbound rules equivalent to istio-iptables' (nat table, custom chains, OUTPUT jump for TCP, RETURN for loopback
 * and the proxy's UID/GID, REDIRECT to the outbound port), written the way `iptables -S` prints them so the test can
 * check they were really installed.
 */
export function meshOutboundRules(toPort: number): string[] {
  return [
    '-N ISTIO_OUTPUT',
    '-N ISTIO_REDIRECT',
    '-A OUTPUT -p tcp -j ISTIO_OUTPUT',
    '-A ISTIO_OUTPUT -s 127.0.0.6/32 -o lo -j RETURN',
    `-A ISTIO_OUTPUT -o lo -m owner ! --uid-owner ${PROXY_UID} -j RETURN`,
    `-A ISTIO_OUTPUT -m owner --uid-owner ${PROXY_UID} -j RETURN`,
    `-A ISTIO_OUTPUT -m owner --gid-owner ${PROXY_UID} -j RETURN`,
    '-A ISTIO_OUTPUT -d 127.0.0.1/32 -j RETURN',
    '-A ISTIO_OUTPUT -j ISTIO_REDIRECT',
    `-A ISTIO_REDIRECT -p tcp -j REDIRECT --to-ports ${toPort}`,
  ];
}

export function installNat(ipt: Iptables, ns: string, rules: string[]): void {
  for (const rule of rules) ipt.exec(ns, ['-t', 'nat', ...rule.split(' ')]);
}

/** Empties the nat table of `ns` (rules, then our chains): back to an unmeshed pod. */
export function flushNat(ipt: Iptables, ns: string): void {
  ipt.exec(ns, ['-t', 'nat', '-F']);
  ipt.exec(ns, ['-t', 'nat', '-X']);
}

export function natRules(ipt: Iptables, ns: string): string[] {
  return ipt.exec(ns, ['-t', 'nat', '-S']).trim().split('\n');
}

/** Counting chain in the remote netns: every TCP packet that arrives jumps to it, so its counter is "what left the pod". */
const SEEN = 'MG_SEEN';

export function installRemoteFilter(ipt: Iptables, ns: string, dropAddress: string): void {
  ipt.exec(ns, ['-N', SEEN]);
  ipt.exec(ns, ['-A', 'INPUT', '-p', 'tcp', '-j', SEEN]);
  // Stands in for "dropped somewhere": a bogon filter or a firewall that silently discards the SYN.
  ipt.exec(ns, ['-A', 'INPUT', '-d', `${dropAddress}/32`, '-p', 'tcp', '-j', 'DROP']);
}

export function resetRemoteCounters(ipt: Iptables, ns: string): void {
  ipt.exec(ns, ['-Z', 'INPUT']);
}

/** TCP packets that reached the remote netns since the last reset. */
export function remoteTcpPackets(ipt: Iptables, ns: string): number {
  const line = ipt.exec(ns, ['-S', 'INPUT', '-v']).split('\n').find((l) => l.includes(`-j ${SEEN}`));
  const m = /-c (\d+) \d+/.exec(line ?? '');
  if (!m) throw new Error(`no counter for ${SEEN} in the remote netns INPUT chain: ${line}`);
  return Number(m[1]);
}
