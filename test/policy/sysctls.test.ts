/**
 * Issue 33 §7: pod sysctls in the kubelet's safe set that stop the redirect validator's probe (it could not listen on
 * the proxy ports, or its connect() finds no ephemeral port) are refused (probe_sysctl); values that leave the probe
 * its ports, and the istio/gateway chart's `ip_unprivileged_port_start: 0`, are not.
 */
import { describe, expect, it } from 'vitest';
import { checkPosture } from '../../src/policy/posture.ts';
import { decide } from '../../src/policy/mutate/decide.ts';
import { probeSysctlProblem, validatorPorts } from '../../src/policy/sysctls.ts';
import type { Pod } from '../../src/contract/pod.ts';
import type { MeshName } from '../../src/mesh/types.ts';
import { cfg, input, istioPod, linkerdPod, pod, verified } from './mutate/fixtures.ts';

const withSysctls = (p: Pod, sysctls: Array<[string, string]>): Pod => ({
  ...p,
  spec: { ...p.spec, securityContext: { sysctls: sysctls.map(([name, value]) => ({ name, value })) } },
});

describe('the ports the validator listens on', () => {
  it('are the capture ports, and the probe port of a loopback probe', () => {
    expect(validatorPorts(cfg('istio')).sort()).toEqual([15001, 15002, 15006]);
    expect(validatorPorts(cfg('linkerd')).sort()).toEqual([4140, 4143]);
  });
});

describe('sysctls that break the probe', () => {
  const refused: Array<[string, MeshName, Array<[string, string]>, RegExp]> = [
    [
      'unprivileged ports start above 15001',
      'istio',
      [['net.ipv4.ip_unprivileged_port_start', '65535']],
      /makes port 15001 privileged/,
    ],
    [
      'the same, written with slashes',
      'istio',
      [['net/ipv4/ip_unprivileged_port_start', '20000']],
      /makes port 15001 privileged/,
    ],
    [
      'unprivileged ports start above 4140 (Linkerd)',
      'linkerd',
      [['net.ipv4.ip_unprivileged_port_start', '4141']],
      /makes port 4140 privileged/,
    ],
    [
      'an ephemeral range of only the listening port',
      'istio',
      [['net.ipv4.ip_local_port_range', '15001 15001']],
      /leave no ephemeral port/,
    ],
    [
      'every default ephemeral port reserved',
      'istio',
      [['net.ipv4.ip_local_reserved_ports', '32768-60999']],
      /ip_local_reserved_ports="32768-60999" leave no ephemeral port/,
    ],
    [
      'a narrow range, all of it reserved',
      'custom',
      [
        ['net.ipv4.ip_local_port_range', '40000 40010'],
        ['net.ipv4.ip_local_reserved_ports', '40000-40005,40006,40007-40010'],
      ],
      /ip_local_port_range="40000 40010" and sysctl net\.ipv4\.ip_local_reserved_ports/,
    ],
    ['a range that is not one', 'istio', [['net.ipv4.ip_local_port_range', '9 1']], /is not a range/],
    ['reserved ports meshgate cannot read', 'istio', [['net.ipv4.ip_local_reserved_ports', '1-x']], /not a list/],
    ['non-local binds (an unsafe sysctl)', 'istio', [['net.ipv4.ip_nonlocal_bind', '1']], /not the pod's/],
  ];
  it.each(refused)('%s is refused', (_n, mesh, sysctls, message) => {
    const base = mesh === 'istio' ? istioPod() : mesh === 'linkerd' ? linkerdPod() : pod();
    const p = withSysctls(base, sysctls);
    expect(probeSysctlProblem(p, cfg(mesh))).toMatch(message);
    expect(decide(input(p), verified, cfg(mesh))).toMatchObject({ kind: 'deny', reason: 'probe_sysctl' });
    if (mesh !== 'custom')
      expect(checkPosture(input(p), verified, cfg(mesh))).toMatchObject({ reason: 'probe_sysctl' });
  });

  const allowed: Array<[string, Array<[string, string]>]> = [
    ["the gateway chart's unprivileged port start 0", [['net.ipv4.ip_unprivileged_port_start', '0']]],
    ['unprivileged ports from 1024', [['net.ipv4.ip_unprivileged_port_start', '1024']]],
    ['a wide ephemeral range over the proxy ports', [['net.ipv4.ip_local_port_range', '1024 65535']]],
    ['one free port is enough', [['net.ipv4.ip_local_port_range', '15001 15003']]],
    ['reserving some ports', [['net.ipv4.ip_local_reserved_ports', '40000-40100,50000']]],
    ['no reserved ports', [['net.ipv4.ip_local_reserved_ports', '']]],
    [
      'sysctls the probe does not care about',
      [
        ['net.ipv4.tcp_keepalive_time', '60'],
        ['kernel.shm_rmid_forced', '1'],
      ],
    ],
  ];
  it.each(allowed)('%s is allowed', (_n, sysctls) => {
    const p = withSysctls(istioPod(), sysctls);
    expect(probeSysctlProblem(p, cfg('istio'))).toBeUndefined();
    expect(checkPosture(input(p), verified, cfg('istio'))).toMatchObject({ ok: true });
  });

  it('a huge reserved list is judged in bounded time', () => {
    const items = Array.from({ length: 256 }, (_, i) => `${1024 + i * 200}-${1024 + i * 200 + 150}`).join(',');
    const p = withSysctls(istioPod(), [
      ['net.ipv4.ip_local_port_range', '1024 65535'],
      ['net.ipv4.ip_local_reserved_ports', items],
    ]);
    expect(probeSysctlProblem(p, cfg('istio'))).toBeUndefined();
    const tooMany = withSysctls(istioPod(), [['net.ipv4.ip_local_reserved_ports', `${items},1`]]);
    expect(probeSysctlProblem(tooMany, cfg('istio'))).toMatch(/not a list of ports and ranges meshgate reads/);
  });
});
