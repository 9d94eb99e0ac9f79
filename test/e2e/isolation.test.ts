// Issue 21: nothing a test starts may reach the network. This run itself must be in a namespace of its own (the
// re-exec in vitest.config.ts), and the guard every kube-apiserver start goes through must refuse a namespace with
// a route to the gateway or into a cluster range. The refusals are judged in throwaway namespaces (`unshare --net`,
// gone with their process) holding only lo and a bridge with no port: the guard asks the kernel for routes over
// netlink and nothing here opens a connection, so no packet is sent anywhere.
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { assertNoRouteOut, currentNetns, inOwnNetns, OUTER_NETNS_ENV } from '../support/isolation.ts';
import * as args from './harness/components.ts';

const ISOLATION = new URL('../support/isolation.ts', import.meta.url).href;
const CONTROLPLANE = new URL('./harness/controlplane.ts', import.meta.url).href;

/** A bridge with an address and no port: routes through it exist, but nothing behind it could answer. */
const BRIDGE = ['link add mgi0 type bridge', 'addr add 10.99.0.1/24 dev mgi0', 'link set mgi0 up'];

/**
 * Runs `call` (an expression over the imported module `m`) in a node child inside a new network namespace set up
 * with `ip -batch` commands. Exit 0 and ALLOWED when the call resolved; exit 3 and its message when it threw.
 */
function inNamespace(setup: string[], module: string, call: string) {
  const code = `import(${JSON.stringify(module)}).then(async (m) => { await ${call}; console.log('ALLOWED'); }).catch((e) => { console.error(e.message); process.exit(3); })`;
  const userns = process.getuid?.() === 0 ? [] : ['--user', '--map-root-user'];
  const r = spawnSync(
    'unshare',
    [
      ...userns,
      '--net',
      '--',
      'sh',
      '-c',
      'printf "%s\\n" "$1" | ip -batch - && exec "$0" --input-type=module -e "$2"',
      process.execPath,
      ['link set lo up', ...setup].join('\n'),
      code,
    ],
    { encoding: 'utf8', timeout: 60_000 },
  );
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

const guard = (setup: string[]) =>
  inNamespace(setup, ISOLATION, `m.assertNoRouteOut('test', { cidrs: ${JSON.stringify(args.clusterCidrs())} })`);

describe('network isolation of the test run (issue 21)', () => {
  it('runs every test in a network namespace of its own, with no route out', () => {
    expect(process.env[OUTER_NETNS_ENV], 'vitest.config.ts did not re-execute the run').toMatch(/^net:\[\d+\]$/);
    expect(currentNetns()).not.toBe(process.env[OUTER_NETNS_ENV]);
    expect(inOwnNetns()).toBe(true);
    expect(() => assertNoRouteOut('this run', { cidrs: args.clusterCidrs() })).not.toThrow();
  });

  it('allows a loopback-only namespace, and one with links the test made that route nowhere near the cluster', () => {
    expect(guard([])).toEqual({ status: 0, out: 'ALLOWED\n' });
    expect(guard(BRIDGE)).toEqual({ status: 0, out: 'ALLOWED\n' });
  });

  it('refuses a route to the service range, naming 10.96.0.1', () => {
    const r = guard([...BRIDGE, 'route add 10.96.0.0/16 dev mgi0']);
    expect(r.status, r.out).toBe(3);
    expect(r.out).toContain('refusing to start test');
    expect(r.out).toContain('a route to 10.96.0.1 (`ip route get 10.96.0.1`: 10.96.0.1 dev mgi0');
    expect(r.out).not.toContain('192.0.2.1 (');
  });

  it('refuses a default route, naming the gateway address and the service IP', () => {
    const r = guard([...BRIDGE, 'route add default via 10.99.0.2 dev mgi0']);
    expect(r.status, r.out).toBe(3);
    expect(r.out).toContain('10.96.0.1 (`ip route get 10.96.0.1`: 10.96.0.1 via 10.99.0.2 dev mgi0');
    expect(r.out).toContain('192.0.2.1 (`ip route get 192.0.2.1`: 192.0.2.1 via 10.99.0.2 dev mgi0');
    expect(r.out).toContain('everything (default route: default via 10.99.0.2 dev mgi0)');
  });

  it('refuses a route into part of a cluster range that the first address does not hit', () => {
    const r = guard([...BRIDGE, 'route add 10.244.7.0/24 dev mgi0']);
    expect(r.status, r.out).toBe(3);
    expect(r.out).toContain('a route to 10.244.7.0/24 in cluster CIDR 10.244.0.0/16 (route 10.244.7.0/24 dev mgi0)');
    expect(r.out).not.toContain('ip route get 10.244.0.1');
  });

  it('refuses a route in a table other than main', () => {
    const r = guard([...BRIDGE, 'route add default via 10.99.0.2 dev mgi0 table 7']);
    expect(r.status, r.out).toBe(3);
    expect(r.out).toContain('everything (default route: default via 10.99.0.2 dev mgi0 table 7)');
  });

  it('keeps startControlPlane from starting anything in a namespace with a route to a ClusterIP', () => {
    const r = inNamespace([...BRIDGE, 'route add 10.96.0.0/16 dev mgi0'], CONTROLPLANE, 'm.startControlPlane()');
    expect(r.status, r.out).toBe(3);
    expect(r.out).toMatch(/^refusing to start a kube-apiserver \(test\/e2e\/harness\): .* a route to 10\.96\.0\.1 /);
    expect(r.out).not.toContain('control plane failed to start'); // what any error after the first spawn says
  });

  it('checks the ranges an apiserver flag adds, and rejects a range it cannot read', () => {
    const extra = ['--service-cluster-ip-range=10.97.0.0/16,10.98.0.0/16', '--v=2'];
    expect(args.clusterCidrs(extra)).toEqual(['10.96.0.0/16', '10.244.0.0/16', '10.97.0.0/16', '10.98.0.0/16']);
    const r = inNamespace(
      [...BRIDGE, 'route add 10.98.0.0/24 dev mgi0'],
      CONTROLPLANE,
      `m.startControlPlane({ apiserverArgs: ${JSON.stringify(extra)} })`,
    );
    expect(r.status, r.out).toBe(3);
    expect(r.out).toContain('10.98.0.0/24 in cluster CIDR 10.98.0.0/16');
    expect(() => assertNoRouteOut('test', { cidrs: ['10.96.0.0'] })).toThrow(
      'network isolation: "10.96.0.0" is not an IPv4 CIDR (a.b.c.d/n)',
    );
  });

  it('knows every address range the harness components are started with', () => {
    const layout: args.Layout = {
      dir: '/cp',
      etcdClientPort: 1,
      etcdPeerPort: 2,
      apiserverPort: 3,
      controllerManagerPort: 4,
      schedulerPort: 5,
      kwokPort: 6,
    };
    const argv = [
      ...args.etcdArgs(layout),
      ...args.apiserverArgs(layout, [], {}),
      ...args.controllerManagerArgs(layout),
      ...args.schedulerArgs(layout),
      ...args.kwokArgs(layout, []),
    ];
    const ranges = argv.flatMap((a) => a.match(/\d+\.\d+\.\d+\.\d+\/\d+/g) ?? []);
    expect(ranges.length).toBeGreaterThanOrEqual(3); // service range twice (apiserver, controller-manager), pod CIDR
    expect(args.clusterCidrs()).toEqual(expect.arrayContaining(ranges));
  });
});
