/**
 * Issue 33 §4: the mesh's volumes belong to the mesh (no app, init or ephemeral container may mount a volume the
 * mesh's containers mount as their injector writes them), and no app native sidecar starts before a native-sidecar
 * proxy. The ServiceAccount token volume and the pod's own volumes lent to the proxy are not the mesh's.
 */
import { describe, expect, it } from 'vitest';
import { checkPosture } from '../../src/policy/posture.ts';
import { decide } from '../../src/policy/mutate/decide.ts';
import type { Container, Pod } from '../../src/contract/pod.ts';
import type { MeshName } from '../../src/mesh/types.ts';
import { cfg, input, istio, istioPod, linkerd, linkerdPod, verified } from './mutate/fixtures.ts';

type Mount = { name: string; mountPath: string; readOnly?: boolean };
const TOKEN = {
  name: 'kube-api-access-abcde',
  mountPath: '/var/run/secrets/kubernetes.io/serviceaccount',
  readOnly: true,
};
const TOKEN_VOLUME = {
  name: 'kube-api-access-abcde',
  projected: { sources: [{ serviceAccountToken: { path: 'token' } }] },
};
const ISTIO_VOLUMES = [
  { name: 'istio-envoy', emptyDir: { medium: 'Memory' } },
  { name: 'workload-socket', emptyDir: {} },
  { name: 'istio-data', emptyDir: {} },
  {
    name: 'istio-token',
    projected: { sources: [{ serviceAccountToken: { path: 'istio-token', audience: 'istio-ca' } }] },
  },
  { name: 'certs', secret: { secretName: 'egress-certs' } },
  TOKEN_VOLUME,
];
const ISTIO_MOUNTS: Mount[] = [
  { name: 'istio-envoy', mountPath: '/etc/istio/proxy' },
  { name: 'workload-socket', mountPath: '/var/run/secrets/workload-spiffe-uds' },
  { name: 'istio-data', mountPath: '/var/lib/istio/data' },
  { name: 'istio-token', mountPath: '/var/run/secrets/tokens' },
  // sidecar.istio.io/userVolumeMount: the pod's own secret, lent to the proxy.
  { name: 'certs', mountPath: '/etc/egress-certs', readOnly: true },
  TOKEN,
];
const app = (mounts: Mount[], over: Partial<Container> = {}): Container =>
  ({ name: 'app', image: 'nginx', volumeMounts: mounts, ...over }) as Container;

/** Istio's injected pod with its volumes; `apps` replace the app container, `spec` adds to the pod. */
function istioMounted(apps: Container[], spec: Partial<Pod['spec']> = {}, proxyNative = false): Pod {
  const proxy = istio.proxy({ volumeMounts: ISTIO_MOUNTS } as Partial<Container>);
  return istioPod({
    volumes: ISTIO_VOLUMES,
    ...(proxyNative
      ? { initContainers: [istio.init(), { ...proxy, restartPolicy: 'Always' }], containers: apps }
      : { containers: [...apps, proxy] }),
    ...spec,
  });
}

const LINKERD_VOLUMES = [
  { name: 'linkerd-identity-end-entity', emptyDir: { medium: 'Memory' } },
  { name: 'linkerd-proxy-init-xtables-lock', emptyDir: {} },
];
function linkerdMounted(apps: Container[]): Pod {
  return linkerdPod({
    volumes: LINKERD_VOLUMES,
    initContainers: [
      linkerd.init({
        volumeMounts: [{ name: 'linkerd-proxy-init-xtables-lock', mountPath: '/run' }],
      } as Partial<Container>),
    ],
    containers: [
      ...apps,
      linkerd.proxy({
        volumeMounts: [{ name: 'linkerd-identity-end-entity', mountPath: '/var/run/linkerd/identity/end-entity' }],
      } as Partial<Container>),
    ],
  });
}

describe("the mesh's volumes", () => {
  const refused: Array<[string, MeshName, Pod, RegExp]> = [
    [
      "an app mounts istio-envoy (Envoy's bootstrap)",
      'istio',
      istioMounted([app([{ name: 'istio-envoy', mountPath: '/x' }])]),
      /container app mounts volume istio-envoy, which is the mesh's \(container istio-proxy mounts it at \/etc\/istio\/proxy\)/,
    ],
    [
      'an app mounts workload-socket (the SDS socket)',
      'istio',
      istioMounted([app([{ name: 'workload-socket', mountPath: '/var/run/secrets/workload-spiffe-uds' }])]),
      /mounts volume workload-socket/,
    ],
    [
      'an init container mounts istio-data',
      'istio',
      istioMounted([app([])], {
        initContainers: [istio.init(), app([{ name: 'istio-data', mountPath: '/d' }], { name: 'prep' })],
      }),
      /init container prep mounts volume istio-data/,
    ],
    [
      "an ephemeral container reads istio-token (the proxy's identity)",
      'istio',
      istioMounted([app([])], {
        ephemeralContainers: [app([{ name: 'istio-token', mountPath: '/t' }], { name: 'debugger' })],
      }),
      /ephemeral container debugger mounts volume istio-token/,
    ],
    [
      "an app mounts Linkerd's identity directory",
      'linkerd',
      linkerdMounted([app([{ name: 'linkerd-identity-end-entity', mountPath: '/id' }])]),
      /mounts volume linkerd-identity-end-entity/,
    ],
    [
      "an app mounts linkerd-init's xtables lock",
      'linkerd',
      linkerdMounted([app([{ name: 'linkerd-proxy-init-xtables-lock', mountPath: '/run' }])]),
      /mounts volume linkerd-proxy-init-xtables-lock, which is the mesh's \(init container linkerd-init/,
    ],
  ];
  it.each(refused)('%s: refused (mesh_volume_shared)', (_n, mesh, p, message) => {
    const r = checkPosture(input(p), verified, cfg(mesh));
    expect(r).toMatchObject({ ok: false, reason: 'mesh_volume_shared' });
    expect(!r.ok && r.message).toMatch(message);
    expect(decide(input(p), verified, cfg(mesh))).toMatchObject({ kind: 'deny', reason: 'mesh_volume_shared' });
  });

  const allowed: Array<[string, MeshName, Pod]> = [
    ['an app mounts the ServiceAccount token, as every container does', 'istio', istioMounted([app([TOKEN])])],
    [
      "an app mounts the pod's own secret it also lends the proxy (userVolumeMount)",
      'istio',
      istioMounted([app([{ name: 'certs', mountPath: '/certs', readOnly: true }])]),
    ],
    ['no app mounts anything', 'linkerd', linkerdMounted([app([])])],
  ];
  it.each(allowed)('%s: allowed', (_n, mesh, p) => {
    expect(checkPosture(input(p), verified, cfg(mesh))).toMatchObject({ ok: true });
  });
});

describe('nothing of the app starts before a native-sidecar proxy', () => {
  const sidecar = (name: string): Container => ({ name, image: 'busybox', restartPolicy: 'Always' });
  it('an app native sidecar ordered before the native proxy is refused (started_before_proxy)', () => {
    const p = istioMounted([app([])], {}, true);
    p.spec.initContainers = [istio.init(), sidecar('log-shipper'), ...(p.spec.initContainers ?? []).slice(1)];
    const r = checkPosture(input(p), verified, cfg('istio'));
    expect(r).toMatchObject({ ok: false, reason: 'started_before_proxy' });
    expect(!r.ok && r.message).toMatch(
      /init container log-shipper is a native sidecar ordered before the proxy istio-proxy/,
    );
  });
  it('after the proxy, as the injectors put it, it is allowed; so is a plain init container before it', () => {
    const p = istioMounted([app([])], {}, true);
    p.spec.initContainers = [
      istio.init(),
      { name: 'migrate', image: 'busybox' },
      ...(p.spec.initContainers ?? []).slice(1),
      sidecar('log-shipper'),
    ];
    expect(checkPosture(input(p), verified, cfg('istio'))).toMatchObject({ ok: true });
  });
  it('with a regular proxy, app native sidecars are not this rule’s (Kubernetes starts them first by design)', () => {
    const p = istioMounted([app([])], { initContainers: [istio.init(), sidecar('log-shipper')] });
    expect(checkPosture(input(p), verified, cfg('istio'))).toMatchObject({ ok: true });
  });
});
