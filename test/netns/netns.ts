/**
 * Network-namespace plumbing for the redirect tests: a "pod" netns and a "remote" netns joined by a veth pair, both
 * created (and deleted) by the test. Every address used lives only inside these namespaces, so the tests never send
 * a packet to the machine's real networks. Commands run synchronously: they are quick and their order matters.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';

/** Names are mgv-<pid>-<random>-pod|remote: the pid lets a later run delete leftovers of dead runs only. */
const PREFIX = 'mgv-';

export interface Topology {
  readonly pod: string;
  readonly remote: string;
  /** The pod's address on its eth0 (a /30 in 10.244.0.0/16, chosen at random; exists only in the pod netns). */
  readonly podIp: string;
  /** The remote end of the veth, the pod's default gateway. */
  readonly remoteIp: string;
}

/** RFC 5737 TEST-NET-1 address the validator probes by default; the test assigns it to the remote netns only. */
export const TEST_NET_ADDRESS = '192.0.2.1';

export function run(cmd: string, args: string[]): string {
  try {
    return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`${cmd} ${args.join(' ')} failed: ${e.stderr?.trim() || e.message}`);
  }
}

function have(cmd: string): boolean {
  return ['/usr/sbin', '/sbin', '/usr/bin', '/bin'].some((dir) => existsSync(`${dir}/${cmd}`));
}

/** The tests need root, iproute2, iptables and setpriv. Missing any is a failure with a fix, never a skip. */
export function assertPrerequisites(): void {
  const problems: string[] = [];
  if (process.getuid?.() !== 0) problems.push(`not running as root (uid ${process.getuid?.()})`);
  for (const [cmd, pkg] of [['ip', 'iproute2'], ['iptables', 'iptables'], ['setpriv', 'util-linux']]) {
    if (!have(cmd)) problems.push(`\`${cmd}\` is missing (Debian package ${pkg})`);
  }
  if (problems.length > 0) {
    throw new Error(
      `the netns redirect tests cannot run: ${problems.join('; ')}. Run them as root via \`npm test\` ` +
        '(its bootstrap installs iproute2 and iptables with apt-get) or `apt-get install iproute2 iptables util-linux`.',
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

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Creates pod and remote namespaces, the veth pair (created directly inside them: nothing in the host netns). */
export function createTopology(): Topology {
  const base = `${PREFIX}${process.pid}-${randomBytes(3).toString('hex')}`;
  const octet = 1 + randomBytes(1)[0] % 250;
  const t: Topology = { pod: `${base}-pod`, remote: `${base}-remote`, podIp: `10.244.${octet}.1`, remoteIp: `10.244.${octet}.2` };
  run('ip', ['netns', 'add', t.pod]);
  run('ip', ['netns', 'add', t.remote]);
  run('ip', ['link', 'add', 'eth0', 'netns', t.pod, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', t.remote]);
  run('ip', ['-n', t.pod, 'addr', 'add', `${t.podIp}/30`, 'dev', 'eth0']);
  run('ip', ['-n', t.remote, 'addr', 'add', `${t.remoteIp}/30`, 'dev', 'eth0']);
  run('ip', ['-n', t.remote, 'addr', 'add', `${TEST_NET_ADDRESS}/32`, 'dev', 'lo']);
  for (const ns of [t.pod, t.remote]) {
    run('ip', ['-n', ns, 'link', 'set', 'lo', 'up']);
    run('ip', ['-n', ns, 'link', 'set', 'eth0', 'up']);
  }
  setDefaultRoute(t, true);
  return t;
}

/** A pod always has a default route; removing it shows that the probe address must be routable for REDIRECT. */
export function setDefaultRoute(t: Topology, present: boolean): void {
  if (present) run('ip', ['-n', t.pod, 'route', 'replace', 'default', 'via', t.remoteIp]);
  else run('ip', ['-n', t.pod, 'route', 'del', 'default']);
}

/** Deletes what createTopology made; tolerates a half-built topology. */
export function destroyTopology(t: Topology | undefined): void {
  if (!t) return;
  const existing = run('ip', ['netns', 'list']);
  for (const ns of [t.pod, t.remote]) {
    if (existing.split('\n').some((l) => l.split(' ')[0] === ns)) run('ip', ['netns', 'del', ns]);
  }
}
