/**
 * Issue 33 §3: the proxy's control plane and trust roots are the mesh's, not the pod's. Every field that changes
 * where the proxy connects (discoveryAddress, CA_ADDR, Linkerd's *_SVC_ADDR, the names it resolves through
 * hostAliases or the pod's own resolvers) or whom it trusts (the root-certificate volumes, XDS_ROOT_CA and the other
 * trust variables — as env or proxyMetadata — Linkerd's trust anchors and service identities) is pinned to the
 * installed control plane: the mesh's defaults, what its ConfigMaps say (learned), or what is configured. The bases
 * are the meshes' own injector outputs (shared/corpus), which pass as they are.
 */
import { describe, expect, it } from 'vitest';
import { decide } from '../../src/policy/mutate/decide.ts';
import { checkPosture } from '../../src/policy/posture.ts';
import type { Pod } from '../../src/contract/pod.ts';
import { compileConfig } from '../../src/config/compile.ts';
import {
  istioInjectorFacts,
  istioMeshFacts,
  linkerdConfigFacts,
  mergeControlPlane,
  pemBodies,
} from '../../src/mesh/control-plane.ts';
import { cfg, input, verified } from './mutate/fixtures.ts';
import {
  containerNamed as container,
  istioInjected as istioBase,
  linkerdInjected as linkerdBase,
} from '../support/corpus.ts';

type Edit = (p: Pod) => void;

const setEnv = (p: Pod, name: string, key: string, value: string) => {
  const c = container(p, name);
  const env = (c.env ?? []).filter((e) => e.name !== key);
  c.env = [...env, { name: key, value }];
};
const envValue = (p: Pod, name: string, key: string) => container(p, name).env?.find((e) => e.name === key)?.value;
const annotate = (p: Pod, key: string, value: string) => {
  p.metadata = { ...p.metadata, annotations: { ...(p.metadata?.annotations ?? {}), [key]: value } };
};
const volume = (p: Pod, name: string, v: Record<string, unknown>) => {
  p.spec.volumes = (p.spec.volumes ?? []).map((x) => (x.name === name ? { name, ...v } : x));
};
const spec = (p: Pod, k: string, v: unknown) => {
  (p.spec as Record<string, unknown>)[k] = v;
};

function judged(mesh: 'istio' | 'linkerd', p: Pod, c = cfg(mesh)) {
  return { posture: checkPosture(input(p), verified, c), decision: decide(input(p), verified, c) };
}

/** [case, mesh, base, edit, reason, message] */
const refused: Array<[string, 'istio' | 'linkerd', () => Pod, Edit, string, RegExp]> = [
  // Istio: where the proxy connects
  [
    'PROXY_CONFIG discoveryAddress: an istiod in the author’s namespace',
    'istio',
    istioBase,
    (p) => setEnv(p, 'istio-proxy', 'PROXY_CONFIG', '{"discoveryAddress":"istiod.demo.svc:15012"}'),
    'impostor_container',
    /PROXY_CONFIG.*discoveryAddress "istiod\.demo\.svc:15012": it points the proxy's discovery \(xDS\) connection/,
  ],
  [
    'PROXY_CONFIG discoveryAddress: the real name with another DNS suffix',
    'istio',
    istioBase,
    (p) =>
      setEnv(p, 'istio-proxy', 'PROXY_CONFIG', '{"discoveryAddress":"istiod.istio-system.svc.evil.example:15012"}'),
    'impostor_container',
    /another address than the installed control plane's \(istiod\.istio-system\.svc:15012\)/,
  ],
  [
    'proxy.istio.io/config discoveryAddress',
    'istio',
    istioBase,
    (p) => annotate(p, 'proxy.istio.io/config', 'discoveryAddress: istiod.demo.svc:15012'),
    'proxy_config_refused',
    /annotation proxy\.istio\.io\/config sets discoveryAddress/,
  ],
  [
    'annotation sidecar.istio.io/discoveryAddress (pilot-agent reads it over everything)',
    'istio',
    istioBase,
    (p) => annotate(p, 'sidecar.istio.io/discoveryAddress', 'evil.example:15012'),
    'proxy_config_refused',
    /annotation sidecar\.istio\.io\/discoveryAddress=evil\.example:15012: pilot-agent would take its configuration/,
  ],
  [
    'CA_ADDR: a CA in the author’s namespace',
    'istio',
    istioBase,
    (p) => setEnv(p, 'istio-proxy', 'CA_ADDR', 'istiod.demo.svc:15012'),
    'impostor_container',
    /CA_ADDR="istiod\.demo\.svc:15012": it points the proxy's certificate requests \(CA\)/,
  ],
  [
    'ISTIOD_ADDRESS',
    'istio',
    istioBase,
    (p) => setEnv(p, 'istio-proxy', 'ISTIOD_ADDRESS', 'evil.example:15012'),
    'impostor_container',
    /ISTIOD_ADDRESS/,
  ],
  // Istio: whom it trusts
  ...(['XDS_ROOT_CA', 'CA_ROOT_CA', 'ISTIOD_SAN', 'PROV_CERT', 'OUTPUT_CERTS'] as const).map(
    (name): [string, 'istio', () => Pod, Edit, string, RegExp] => [
      `${name} as env`,
      'istio',
      istioBase,
      (p) => setEnv(p, 'istio-proxy', name, '/var/run/x'),
      'impostor_container',
      new RegExp(`${name}=.*the installed mesh sets none`),
    ],
  ),
  [
    'FILE_MOUNTED_CERTS=true with the TLS client files',
    'istio',
    istioBase,
    (p) => setEnv(p, 'istio-proxy', 'FILE_MOUNTED_CERTS', 'true'),
    'impostor_container',
    /FILE_MOUNTED_CERTS/,
  ],
  [
    'XDS_ROOT_CA through proxy.istio.io/config proxyMetadata',
    'istio',
    istioBase,
    (p) => annotate(p, 'proxy.istio.io/config', 'proxyMetadata: {XDS_ROOT_CA: SYSTEM}'),
    'proxy_config_refused',
    /proxyMetadata XDS_ROOT_CA/,
  ],
  [
    'ISTIOD_SAN through PROXY_CONFIG proxyMetadata',
    'istio',
    istioBase,
    (p) =>
      setEnv(
        p,
        'istio-proxy',
        'PROXY_CONFIG',
        '{"proxyMetadata":{"ISTIOD_SAN":"spiffe://cluster.local/ns/demo/sa/x"}}',
      ),
    'impostor_container',
    /proxyMetadata ISTIOD_SAN/,
  ],
  [
    'PILOT_CERT_PROVIDER custom (roots from /etc/certs)',
    'istio',
    istioBase,
    (p) => setEnv(p, 'istio-proxy', 'PILOT_CERT_PROVIDER', 'custom'),
    'impostor_container',
    /PILOT_CERT_PROVIDER="custom": it chooses where the proxy's root certificates come from; the installed mesh writes istiod/,
  ],
  [
    'extra roots in PROXY_CONFIG caCertificatesPem',
    'istio',
    istioBase,
    (p) => setEnv(p, 'istio-proxy', 'PROXY_CONFIG', '{"caCertificatesPem":["-----BEGIN CERTIFICATE-----x"]}'),
    'impostor_container',
    /caCertificatesPem/,
  ],
  ...(
    [
      ['another ConfigMap', { configMap: { name: 'my-roots' } }],
      ['a Secret', { secret: { secretName: 'istio-ca-root-cert' } }],
      ['a projected ConfigMap', { projected: { sources: [{ configMap: { name: 'istio-ca-root-cert' } }] } }],
      ['a CSI volume', { csi: { driver: 'secrets-store.csi.k8s.io' } }],
      [
        'istiod’s ConfigMap with items',
        { configMap: { name: 'istio-ca-root-cert', items: [{ key: 'x', path: 'root-cert.pem' }] } },
      ],
      [
        'a ClusterTrustBundle of another name',
        { projected: { sources: [{ clusterTrustBundle: { name: 'mine', path: 'root-cert.pem' } }] } },
      ],
    ] as const
  ).map(([what, v]): [string, 'istio', () => Pod, Edit, string, RegExp] => [
    `istiod-ca-cert as ${what}`,
    'istio',
    istioBase,
    (p) => volume(p, 'istiod-ca-cert', v),
    'impostor_container',
    /the pod's volume istiod-ca-cert is .*the proxy trusts the root certificate it finds there/,
  ]),
  [
    'istio-certs at /etc/certs where the mesh mounts none',
    'istio',
    istioBase,
    (p) => {
      p.spec.volumes!.push({ name: 'istio-certs', secret: { secretName: 'istio.default', optional: true } });
      (container(p, 'istio-proxy').volumeMounts as unknown[]).push({
        name: 'istio-certs',
        mountPath: '/etc/certs/',
        readOnly: true,
      });
    },
    'impostor_container',
    /istio-certs .*which the installed mesh does not mount/,
  ],
  // Istio: how the proxy resolves the control plane
  [
    'hostAliases mapping istiod.istio-system.svc',
    'istio',
    istioBase,
    (p) => spec(p, 'hostAliases', [{ ip: '10.9.9.9', hostnames: ['istiod.istio-system.svc'] }]),
    'proxy_config_refused',
    /spec\.hostAliases maps istiod\.istio-system\.svc to 10\.9\.9\.9/,
  ],
  [
    'hostAliases mapping the name with the cluster suffix, in capitals',
    'istio',
    istioBase,
    (p) =>
      spec(p, 'hostAliases', [{ ip: '10.9.9.9', hostnames: ['ok.example', 'ISTIOD.istio-system.svc.cluster.local.'] }]),
    'proxy_config_refused',
    /hostAliases maps ISTIOD/,
  ],
  [
    'dnsPolicy None with the author’s resolver',
    'istio',
    istioBase,
    (p) => {
      spec(p, 'dnsPolicy', 'None');
      spec(p, 'dnsConfig', { nameservers: ['10.9.9.9'] });
    },
    'proxy_config_refused',
    /spec\.dnsPolicy is None/,
  ],
  [
    'dnsConfig.nameservers beside the cluster’s',
    'istio',
    istioBase,
    (p) => spec(p, 'dnsConfig', { nameservers: ['10.9.9.9'] }),
    'proxy_config_refused',
    /dnsConfig\.nameservers adds 10\.9\.9\.9/,
  ],
  // Linkerd
  ...(
    [
      ['DESTINATION', 'linkerd-dst-headless.demo.svc.cluster.local.:8086'],
      ['POLICY', 'linkerd-policy.demo.svc.cluster.local.:8090'],
      ['IDENTITY', 'linkerd-identity-headless.linkerd.svc.evil.example.:8080'],
    ] as const
  ).map(([svc, addr]): [string, 'linkerd', () => Pod, Edit, string, RegExp] => [
    `LINKERD2_PROXY_${svc}_SVC_ADDR elsewhere`,
    'linkerd',
    linkerdBase,
    (p) => setEnv(p, 'linkerd-proxy', `LINKERD2_PROXY_${svc}_SVC_ADDR`, addr),
    'impostor_container',
    new RegExp(`LINKERD2_PROXY_${svc}_SVC_ADDR=.*another address than the installed control plane's`),
  ]),
  [
    'LINKERD2_PROXY_IDENTITY_SVC_NAME of the author’s identity service',
    'linkerd',
    linkerdBase,
    (p) =>
      setEnv(
        p,
        'linkerd-proxy',
        'LINKERD2_PROXY_IDENTITY_SVC_NAME',
        'evil.demo.serviceaccount.identity.linkerd.cluster.local',
      ),
    'impostor_container',
    /LINKERD2_PROXY_IDENTITY_SVC_NAME=.*it changes the identity the proxy requires of its identity service/,
  ],
  [
    'a trust anchor bundle with the author’s root added',
    'linkerd',
    linkerdBase,
    (p) =>
      setEnv(
        p,
        'linkerd-proxy',
        'LINKERD2_PROXY_IDENTITY_TRUST_ANCHORS',
        `${envValue(p, 'linkerd-proxy', 'LINKERD2_PROXY_IDENTITY_TRUST_ANCHORS')}-----BEGIN CERTIFICATE-----\nQUJD\n-----END CERTIFICATE-----\n`,
      ),
    'impostor_container',
    /its certificate 2 of 2 is not one of the installed trust anchors/,
  ],
  [
    'the trust anchors from a ConfigMap of the pod’s namespace',
    'linkerd',
    linkerdBase,
    (p) => {
      const c = container(p, 'linkerd-proxy');
      c.env = (c.env ?? []).map((e) =>
        e.name === 'LINKERD2_PROXY_IDENTITY_TRUST_ANCHORS'
          ? ({
              name: e.name,
              valueFrom: { configMapKeyRef: { name: 'linkerd-identity-trust-roots', key: 'ca-bundle.crt' } },
            } as never)
          : e,
      );
    },
    'impostor_container',
    /takes LINKERD2_PROXY_IDENTITY_TRUST_ANCHORS from .*configMapKeyRef/,
  ],
  [
    'hostAliases mapping Linkerd’s identity service',
    'linkerd',
    linkerdBase,
    (p) =>
      spec(p, 'hostAliases', [{ ip: '10.9.9.9', hostnames: ['linkerd-identity-headless.linkerd.svc.cluster.local'] }]),
    'proxy_config_refused',
    /control plane linkerd-identity-headless\.linkerd\.svc\.cluster\.local/,
  ],
];

describe('the control plane and trust roots are the installed mesh’s', () => {
  it.each([
    ['istio', istioBase],
    ['linkerd', linkerdBase],
  ] as const)("%s's own injector output passes", (mesh, make) => {
    const { posture } = judged(mesh, make());
    expect(posture.ok ? 'ok' : `${posture.reason}: ${posture.message}`).toBe('ok');
  });

  it.each(refused)('%s: refused', (_n, mesh, make, edit, reason, message) => {
    const p = make();
    edit(p);
    const { posture, decision } = judged(mesh, p);
    expect(posture).toMatchObject({ ok: false, reason });
    expect(!posture.ok && posture.message).toMatch(message);
    expect(decision).toMatchObject({ kind: 'deny', reason });
  });

  it.each([
    [
      'the cluster’s own resolver with search domains and options',
      (p: Pod) => spec(p, 'dnsConfig', { searches: ['corp.example'], options: [{ name: 'ndots', value: '2' }] }),
    ],
    [
      'a hostAlias of another name',
      (p: Pod) => spec(p, 'hostAliases', [{ ip: '10.0.0.1', hostnames: ['db.corp.example', 'istiod'] }]),
    ],
    [
      'CA_ADDR of the installed istiod',
      (p: Pod) => setEnv(p, 'istio-proxy', 'CA_ADDR', 'istiod.istio-system.svc:15012'),
    ],
    [
      'CA_PROVIDER Citadel, FILE_MOUNTED_CERTS false',
      (p: Pod) => {
        setEnv(p, 'istio-proxy', 'CA_PROVIDER', 'Citadel');
        setEnv(p, 'istio-proxy', 'FILE_MOUNTED_CERTS', 'false');
      },
    ],
  ])('%s: allowed', (_n, edit) => {
    const p = istioBase();
    edit(p);
    expect(judged('istio', p).posture).toMatchObject({ ok: true });
  });
});

describe('learned from the installed mesh, or configured', () => {
  const canaryValues = {
    revision: 'canary',
    global: {
      istioNamespace: 'istio-control',
      caAddress: 'cert-manager-istio-csr.cert-manager.svc:443',
      pilotCertProvider: 'istiod',
      trustBundleName: 'corp-root',
      mountMtlsCerts: true,
    },
    pilot: { env: { ENABLE_CLUSTER_TRUST_BUNDLE_API: true } },
  };

  it('reads an injector ConfigMap’s values as the template uses them', () => {
    expect(istioInjectorFacts(canaryValues, 'istio-control')).toEqual({
      addresses: ['istiod-canary.istio-control.svc:15012', 'cert-manager-istio-csr.cert-manager.svc:443'],
      certProviders: ['istiod'],
      rootCertConfigMaps: ['corp-root'],
      clusterTrustBundles: ['istio.io:istiod-ca:corp-root'],
      mountMtlsCerts: true,
    });
    expect(
      istioMeshFacts({
        defaultConfig: {
          discoveryAddress: 'istiod.ext.example:15012',
          proxyMetadata: { XDS_ROOT_CA: 'SYSTEM', DNS_AGENT: '' },
        },
      }),
    ).toEqual({
      addresses: ['istiod.ext.example:15012'],
      metadata: { XDS_ROOT_CA: ['SYSTEM'] },
    });
  });

  it('a revision’s control plane is refused until it is known, then admitted', () => {
    const p = istioBase();
    setEnv(p, 'istio-proxy', 'CA_ADDR', 'cert-manager-istio-csr.cert-manager.svc:443');
    setEnv(p, 'istio-proxy', 'PROXY_CONFIG', '{"discoveryAddress":"istiod-canary.istio-control.svc:15012"}');
    volume(p, 'istiod-ca-cert', { configMap: { name: 'corp-root' } });
    expect(judged('istio', p).posture).toMatchObject({ ok: false, reason: 'impostor_container' });
    const learned = compileConfig(cfg('istio').config, istioInjectorFacts(canaryValues, 'istio-control'));
    expect(judged('istio', p, learned).posture).toMatchObject({ ok: true });
  });

  it('the mesh’s own proxyMetadata makes its trust variables allowed, with its values only', () => {
    const learned = compileConfig(
      cfg('istio').config,
      istioMeshFacts({ defaultConfig: { proxyMetadata: { XDS_ROOT_CA: 'SYSTEM' } } }),
    );
    const ok = istioBase();
    setEnv(ok, 'istio-proxy', 'XDS_ROOT_CA', 'SYSTEM');
    expect(judged('istio', ok, learned).posture).toMatchObject({ ok: true });
    const other = istioBase();
    setEnv(other, 'istio-proxy', 'XDS_ROOT_CA', '/var/run/mine/root.pem');
    expect(judged('istio', other, learned).posture).toMatchObject({ ok: false, reason: 'impostor_container' });
  });

  it('configured addresses are the control plane’s too (config.controlPlane)', () => {
    const p = istioBase();
    setEnv(p, 'istio-proxy', 'PROXY_CONFIG', '{"discoveryAddress":"istiod.mesh.example:15012"}');
    const configured = cfg('istio', { controlPlane: { addresses: ['istiod.mesh.example:15012'] } });
    expect(judged('istio', p, configured).posture).toMatchObject({ ok: true });
  });

  it('Linkerd: without known trust anchors the literal is refused, naming how to make them known', () => {
    const unknown = compileConfig({ ...cfg('linkerd').config, controlPlane: undefined });
    const { posture } = judged('linkerd', linkerdBase(), unknown);
    expect(posture).toMatchObject({ ok: false, reason: 'impostor_container' });
    expect(!posture.ok && posture.message).toMatch(/meshgate does not know the installed trust anchors/);
  });

  it('Linkerd: linkerd-config values of another namespace, domain and a tracing collector', () => {
    const facts = linkerdConfigFacts(
      {
        clusterDomain: 'corp.local',
        identityTrustDomain: 'mesh.corp',
        proxy: {
          tracing: {
            collector: {
              endpoint: 'collector.tracing:4317',
              meshIdentity: { serviceAccountName: 'collector', namespace: 'tracing' },
            },
          },
        },
      },
      'l5d',
    );
    const cp = mergeControlPlane(facts);
    expect(cp.addresses).toEqual([
      'linkerd-dst-headless.l5d.svc.corp.local.:8086',
      'linkerd-policy.l5d.svc.corp.local.:8090',
      'linkerd-identity-headless.l5d.svc.corp.local.:8080',
      'collector.tracing:4317',
    ]);
    expect(cp.names).toContain('linkerd-identity.l5d.serviceaccount.identity.l5d.mesh.corp');
    expect(cp.names).toContain('collector.tracing.serviceaccount.identity.l5d.mesh.corp');
  });

  it('PEM bundles are compared certificate by certificate, whatever their whitespace', () => {
    expect(pemBodies('x\n-----BEGIN CERTIFICATE-----\n  QUJD\n  REVG\n-----END CERTIFICATE-----\n')).toEqual([
      'QUJDREVG',
    ]);
    expect(
      pemBodies('-----BEGIN CERTIFICATE-----QUJD-----END CERTIFICATE----------BEGIN CERTIFICATE-----R0hJ'),
    ).toEqual(['QUJD', 'R0hJ']);
  });
});
