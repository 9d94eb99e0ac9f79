/**
 * istio-iptables' inputs read as Istio 1.27 reads them (tools/istio-iptables/pkg/cmd/root.go, pkg/flag): flags bound
 * with BindEnv also come from NAME_IN_UPPER_CASE, envoy-port (flag.Bind) does not, an AdditionalEnv variable is read
 * after the flag's own and wins, of two variables with one name the kubelet passes the last, and the command line
 * beats them all.
 */
import { describe, expect, it } from 'vitest';
import { readIstioIptables } from '../../src/mesh/istio-iptables.ts';
import type { EnvVar } from '../../src/contract/pod.ts';
import { decide } from '../../src/policy/mutate/decide.ts';
import { cfg, input, istio, istioPod, verified } from '../policy/mutate/fixtures.ts';

const read = (env: EnvVar[], args = ['istio-iptables']) => readIstioIptables(istio.init({ env, args }));

describe('readIstioIptables: flags from the environment', () => {
  const cases: Array<[string, EnvVar[], string[], string, string | undefined]> = [
    [
      'a BindEnv flag from its variable',
      [{ name: 'ISTIO_SERVICE_CIDR', value: '10.0.0.0/8' }],
      [],
      'istio-service-cidr',
      '10.0.0.0/8',
    ],
    ['envoy-port has no variable (flag.Bind)', [{ name: 'ENVOY_PORT', value: '9999' }], [], 'envoy-port', '15001'],
    [
      'of two variables with one name, the last',
      [
        { name: 'PROXY_UID', value: '0' },
        { name: 'PROXY_UID', value: '1337' },
      ],
      [],
      'proxy-uid',
      '1337',
    ],
    [
      'AdditionalEnv wins over the flag’s own variable, wherever it stands',
      [
        { name: 'ISTIO_META_DNS_CAPTURE', value: 'true' },
        { name: 'REDIRECT_DNS', value: 'false' },
      ],
      [],
      'redirect-dns',
      'true',
    ],
    [
      'the command line beats the variable',
      [{ name: 'ISTIO_INBOUND_PORTS', value: '80' }],
      ['-b', '*'],
      'istio-inbound-ports',
      '*',
    ],
    [
      'a variable from valueFrom cannot be read',
      [{ name: 'DRY_RUN', valueFrom: { fieldRef: { fieldPath: 'x' } } } as EnvVar],
      [],
      'dry-run',
      undefined,
    ],
  ];
  it.each(cases)('%s', (_, env, args, flag, want) => {
    expect(read(env, ['istio-iptables', ...args]).get(flag)).toBe(want);
  });

  it('a valueFrom variable is a problem naming the flag', () => {
    const t = read([{ name: 'DRY_RUN', valueFrom: { fieldRef: { fieldPath: 'x' } } } as EnvVar]);
    expect(t.problems).toEqual([
      "dry-run is set from an environment variable's valueFrom, which admission cannot read",
    ]);
  });

  it.each([
    ['1', true],
    ['T', true],
    ['True', true],
    ['yes', false],
    ['0', false],
  ] as const)('boolean variables read by ParseBool: DRY_RUN=%s → %s', (value, want) => {
    expect(read([{ name: 'DRY_RUN', value }]).bool('dry-run')).toBe(want);
  });
});

describe('readIstioIptables: variables istio-iptables reads without a flag (FillConfigFromEnvironment)', () => {
  const cases: Array<[string, EnvVar[], string[], RegExp | undefined]> = [
    [
      'ISTIO_OUTBOUND_OWNER_GROUPS="*" redirects every group',
      [{ name: 'ISTIO_OUTBOUND_OWNER_GROUPS', value: '*' }],
      [],
      undefined,
    ],
    [
      'ISTIO_OUTBOUND_OWNER_GROUPS listing groups narrows the redirect to them',
      [{ name: 'ISTIO_OUTBOUND_OWNER_GROUPS', value: '1000' }],
      [],
      /^env ISTIO_OUTBOUND_OWNER_GROUPS is "1000": only traffic of the groups listed there would be redirected/,
    ],
    [
      'an empty ISTIO_OUTBOUND_OWNER_GROUPS redirects no group',
      [{ name: 'ISTIO_OUTBOUND_OWNER_GROUPS', value: '' }],
      [],
      /^env ISTIO_OUTBOUND_OWNER_GROUPS is "": only traffic/,
    ],
    [
      'ISTIO_OUTBOUND_OWNER_GROUPS_EXCLUDE=0 exempts the root group',
      [{ name: 'ISTIO_OUTBOUND_OWNER_GROUPS_EXCLUDE', value: '0' }],
      [],
      /^env ISTIO_OUTBOUND_OWNER_GROUPS_EXCLUDE is "0": traffic of the groups listed there would bypass the proxy$/,
    ],
    [
      'an empty exclusion list exempts nobody',
      [{ name: 'ISTIO_OUTBOUND_OWNER_GROUPS_EXCLUDE', value: ',' }],
      [],
      undefined,
    ],
    [
      'ENVOY_USER with -u unset: the UID comes from the image',
      [{ name: 'ENVOY_USER', value: 'root' }],
      [],
      /^env ENVOY_USER is "root": with -u unset/,
    ],
    ['ENVOY_USER with -u set: not read', [{ name: 'ENVOY_USER', value: 'root' }], ['-u', '1337'], undefined],
  ];
  it.each(cases)('%s', (_n, env, args, want) => {
    const t = read(env, ['istio-iptables', ...args]);
    if (want === undefined) expect(t.narrowing).toEqual([]);
    else expect(t.narrowing).toEqual([expect.stringMatching(want)]);
  });

  it('istio-init exempting the root group is refused as narrowing the redirect', () => {
    const p = istioPod({
      initContainers: [istio.init({ env: [{ name: 'ISTIO_OUTBOUND_OWNER_GROUPS_EXCLUDE', value: '0' }] })],
    });
    const d = decide(input(p), verified, cfg('istio'));
    expect(d).toMatchObject({ kind: 'deny', reason: 'redirect_narrowed' });
    expect(d.kind === 'deny' && d.message).toMatch(/^istio-init env ISTIO_OUTBOUND_OWNER_GROUPS_EXCLUDE is "0"/);
  });
});
