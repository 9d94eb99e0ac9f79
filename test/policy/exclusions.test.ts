/**
 * Class 4, exclusions that exclude everything: what a pod may exempt from redirection, judged wherever it says so
 * (meshgate's annotations, Istio's and Linkerd's annotations — which their CNI plugins read — and the init
 * container's arguments).
 */
import { describe, expect, it } from 'vitest';
import { checkPosture } from '../../src/policy/posture.ts';
import { decide } from '../../src/policy/mutate/decide.ts';
import { block, coverage } from '../../src/policy/cidr.ts';
import type { MeshName } from '../../src/mesh/types.ts';
import type { Pod } from '../../src/contract/pod.ts';
import { cfg, input, istio, istioPod, linkerd, linkerdPod, pod, verified } from './mutate/fixtures.ts';

const slash1s = '0.0.0.0/1,128.0.0.0/1';
/** 256 /8s without 127/8: everything but the loopback, where Istio's probe lives. */
const all8sButLoopback = Array.from({ length: 256 }, (_, i) => `${i}.0.0.0/8`)
  .filter((c) => !c.startsWith('127.'))
  .join(',');

const ann = (mesh: MeshName, key: string, value: string): Pod => {
  const a = { [key]: value };
  return mesh === 'istio'
    ? istioPod({}, a)
    : mesh === 'linkerd'
      ? linkerdPod({}, a)
      : pod({}, { name: 'w', annotations: a });
};
const T = 'traffic.sidecar.istio.io';

const refused: Array<[string, MeshName, Pod, string, RegExp]> = [
  [
    '0.0.0.0/0,::/0 (meshgate)',
    'custom',
    ann('custom', 'meshgate.io/exclude-outbound-cidrs', '0.0.0.0/0,::/0'),
    'exclusion_refused',
    /cover all of IPv4/,
  ],
  [
    'two /1s (Istio)',
    'istio',
    ann('istio', `${T}/excludeOutboundIPRanges`, slash1s),
    'exclusion_refused',
    /cover all of IPv4/,
  ],
  [
    'every /8 but the loopback (Istio)',
    'istio',
    ann('istio', `${T}/excludeOutboundIPRanges`, all8sButLoopback),
    'exclusion_refused',
    /2\^31\+ addresses of IPv4/,
  ],
  [
    'a range holding the probe 127.0.0.6 (Istio)',
    'istio',
    ann('istio', `${T}/excludeOutboundIPRanges`, '127.0.0.0/16'),
    'exclusion_refused',
    /contains the validator's probe address 127\.0\.0\.6/,
  ],
  [
    '::/1 (Linkerd skip-subnets)',
    'linkerd',
    ann('linkerd', 'config.linkerd.io/skip-subnets', '::/1'),
    'exclusion_refused',
    /IPv6 destinations cover/,
  ],
  [
    "a range holding Linkerd's probe 192.0.2.1",
    'linkerd',
    ann('linkerd', 'config.linkerd.io/skip-subnets', '192.0.2.0/24'),
    'exclusion_refused',
    /probe address 192\.0\.2\.1/,
  ],
  [
    'all outbound ports as a range (Linkerd)',
    'linkerd',
    ann('linkerd', 'config.linkerd.io/skip-outbound-ports', '1-65535'),
    'exclusion_refused',
    /65535 outbound ports are excluded; at most 64/,
  ],
  [
    'outbound ports "*" (Istio)',
    'istio',
    ann('istio', `${T}/excludeOutboundPorts`, '*'),
    'exclusion_refused',
    /65535 outbound ports/,
  ],
  [
    'the probe port (Istio 15002)',
    'istio',
    ann('istio', `${T}/excludeOutboundPorts`, '15002'),
    'exclusion_refused',
    /probe port 15002/,
  ],
  [
    'too many inbound ports (meshgate)',
    'custom',
    ann('custom', 'meshgate.io/exclude-inbound-ports', '1000-2000'),
    'exclusion_refused',
    /1001 inbound ports are excluded; at most 64/,
  ],
  [
    'include only some destinations (Istio)',
    'istio',
    ann('istio', `${T}/includeOutboundIPRanges`, '10.0.0.0/8'),
    'redirect_narrowed',
    /only destinations listed there would be redirected/,
  ],
  [
    'include only some inbound ports (Istio)',
    'istio',
    ann('istio', `${T}/includeInboundPorts`, '8080'),
    'redirect_narrowed',
    /includeInboundPorts is "8080"/,
  ],
  [
    "exclude the pod's interface (Istio)",
    'istio',
    ann('istio', `${T}/excludeInterfaces`, 'eth0'),
    'redirect_narrowed',
    /excludeInterfaces is "eth0"/,
  ],
  [
    'interception mode NONE (Istio)',
    'istio',
    ann('istio', 'sidecar.istio.io/interceptionMode', 'NONE'),
    'interception_none',
    /interceptionMode=NONE: with interception mode NONE no rule sends/,
  ],
  [
    'another exempt UID (Linkerd proxy-uid)',
    'linkerd',
    ann('linkerd', 'config.linkerd.io/proxy-uid', '1000'),
    'redirect_narrowed',
    /exempt UID 1000 instead of the proxy's 2102/,
  ],
  [
    'istio-init -x 0.0.0.0/0',
    'istio',
    istioPod({
      initContainers: [
        istio.init({ args: istio.init().args!.map((a, i, all) => (all[i - 1] === '-x' ? '0.0.0.0/0' : a)) }),
      ],
    }),
    'exclusion_refused',
    /init container istio-init: the excluded IPv4 destinations cover all/,
  ],
  [
    'linkerd-init --subnets-to-ignore 0.0.0.0/0',
    'linkerd',
    linkerdPod({
      initContainers: [linkerd.init({ args: [...linkerd.init().args!, '--subnets-to-ignore', '0.0.0.0/0'] })],
    }),
    'exclusion_refused',
    /init container linkerd-init/,
  ],
  [
    'an unparsable range (Istio)',
    'istio',
    ann('istio', `${T}/excludeOutboundIPRanges`, '10.0.0.0/40'),
    'invalid_annotation',
    /excludeOutboundIPRanges: "10\.0\.0\.0\/40" has an invalid prefix length/,
  ],
];

describe('what a pod may exempt from redirection', () => {
  it.each(refused)('%s is refused', (_n, mesh, p, reason, message) => {
    const r = checkPosture(input(p), verified, cfg(mesh));
    expect(r).toMatchObject({ ok: false, reason });
    expect(!r.ok && r.message).toMatch(message);
    expect(decide(input(p), verified, cfg(mesh))).toMatchObject({ kind: 'deny', reason });
  });

  const allowed: Array<[string, MeshName, Pod]> = [
    ['the cloud metadata address', 'istio', ann('istio', `${T}/excludeOutboundIPRanges`, '169.254.169.254/32')],
    ['one /8 (a private network)', 'custom', ann('custom', 'meshgate.io/exclude-outbound-cidrs', '10.0.0.0/8')],
    ['a database port and SMTP', 'linkerd', ann('linkerd', 'config.linkerd.io/skip-outbound-ports', '5432,25,587')],
    ['include everything explicitly', 'istio', ann('istio', `${T}/includeOutboundIPRanges`, '*')],
    ["Linkerd's own default inbound skips", 'linkerd', linkerdPod()],
  ];
  it.each(allowed)('%s is allowed', (_n, mesh, p) => {
    // Companion pods are judged as the mesh injected them; meshgate's own (custom) are injected first.
    expect(decide(input(p), verified, cfg(mesh)).kind).toBe('patch');
    if (mesh !== 'custom') expect(checkPosture(input(p), verified, cfg(mesh))).toMatchObject({ ok: true });
  });

  it('the coverage limit is configurable (exclusions.outboundCidrCoverage)', () => {
    const p = ann('custom', 'meshgate.io/exclude-outbound-cidrs', '10.0.0.0/8,172.16.0.0/12');
    expect(decide(input(p), verified, cfg())).toMatchObject({ kind: 'deny', reason: 'exclusion_refused' });
    expect(decide(input(p), verified, cfg('custom', { exclusions: { outboundCidrCoverage: 7 } }))).toMatchObject({
      kind: 'patch',
    });
  });
});

describe('address arithmetic', () => {
  it('counts overlapping blocks once, per family', () => {
    const blocks = ['10.0.0.0/8', '10.1.0.0/16', '0.0.0.0/1', '::/1', '8000::/1'].map((c) => block(c)!);
    expect(coverage(blocks, 4)).toBe(1n << 31n);
    expect(coverage(blocks, 6)).toBe(1n << 128n);
    expect(block('10.1.2.3/8')).toEqual({ family: 4, start: 10n << 24n, size: 1n << 24n });
  });
});
