/**
 * Crafted reviews for part 2 (issue 21 §4): pods a hostile or careless author can write that the apiserver still
 * passes to meshgate (a mutating webhook sees a pod before the apiserver validates or stores it, so anything under
 * the apiserver's 3 MiB request limit arrives), each aimed at one parser or loop of the admission path. One 0.9 MB
 * review (a 60,000-CIDR `-x` list on an istio-init) took 22.9 s of CPU in the issue (13 s on this machine kind)
 * before the parsers were made linear and bounded. Built here, programmatically, never checked in: 0.6-1.5 MB of
 * JSON each, the size of the issue's.
 */
import type { MeshName } from '../src/mesh/types.ts';
import type { Container, Pod } from '../src/contract/pod.ts';
import { istio, istioPod, linkerd, linkerdPod, pod } from '../test/policy/mutate/fixtures.ts';
import { testConfig } from '../test/support/config.ts';

export interface CraftedReview {
  name: string;
  mesh: MeshName;
  /** The AdmissionReview body as the apiserver would send it (a pod CREATE, or an UPDATE with its old pod). */
  review: Record<string, unknown>;
}

/** CPU ms of one webhook's review (bench/crafted-tree.ts), and what it decided. */
export interface CraftedTiming {
  decision: string;
  handlerMs: number;
  reviewMs: number;
  answerBytes: number;
}

export interface CraftedRow {
  name: string;
  mesh: string;
  requestKiB: number;
  /** Absent for an UPDATE, which only the validating webhook sees. */
  mutate?: CraftedTiming;
  validate: CraftedTiming;
}

const CIDRS = 60_000;

/** `n` distinct /32s (10.x.y.z), ~15 bytes each: 60,000 of them make the 0.9 MB list. */
function cidrs(n = CIDRS): string[] {
  return Array.from({ length: n }, (_, i) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}/32`);
}

/** `n` one-port ranges `a-a`, distinct. */
function portRanges(n: number): string {
  return Array.from({ length: n }, (_, i) => `${(i % 65535) + 1}-${(i % 65535) + 1}`).join(',');
}

/** istiod 1.27's istio-init arguments with `extra` appended. */
function istioInitArgs(extra: string[]): string[] {
  return [...(istio.init().args ?? []), ...extra];
}

function review(p: Pod, old?: Pod): Record<string, unknown> {
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: 'crafted',
      kind: { group: '', version: 'v1', kind: 'Pod' },
      resource: { group: '', version: 'v1', resource: 'pods' },
      name: p.metadata?.name,
      namespace: 'demo',
      operation: old ? 'UPDATE' : 'CREATE',
      userInfo: { username: 'system:serviceaccount:kube-system:replicaset-controller' },
      object: p,
      ...(old ? { oldObject: old } : {}),
    },
  };
}

const withInit = (init: Container): Pod => istioPod({ initContainers: [init] });

/** The review: one `-x` holding 60,000 CIDRs on an istio-init. */
function istioInitOneList(): Pod {
  return withInit(istio.init({ args: istioInitArgs(['-x', cidrs().join(',')]) }));
}

function crafted(): CraftedReview[] {
  const many = cidrs();
  const big = many.join(',');
  const T = 'traffic.sidecar.istio.io';
  const out: CraftedReview[] = [
    { name: 'istio-init: one -x of 60,000 CIDRs (the issue)', mesh: 'istio', review: review(istioInitOneList()) },
    {
      name: 'istio-init: 60,000 × -x CIDR',
      mesh: 'istio',
      review: review(withInit(istio.init({ args: istioInitArgs(many.flatMap((c) => ['-x', c])) }))),
    },
    {
      name: 'istio-init: -o of 100,000 port ranges',
      mesh: 'istio',
      review: review(withInit(istio.init({ args: istioInitArgs(['-o', portRanges(100_000)]) }))),
    },
    {
      name: 'istio-init: 40,000 env vars',
      mesh: 'istio',
      review: review(
        withInit(istio.init({ env: Array.from({ length: 40_000 }, (_, i) => ({ name: `VAR_${i}`, value: `v${i}` })) })),
      ),
    },
    {
      name: 'istio-init: 60,000 unknown flags',
      mesh: 'istio',
      review: review(withInit(istio.init({ args: istioInitArgs(many.map((_, i) => `--no-such-flag-${i}`)) }))),
    },
    {
      name: 'istio-proxy: 40,000 env vars',
      mesh: 'istio',
      review: review(
        istioPod({
          containers: [
            { name: 'app', image: 'nginx' },
            istio.proxy({ env: Array.from({ length: 40_000 }, (_, i) => ({ name: `VAR_${i}`, value: `v${i}` })) }),
          ],
        }),
      ),
    },
    {
      name: `annotation ${T}/excludeOutboundIPRanges: 60,000 CIDRs`,
      mesh: 'istio',
      review: review(istioPod({}, { [`${T}/excludeOutboundIPRanges`]: big })),
    },
    {
      name: `annotation ${T}/excludeInboundPorts: 100,000 ranges`,
      mesh: 'istio',
      review: review(istioPod({}, { [`${T}/excludeInboundPorts`]: portRanges(100_000) })),
    },
    {
      name: `annotation ${T}/includeOutboundIPRanges: 0.9 MB`,
      mesh: 'istio',
      review: review(istioPod({}, { [`${T}/includeOutboundIPRanges`]: big })),
    },
    {
      name: 'annotation sidecar.istio.io/status: 80,000 init container names',
      mesh: 'istio',
      review: review(
        istioPod(
          {},
          {
            'sidecar.istio.io/status': JSON.stringify({
              initContainers: Array.from({ length: 80_000 }, (_, i) => (i === 0 ? 'istio-init' : `init-${i}`)),
              containers: ['istio-proxy'],
            }),
          },
        ),
      ),
    },
    {
      name: 'annotation meshgate.io/status: 40,000 names, 4,000 containers',
      mesh: 'istio',
      review: review(
        istioPod(
          {
            initContainers: [istio.validation()],
            containers: [
              istio.proxy(),
              ...Array.from({ length: 4_000 }, (_, i) => ({ name: `app-${i}`, image: 'nginx' })),
            ],
          },
          {
            'meshgate.io/status': JSON.stringify({
              version: 1,
              mode: 'cni',
              reason: 'node_verified',
              initContainers: Array.from({ length: 40_000 }, (_, i) => `app-${i % 4_000}`),
              containers: [],
            }),
          },
        ),
      ),
    },
    {
      name: '30,000 annotations',
      mesh: 'istio',
      review: review(
        istioPod({}, Object.fromEntries(Array.from({ length: 30_000 }, (_, i) => [`example.com/a-${i}`, `${i}`]))),
      ),
    },
    {
      name: '20,000 containers lacking the token mount',
      mesh: 'istio',
      review: review(
        istioPod({
          volumes: [{ name: 'kube-api-access-abcde' }],
          containers: [
            {
              name: 'app',
              image: 'nginx',
              volumeMounts: [
                {
                  name: 'kube-api-access-abcde',
                  readOnly: true,
                  mountPath: '/var/run/secrets/kubernetes.io/serviceaccount',
                },
              ],
            } as Container,
            istio.proxy(),
            ...Array.from({ length: 20_000 }, (_, i) => ({ name: `c${i}`, image: 'nginx' })),
          ],
        }),
      ),
    },
    {
      name: 'app container adding 100,000 capabilities',
      mesh: 'istio',
      review: review(
        istioPod({
          containers: [
            {
              name: 'app',
              image: 'nginx',
              securityContext: {
                capabilities: { add: Array.from({ length: 100_000 }, (_, i) => `CAP_X${i}`) },
              },
            },
            istio.proxy(),
          ],
        }),
      ),
    },
    {
      name: 'UPDATE of the issue pod (both objects)',
      mesh: 'istio',
      review: review(istioInitOneList(), istioInitOneList()),
    },
    {
      name: 'linkerd-init: 30,000 × --subnets-to-ignore',
      mesh: 'linkerd',
      review: review(
        linkerdPod({
          initContainers: [
            linkerd.init({
              args: [
                ...(linkerd.init().args ?? []),
                ...many.slice(0, 30_000).flatMap((c) => ['--subnets-to-ignore', c]),
              ],
            }),
          ],
        }),
      ),
    },
    {
      name: 'linkerd-init: one --subnets-to-ignore of 60,000 CIDRs',
      mesh: 'linkerd',
      review: review(
        linkerdPod({
          initContainers: [linkerd.init({ args: [...(linkerd.init().args ?? []), '--subnets-to-ignore', big] })],
        }),
      ),
    },
    {
      name: 'annotation config.linkerd.io/skip-subnets: 60,000 CIDRs',
      mesh: 'linkerd',
      review: review(linkerdPod({}, { 'config.linkerd.io/skip-subnets': big })),
    },
    {
      name: 'meshgate-init: env MESHGATE_EXCLUDE_OUTBOUND_CIDRS of 60,000 CIDRs',
      mesh: 'custom',
      review: review(
        pod({
          initContainers: [
            {
              ...(structuredClone(testConfig('custom').own?.init) as Container),
              env: [
                { name: 'MESHGATE_EXCLUDE_OUTBOUND_CIDRS', value: big },
                { name: 'MESHGATE_EXCLUDE_OUTBOUND_PORTS', value: '' },
                { name: 'MESHGATE_EXCLUDE_INBOUND_PORTS', value: '' },
              ],
            },
          ],
        }),
      ),
    },
    {
      name: '64 node-selector terms × 300 expressions',
      mesh: 'istio',
      review: review(
        istioPod({
          affinity: {
            nodeAffinity: {
              requiredDuringSchedulingIgnoredDuringExecution: {
                nodeSelectorTerms: Array.from({ length: 64 }, () => ({
                  matchExpressions: Array.from({ length: 300 }, (_, i) => ({
                    key: `k${i}`,
                    operator: 'In',
                    values: ['v'],
                  })),
                })),
              },
            },
          },
        }),
      ),
    },
    // Issue 33 §7: every list of a mesh container, and the pod-level lists the mesh rules read.
    {
      name: 'istio-proxy: 60,000 volumeMounts of one pod volume (the issue)',
      mesh: 'istio',
      review: review(
        istioPod({
          volumes: [{ name: 'data', emptyDir: {} }],
          containers: [
            { name: 'app', image: 'nginx' },
            istio.proxy({
              volumeMounts: Array.from({ length: 60_000 }, (_, i) => ({ name: 'data', mountPath: `/d/${i}` })),
            }),
          ],
        }),
      ),
    },
    {
      name: 'linkerd-proxy: 60,000 volumeMounts',
      mesh: 'linkerd',
      review: review(
        linkerdPod({
          volumes: [{ name: 'data', emptyDir: {} }],
          containers: [
            { name: 'app', image: 'nginx' },
            linkerd.proxy({
              volumeMounts: Array.from({ length: 60_000 }, (_, i) => ({ name: 'data', mountPath: `/d/${i}` })),
            }),
          ],
        }),
      ),
    },
    {
      name: 'istio-proxy: 60,000 ports',
      mesh: 'istio',
      review: review(
        istioPod({
          containers: [
            { name: 'app', image: 'nginx' },
            istio.proxy({ ports: Array.from({ length: 60_000 }, (_, i) => ({ containerPort: (i % 65535) + 1 })) }),
          ],
        }),
      ),
    },
    {
      name: 'app container: 60,000 volumeMounts beside the proxy',
      mesh: 'istio',
      review: review(
        istioPod({
          volumes: [{ name: 'data', emptyDir: {} }],
          containers: [
            {
              name: 'app',
              image: 'nginx',
              volumeMounts: Array.from({ length: 60_000 }, (_, i) => ({ name: 'data', mountPath: `/d/${i}` })),
            } as Container,
            istio.proxy(),
          ],
        }),
      ),
    },
    {
      name: '40,000 pod volumes beside the proxy',
      mesh: 'istio',
      review: review(
        istioPod({ volumes: Array.from({ length: 40_000 }, (_, i) => ({ name: `v${i}`, emptyDir: {} })) }),
      ),
    },
    {
      name: '60,000 hostAliases',
      mesh: 'istio',
      review: review(
        istioPod({
          hostAliases: Array.from({ length: 60_000 }, (_, i) => ({ ip: '10.0.0.1', hostnames: [`h${i}.example`] })),
        } as Partial<Pod['spec']>),
      ),
    },
    {
      name: '60,000 sysctls',
      mesh: 'istio',
      review: review(
        istioPod({
          securityContext: {
            sysctls: Array.from({ length: 60_000 }, (_, i) => ({ name: `net.ipv4.x${i}`, value: '1' })),
          },
        } as Partial<Pod['spec']>),
      ),
    },
    {
      name: 'annotation meshgate.io/exclude-outbound-cidrs: 60,000 CIDRs',
      mesh: 'custom',
      review: review(
        pod({}, { name: 'web', namespace: 'demo', annotations: { 'meshgate.io/exclude-outbound-cidrs': big } }),
      ),
    },
  ];
  return out;
}

/** Built on first use: the reviews take ~1 s to build together. */
let built: CraftedReview[] | undefined;
export function craftedReviews(): CraftedReview[] {
  built ??= crafted();
  return built;
}
