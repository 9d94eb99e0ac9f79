/**
 * iptables inside the test's namespaces: picks a working backend (nft first, legacy as fallback), loads rule sets with
 * iptables-restore as istio-iptables does, and reads packet counters that prove what did or did not leave the pod.
 */
import { run } from './netns.ts';

export interface Iptables {
  /** "iptables" or "iptables-legacy". */
  readonly bin: string;
  /** e.g. "iptables v1.8.9 (nf_tables)". */
  readonly version: string;
  /** Runs the family's iptables (ip6tables for 6) inside `ns`. */
  exec(ns: string, args: string[], family?: 4 | 6): string;
  /** Feeds `text` to the family's iptables-restore inside `ns`, without flushing other tables. */
  restore(ns: string, text: string, family?: 4 | 6): void;
}

/**
 * Tries each binary on the nat table of `ns` (the kernel must support that backend's NAT); first one that works.
 * MESHGATE_TEST_IPTABLES=iptables-legacy forces one, to check both backends on a machine that has both.
 */
export function pickIptables(ns: string, forced = process.env.MESHGATE_TEST_IPTABLES): Iptables {
  const errors: string[] = [];
  for (const bin of forced ? [forced] : ['iptables', 'iptables-legacy']) {
    const legacy = bin.endsWith('-legacy');
    const name = (family: 4 | 6, tool = '') =>
      `${family === 6 ? 'ip6tables' : 'iptables'}${legacy ? '-legacy' : ''}${tool}`;
    try {
      run('ip', ['netns', 'exec', ns, bin, '-t', 'nat', '-S']);
      const version = run(bin, ['--version']).trim();
      return {
        bin,
        version,
        exec: (n, args, family = 4) => run('ip', ['netns', 'exec', n, name(family), ...args]),
        restore: (n, text, family = 4) =>
          void run('ip', ['netns', 'exec', n, name(family, '-restore'), '--noflush'], text),
      };
    } catch (err) {
      errors.push((err as Error).message);
    }
  }
  throw new Error(`no usable iptables inside a network namespace:\n${errors.join('\n')}`);
}

/**
 * Loads a nat rule set given as the `-N`/`-A` lines istio-iptables feeds to iptables-restore, then checks that every
 * appended rule is really there (the count per chain), so a silently ignored rule cannot make a test pass.
 */
export function installNat(ipt: Iptables, ns: string, rules: readonly string[], family: 4 | 6 = 4): void {
  ipt.restore(ns, `*nat\n${rules.join('\n')}\nCOMMIT\n`, family);
  const installed = ipt.exec(ns, ['-t', 'nat', '-S'], family).split('\n');
  for (const chain of new Set(rules.filter((r) => r.startsWith('-A ')).map((r) => r.split(' ')[1]))) {
    const want = rules.filter((r) => r.startsWith(`-A ${chain} `)).length;
    const got = installed.filter((r) => r.startsWith(`-A ${chain} `)).length;
    if (got !== want)
      throw new Error(`${chain} in ${ns} has ${got} rules after restore, expected ${want}:\n${installed.join('\n')}`);
  }
}

/** Empties the nat table of `ns` (rules, then user chains): back to an unmeshed pod. */
export function flushNat(ipt: Iptables, ns: string, family: 4 | 6 = 4): void {
  ipt.exec(ns, ['-t', 'nat', '-F'], family);
  ipt.exec(ns, ['-t', 'nat', '-X'], family);
}

/** Counting chain: every TCP packet that passes the rule jumps to it, so its counter is "how many got here". */
const SEEN = 'MG_SEEN';

/** In the remote netns: count arriving TCP, and drop what is addressed to `dropAddress` (a bogon filter's silence). */
export function installRemoteFilter(ipt: Iptables, ns: string, dropAddress: string, family: 4 | 6 = 4): void {
  ipt.exec(ns, ['-N', SEEN], family);
  ipt.exec(ns, ['-A', 'INPUT', '-p', 'tcp', '-j', SEEN], family);
  ipt.exec(ns, ['-A', 'INPUT', '-d', dropAddress, '-p', 'tcp', '-j', 'DROP'], family);
}

/**
 * In the pod netns: count TCP leaving through any interface but lo, after NAT (mangle POSTROUTING). Used where the
 * interface's own transmit counter also sees IPv6 neighbour discovery, which is the kernel's, not the probe's.
 */
export function installPodEgressCounter(ipt: Iptables, ns: string, family: 4 | 6): void {
  ipt.exec(ns, ['-t', 'mangle', '-N', SEEN], family);
  ipt.exec(ns, ['-t', 'mangle', '-A', 'POSTROUTING', '!', '-o', 'lo', '-p', 'tcp', '-j', SEEN], family);
}

/** TCP packets counted by the MG_SEEN jump in `chain` of `table` since the last reset. */
export function seenTcp(
  ipt: Iptables,
  ns: string,
  opts: { table: 'filter' | 'mangle'; chain: string; family?: 4 | 6 },
): number {
  const family = opts.family ?? 4;
  const line = ipt
    .exec(ns, ['-t', opts.table, '-S', opts.chain, '-v'], family)
    .split('\n')
    .find((l) => l.includes(`-j ${SEEN}`));
  const m = /-c (\d+) \d+/.exec(line ?? '');
  if (!m) throw new Error(`no counter for ${SEEN} in ${opts.table} ${opts.chain} of ${ns}: ${line}`);
  return Number(m[1]);
}

/** TCP packets that reached the remote netns since the last reset. */
export function remoteTcpPackets(ipt: Iptables, ns: string, family: 4 | 6 = 4): number {
  return seenTcp(ipt, ns, { table: 'filter', chain: 'INPUT', family });
}

export function resetCounters(ipt: Iptables, ns: string, table: 'filter' | 'mangle', family: 4 | 6 = 4): void {
  ipt.exec(ns, ['-t', table, '-Z'], family);
}
