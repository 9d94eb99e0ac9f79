/**
 * Issue 21 §4: every limit is checked before the work it bounds, and refuses with `too_large` and a message naming
 * where. Each row is a pod both webhooks (decide, checkPosture) must refuse so; the pods at each bound must not be.
 */
import { describe, expect, it } from 'vitest';
import { decide } from '../../src/policy/mutate/decide.ts';
import type { MeshName } from '../../src/mesh/types.ts';
import type { Container, EnvVar, Pod } from '../../src/contract/pod.ts';
import {
  MAX_ANNOTATION_VALUE,
  MAX_CAPABILITIES,
  MAX_MESH_ARGS,
  MAX_MESH_ENV,
  MAX_MESH_LIST,
  MAX_MESH_TEXT,
} from '../../src/policy/limits.ts';
import { checkPosture } from '../../src/policy/posture.ts';
import { MAX_LIST_ENTRIES } from '../../src/util/values.ts';
import { cfg, input, istio, istioPod, linkerd, linkerdPod, pod, verified } from './mutate/fixtures.ts';

const T = 'traffic.sidecar.istio.io';
const cidrs = (n: number) => Array.from({ length: n }, (_, i) => `10.0.${i >> 8}.${i & 255}/32`).join(',');
const ports = (n: number) => Array.from({ length: n }, (_, i) => `${i + 1}`).join(',');
const annotated = (mesh: MeshName, a: Record<string, string>): Pod =>
  mesh === 'istio' ? istioPod({}, a) : mesh === 'linkerd' ? linkerdPod({}, a) : pod({}, { name: 'w', annotations: a });
const withIstioInit = (over: Partial<Container>): Pod => istioPod({ initContainers: [istio.init(over)] });
const istioArgs = (...extra: string[]) => [...istio.init().args!, ...extra];
const linkerdArgs = (...extra: string[]) => [...linkerd.init().args!, ...extra];
const env = (n: number): EnvVar[] => Array.from({ length: n }, (_, i) => ({ name: `V${i}`, value: 'x' }));
const over = MAX_LIST_ENTRIES + 1;

/** [case, mesh, pod, message] */
const refused: Array<[string, MeshName, Pod, RegExp]> = [
  [
    `a ${over}-entry excludeOutboundIPRanges (Istio)`,
    'istio',
    annotated('istio', { [`${T}/excludeOutboundIPRanges`]: cidrs(over) }),
    new RegExp(
      `^annotation ${T}/excludeOutboundIPRanges: ${over} comma-separated entries; meshgate reads at most 256 in one list$`,
    ),
  ],
  [
    `a ${over}-entry excludeInboundPorts (Istio)`,
    'istio',
    annotated('istio', { [`${T}/excludeInboundPorts`]: ports(over) }),
    /^annotation traffic\.sidecar\.istio\.io\/excludeInboundPorts: 257 comma-separated entries/,
  ],
  [
    `a ${over}-entry skip-subnets (Linkerd)`,
    'linkerd',
    annotated('linkerd', { 'config.linkerd.io/skip-subnets': cidrs(over) }),
    /^annotation config\.linkerd\.io\/skip-subnets: 257 comma-separated entries/,
  ],
  [
    `a ${over}-entry exclude-outbound-ports (meshgate)`,
    'custom',
    annotated('custom', { 'meshgate.io/exclude-outbound-ports': ports(over) }),
    /^annotation meshgate\.io\/exclude-outbound-ports: 257 comma-separated entries/,
  ],
  [
    'an annotation a mesh reads, one character too long (Istio includeOutboundIPRanges)',
    'istio',
    annotated('istio', { [`${T}/includeOutboundIPRanges`]: `${' '.repeat(MAX_ANNOTATION_VALUE)}*` }),
    /^annotation traffic\.sidecar\.istio\.io\/includeOutboundIPRanges holds 16385 characters; meshgate reads at most 16384 of an annotation it parses$/,
  ],
  [
    'a 0.9 MB excludeOutboundIPRanges (Istio): the value, before its entries',
    'istio',
    annotated('istio', { [`${T}/excludeOutboundIPRanges`]: cidrs(60_000) }),
    /^annotation traffic\.sidecar\.istio\.io\/excludeOutboundIPRanges holds \d+ characters/,
  ],
  [
    'a huge sidecar.istio.io/status (Istio), which meshgate would parse and write back',
    'istio',
    annotated('istio', {
      'sidecar.istio.io/status': JSON.stringify({ initContainers: Array(5000).fill('istio-init'), containers: [] }),
    }),
    /^annotation sidecar\.istio\.io\/status holds \d+ characters/,
  ],
  [
    'a huge meshgate.io/status (Linkerd: under every profile)',
    'linkerd',
    annotated('linkerd', { 'meshgate.io/status': JSON.stringify({ version: 1, names: Array(5000).fill('x') }) }),
    /^annotation meshgate\.io\/status holds \d+ characters/,
  ],
  [
    'a long sidecar.istio.io/inject (Istio): bounded before the opt-out switch is read',
    'istio',
    annotated('istio', { 'sidecar.istio.io/inject': 'n'.repeat(MAX_ANNOTATION_VALUE + 1) }),
    /^annotation sidecar\.istio\.io\/inject holds 16385 characters/,
  ],
  [
    `an app container adding ${MAX_CAPABILITIES + 1} capabilities`,
    'istio',
    istioPod({
      containers: [
        {
          name: 'app',
          image: 'nginx',
          securityContext: { capabilities: { add: Array(MAX_CAPABILITIES + 1).fill('CHOWN') } },
        },
        istio.proxy(),
      ],
    }),
    /^container app adds 129 capabilities; meshgate reads at most 128 \(Linux has 41\)$/,
  ],
  // Issue 33 §7: every list of a mesh container that its contract walks.
  [
    `istio-proxy with ${MAX_MESH_LIST + 1} volume mounts`,
    'istio',
    istioPod({
      volumes: [{ name: 'data', emptyDir: {} }],
      containers: [
        { name: 'app', image: 'nginx' },
        istio.proxy({
          volumeMounts: Array.from({ length: MAX_MESH_LIST + 1 }, (_, i) => ({ name: 'data', mountPath: `/d/${i}` })),
        } as Partial<Container>),
      ],
    }),
    /^container istio-proxy has 257 volume mounts; meshgate reads at most 256 for the mesh's own containers$/,
  ],
  [
    'linkerd-proxy with 60,000 ports',
    'linkerd',
    linkerdPod({
      containers: [
        { name: 'app', image: 'nginx' },
        linkerd.proxy({ ports: Array.from({ length: 60_000 }, (_, i) => ({ containerPort: (i % 65535) + 1 })) }),
      ],
    }),
    /^container linkerd-proxy has 60000 ports; meshgate reads at most 256/,
  ],
  [
    `istio-init dropping ${MAX_CAPABILITIES + 1} capabilities`,
    'istio',
    withIstioInit({
      securityContext: {
        ...istio.init().securityContext,
        capabilities: { drop: Array(MAX_CAPABILITIES + 1).fill('ALL') },
      },
    }),
    /^init container istio-init drops 129 capabilities; meshgate reads at most 128/,
  ],
  [
    `istio-init -x of ${over} CIDRs`,
    'istio',
    withIstioInit({ args: istioArgs('-x', cidrs(over)) }),
    /^istio-init -x \(--istio-service-exclude-cidr\): 257 comma-separated entries; meshgate reads at most 256 in one list$/,
  ],
  [
    'istio-init -x of 60,000 CIDRs (the issue): its text, before its entries',
    'istio',
    withIstioInit({ args: istioArgs('-x', cidrs(60_000)) }),
    /^init container istio-init's arguments and environment values hold \d+ characters; meshgate reads at most 65536 for the mesh's own containers$/,
  ],
  [
    `istio-init with ${MAX_MESH_ARGS + 1} arguments`,
    'istio',
    withIstioInit({ args: istioArgs(...Array(MAX_MESH_ARGS + 1 - istioArgs().length).fill('-n')) }),
    /^init container istio-init has 257 arguments; meshgate reads at most 256 for the mesh's own containers$/,
  ],
  [
    `istio-init with ${MAX_MESH_ENV + 1} environment variables`,
    'istio',
    withIstioInit({ env: env(MAX_MESH_ENV + 1) }),
    /^init container istio-init has 257 environment variables; meshgate reads at most 256/,
  ],
  [
    'istio-init with a long environment value',
    'istio',
    withIstioInit({ env: [{ name: 'ISTIO_SERVICE_CIDR', value: 'x'.repeat(MAX_MESH_TEXT) }] }),
    /^init container istio-init's arguments and environment values hold \d+ characters/,
  ],
  [
    'istio-validation with too many arguments (the validator is read too)',
    'istio',
    istioPod({ initContainers: [istio.validation({ args: Array(MAX_MESH_ARGS + 1).fill('-n') })] }),
    /^init container istio-validation has 257 arguments/,
  ],
  [
    'linkerd-init with 60,000 × --subnets-to-ignore',
    'linkerd',
    linkerdPod({
      initContainers: [
        linkerd.init({
          args: linkerdArgs(
            ...Array.from({ length: 60_000 }, (_, i) => `--subnets-to-ignore=10.0.${i >> 8}.${i & 255}/32`),
          ),
        }),
      ],
    }),
    /^init container linkerd-init has 60015 arguments; meshgate reads at most 256/,
  ],
  [
    `linkerd-init with ${over} subnets over 100 occurrences (one list, bounded as it is read)`,
    'linkerd',
    linkerdPod({
      initContainers: [
        linkerd.init({
          args: linkerdArgs(
            ...Array.from(
              { length: 100 },
              (_, i) =>
                `--subnets-to-ignore=${cidrs(over)
                  .split(',')
                  .slice(i * 3, i * 3 + 3)
                  .join(',')}`,
            ),
            `--subnets-to-ignore=${cidrs(over).split(',').slice(300).join(',')}`,
          ),
        }),
      ],
    }),
    /^linkerd-init --subnets-to-ignore: \d+ comma-separated entries; meshgate reads at most 256 in one list$/,
  ],
];

describe('too large to read: refused with too_large, naming where', () => {
  it.each(refused)('%s', (_n, mesh, p, message) => {
    const posture = checkPosture(input(p), verified, cfg(mesh));
    expect(posture).toMatchObject({ ok: false, reason: 'too_large' });
    expect(!posture.ok && posture.message).toMatch(message);
    const d = decide(input(p), verified, cfg(mesh));
    expect(d).toMatchObject({ kind: 'deny', reason: 'too_large' });
    expect(d.kind === 'deny' && d.message).toMatch(message);
  });
});

describe('at each bound: read and judged as usual', () => {
  const atBound: Array<[string, MeshName, Pod]> = [
    [
      `${MAX_LIST_ENTRIES} excluded /32s (Istio)`,
      'istio',
      annotated('istio', { [`${T}/excludeOutboundIPRanges`]: cidrs(MAX_LIST_ENTRIES) }),
    ],
    [
      `an includeOutboundIPRanges of ${MAX_ANNOTATION_VALUE} characters that reads as "*"`,
      'istio',
      annotated('istio', { [`${T}/includeOutboundIPRanges`]: `${' '.repeat(MAX_ANNOTATION_VALUE - 1)}*` }),
    ],
    [
      `istio-init with ${MAX_MESH_ARGS} arguments`,
      'istio',
      withIstioInit({
        args: istioArgs(...Array(MAX_MESH_ARGS - istioArgs().length).fill('--log_output_level=default:info')),
      }),
    ],
    [`istio-init with ${MAX_MESH_ENV} environment variables`, 'istio', withIstioInit({ env: env(MAX_MESH_ENV) })],
    [
      `istio-proxy with ${MAX_MESH_LIST} volume mounts (user mounts at fresh paths)`,
      'istio',
      istioPod({
        volumes: [{ name: 'data', emptyDir: {} }],
        containers: [
          { name: 'app', image: 'nginx' },
          istio.proxy({
            volumeMounts: Array.from({ length: MAX_MESH_LIST }, (_, i) => ({ name: 'data', mountPath: `/d/${i}` })),
          } as Partial<Container>),
        ],
      }),
    ],

    [
      `an app container adding ${MAX_CAPABILITIES} capabilities (none that rewrite the network)`,
      'istio',
      istioPod({
        containers: [
          {
            name: 'app',
            image: 'nginx',
            securityContext: { capabilities: { add: Array(MAX_CAPABILITIES).fill('CHOWN') } },
          },
          istio.proxy(),
        ],
      }),
    ],
    [
      `linkerd-init ignoring ${MAX_LIST_ENTRIES} subnets over two occurrences`,
      'linkerd',
      linkerdPod({
        initContainers: [
          linkerd.init({
            args: linkerdArgs(
              `--subnets-to-ignore=${cidrs(MAX_LIST_ENTRIES).split(',').slice(0, 100).join(',')}`,
              `--subnets-to-ignore=${cidrs(MAX_LIST_ENTRIES).split(',').slice(100).join(',')}`,
            ),
          }),
        ],
      }),
    ],
  ];
  it.each(atBound)('%s', (_n, mesh, p) => {
    expect(checkPosture(input(p), verified, cfg(mesh))).toMatchObject({ ok: true });
    expect(decide(input(p), verified, cfg(mesh)).kind).toBe('patch');
  });
});
