/**
 * Class 1, trust by name: a container is the mesh's by what it is, not what it is called. Each row is a pod a
 * hostile author could submit; the validating webhook (checkPosture) and the mutating one (decide) must both refuse
 * it with the reason, pre-bound to an unverified node or not.
 */
import { describe, expect, it } from 'vitest';
import { checkPosture } from '../../src/policy/posture.ts';
import { decide } from '../../src/policy/mutate/decide.ts';
import { identifyPod } from '../../src/policy/identify.ts';
import type { Container, Pod } from '../../src/contract/pod.ts';
import { cfg, input, istio, istioPod, linkerd, linkerdPod, pod, verified } from './mutate/fixtures.ts';
import type { MeshName } from '../../src/mesh/types.ts';

const STATUS = { 'sidecar.istio.io/status': istio.status };
const busybox = (name: string, over: Partial<Container> = {}): Container => ({
  name,
  image: 'busybox:1.36',
  command: ['sleep', '3600'],
  ...over,
});

/** [case, mesh, pod, reason, message fragment] */
const refused: Array<[string, MeshName, Pod, string, RegExp]> = [
  [
    'istio-init + istio-proxy running busybox',
    'istio',
    pod(
      {
        nodeName: 'bad',
        initContainers: [busybox('istio-init')],
        containers: [{ name: 'app' }, busybox('istio-proxy')],
      },
      { name: 'w', annotations: STATUS },
    ),
    'impostor_container',
    /istio-init .*image busybox:1\.36 is not one of the recognised init images/,
  ],
  [
    'real istio-init, busybox istio-proxy',
    'istio',
    istioPod({ containers: [{ name: 'app' }, busybox('istio-proxy')] }),
    'impostor_container',
    /istio-proxy .*not one of the recognised proxy images/,
  ],
  [
    'proxyv2 image but a gateway, not a sidecar, beside an app',
    'istio',
    istioPod({ containers: [{ name: 'app' }, istio.proxy({ args: ['proxy', 'router'] })] }),
    'gateway_shared',
    /runs the proxy as a gateway beside other containers \(containers istio-init, app, istio-proxy\)/,
  ],
  [
    'proxy under another UID (istio-cni would exempt that one)',
    'istio',
    istioPod({ containers: [{ name: 'app' }, istio.proxy({ securityContext: { runAsUser: 1000 } })] }),
    'impostor_container',
    /runs as UID 1000, but the redirect exempts the proxy UID 1337/,
  ],
  [
    'proxy with DISABLE_ENVOY',
    'istio',
    istioPod({ containers: [{ name: 'app' }, istio.proxy({ env: [{ name: 'DISABLE_ENVOY', value: 'true' }] })] }),
    'proxyless_grpc',
    /DISABLE_ENVOY=true/,
  ],
  [
    'istio-init whose command replaces pilot-agent',
    'istio',
    istioPod({ initContainers: [istio.init({ command: ['/bin/true'] })] }),
    'impostor_container',
    /replaces pilot-agent/,
  ],
  [
    'istio-init without NET_ADMIN/NET_RAW',
    'istio',
    istioPod({ initContainers: [istio.init({ securityContext: { runAsUser: 0 } })] }),
    'impostor_container',
    /lacks NET_ADMIN and NET_RAW/,
  ],
  [
    'istio-init in dry-run',
    'istio',
    istioPod({ initContainers: [istio.init({ args: [...istio.init().args!, '--dry-run'] })] }),
    'redirect_narrowed',
    /--dry-run is set/,
  ],
  [
    'istio-init dry-run through its environment',
    'istio',
    istioPod({ initContainers: [istio.init({ env: [{ name: 'DRY_RUN', value: 'true' }] })] }),
    'redirect_narrowed',
    /--dry-run is set/,
  ],
  [
    'istio-init that captures no destination (-i "")',
    'istio',
    istioPod({ initContainers: [istio.init({ args: istio.init().args!.map((a) => (a === '*' ? '' : a)) })] }),
    'redirect_narrowed',
    /-i \(--istio-service-cidr\) is "": only those destinations/,
  ],
  [
    'istio-init exempting root too (-u 0)',
    'istio',
    istioPod({ initContainers: [istio.init({ args: istio.init().args!.map((a) => (a === '1337' ? '1337,0' : a)) })] }),
    'redirect_narrowed',
    /exempts UID 1337,0/,
  ],
  [
    'istio-init redirecting to another port',
    'istio',
    istioPod({ initContainers: [istio.init({ args: istio.init().args!.map((a) => (a === '15001' ? '15099' : a)) })] }),
    'redirect_narrowed',
    /-p \(--envoy-port\) is "15099"/,
  ],
  [
    'a busybox istio-validation',
    'istio',
    istioPod({ initContainers: [busybox('istio-validation')] }),
    'impostor_container',
    /neither meshgate's validator .* nor Istio's own/,
  ],
  [
    "meshgate's validator with its probe changed",
    'istio',
    istioPod({
      initContainers: [{ ...(cfg('istio').validator as Container), args: ['--probe-address=127.0.0.1:15001'] }],
    }),
    'impostor_container',
    /args is \["--probe-address=127\.0\.0\.1:15001"\], not \["--outbound-port=15001"/,
  ],
  [
    'an ephemeral istio-proxy',
    'istio',
    istioPod({ ephemeralContainers: [istio.proxy()] }),
    'impostor_container',
    /an ephemeral container cannot be the proxy/,
  ],
  [
    'istio-validation as a regular container',
    'istio',
    istioPod({ containers: [{ name: 'app' }, istio.proxy(), istio.validation()] }),
    'impostor_container',
    /must be an init container that runs to completion/,
  ],
  [
    "Linkerd's names in an Istio namespace",
    'istio',
    istioPod({ containers: [{ name: 'app' }, istio.proxy(), linkerd.proxy()] }),
    'impostor_container',
    /reserved for Linkerd's containers/,
  ],
  [
    'meshgate-proxy + meshgate-validate look-alikes (custom)',
    'custom',
    pod({
      nodeName: 'bad',
      initContainers: [busybox('meshgate-validate'), busybox('meshgate-proxy', { restartPolicy: 'Always' })],
    }),
    'impostor_container',
    /meshgate-validate .*image is "busybox:1\.36", not "ghcr\.io\/meshgate\/meshgate:0\.1\.0"/,
  ],
  [
    "meshgate's proxy template with another image (custom)",
    'custom',
    pod({
      initContainers: [
        { ...(cfg().validator as Container) },
        { ...(cfg().own!.proxyNative as Container), image: 'busybox' },
      ],
    }),
    'impostor_container',
    /meshgate-proxy .*image is "busybox", not "docker\.io\/istio\/proxyv2:1\.27\.0"/,
  ],
  [
    "Istio's containers under mesh custom",
    'custom',
    istioPod(),
    'impostor_container',
    /istio-init .*reserved for Istio's containers/,
  ],
  [
    'linkerd-init in simulate mode',
    'linkerd',
    linkerdPod({ initContainers: [linkerd.init({ args: [...linkerd.init().args!, '--simulate'] })] }),
    'redirect_narrowed',
    /--simulate is set/,
  ],
  [
    'linkerd-init running /bin/true as its firewall',
    'linkerd',
    linkerdPod({
      initContainers: [linkerd.init({ args: [...linkerd.init().args!, '--firewall-bin-path', '/bin/true'] })],
    }),
    'redirect_narrowed',
    /is not an iptables binary/,
  ],
  [
    'linkerd-proxy as root',
    'linkerd',
    linkerdPod({ containers: [{ name: 'app' }, linkerd.proxy({ securityContext: { runAsUser: 0 } })] }),
    'impostor_container',
    /runs as UID 0, but the redirect exempts the proxy UID 2102/,
  ],
  [
    'a network validator that connects to its own listener',
    'linkerd',
    linkerdPod({
      initContainers: [
        {
          name: 'linkerd-network-validator',
          image: 'cr.l5d.io/linkerd/proxy:edge-25.10.1',
          command: ['/usr/lib/linkerd/linkerd2-network-validator'],
          args: ['--connect-addr', '127.0.0.1:4140', '--listen-addr', '0.0.0.0:4140'],
        },
      ],
    }),
    'impostor_container',
    /needs no redirect to reach it/,
  ],
];

describe('containers are judged by what they are', () => {
  it.each(refused)('%s: refused by /validate and /mutate', (_n, mesh, p, reason, message) => {
    const c = cfg(mesh);
    const posture = checkPosture(input(p), verified, c);
    expect(posture).toMatchObject({ ok: false, reason });
    expect(!posture.ok && posture.message).toMatch(message);
    expect(decide(input(p), verified, c)).toMatchObject({ kind: 'deny', reason });
  });

  const real: Array<[string, MeshName, Pod, { proxy: boolean; init: boolean; validator: string | undefined }]> = [
    ['Istio-injected pod', 'istio', istioPod(), { proxy: true, init: true, validator: undefined }],
    [
      'Istio-injected pod with a native proxy',
      'istio',
      istioPod({
        initContainers: [istio.init(), istio.proxy({ restartPolicy: 'Always' })],
        containers: [{ name: 'app' }],
      }),
      { proxy: true, init: true, validator: undefined },
    ],
    [
      "istiod with pilot.cni.enabled (Istio's own istio-validation)",
      'istio',
      istioPod({ initContainers: [istio.validation()] }),
      { proxy: true, init: false, validator: 'mesh' },
    ],
    [
      'after meshgate (its istio-validation)',
      'istio',
      istioPod({ initContainers: [cfg('istio').validator as Container] }),
      { proxy: true, init: false, validator: 'own' },
    ],
    ['Linkerd-injected pod', 'linkerd', linkerdPod(), { proxy: true, init: true, validator: undefined }],
    ['a pod without any mesh container', 'istio', pod(), { proxy: false, init: false, validator: undefined }],
  ];
  it.each(real)('%s: the real containers take their roles', (_n, mesh, p, want) => {
    const m = identifyPod(p, cfg(mesh));
    expect(m.impostors).toEqual([]);
    expect({
      proxy: !!m.proxy,
      init: !!m.init,
      validator: m.validator ? (m.validator.own ? 'own' : 'mesh') : undefined,
    }).toEqual(want);
  });

  /** The ServiceAccount token mount in every container, as meshgate adds it (src/policy/mutate/service-account.ts). */
  const withToken = (p: Pod): Pod => {
    const out = structuredClone(p);
    out.spec.volumes = [...(out.spec.volumes ?? []), { name: 'kube-api-access-abcde', projected: {} }];
    for (const c of [...(out.spec.initContainers ?? []), ...out.spec.containers])
      c.volumeMounts = [
        ...((c.volumeMounts as []) ?? []),
        { name: 'kube-api-access-abcde', readOnly: true, mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' },
      ];
    return out;
  };
  it.each(refused)('%s, with the token mount in every container: refused the same', (_n, mesh, p, reason, message) => {
    const c = cfg(mesh);
    const posture = checkPosture(input(withToken(p)), verified, c);
    expect(posture).toMatchObject({ ok: false, reason });
    expect(!posture.ok && posture.message).toMatch(message);
    expect(decide(input(withToken(p)), verified, c)).toMatchObject({ kind: 'deny', reason });
  });
  it.each(real)('%s, with the token mount in every container: the same roles', (_n, mesh, p) => {
    const strip = (m: ReturnType<typeof identifyPod>) =>
      JSON.stringify({ ...m, impostors: m.impostors.map((i) => i.problem) }, (k, v) => (k === 'container' ? 0 : v));
    expect(strip(identifyPod(withToken(p), cfg(mesh)))).toBe(strip(identifyPod(p, cfg(mesh))));
  });
});
