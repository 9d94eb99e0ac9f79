// The injector simulations' branches, table by table (src/mesh/simulate). Their output is compared field by field
// with the real injectors' over the whole corpus in test/e2e/explain-simulate.test.ts; these pin the branches that
// corpus does not reach and the rules around them (who is injected, which revision, what the answer admits to).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { injectorsOf, readMeshConfigFile, simulateMesh } from '../../src/cli/explain-simulate.ts';
import { compileConfig } from '../../src/config/compile.ts';
import type { ConfigMap } from '../../src/kube/learned-images.ts';
import { buildConfig } from '../../src/config/load.ts';
import { readIstioInjector } from '../../src/mesh/simulate/istio-config.ts';
import { injectionRequired, simulateIstio } from '../../src/mesh/simulate/istio-inject.ts';
import { excludeInboundPort } from '../../src/mesh/simulate/istio-template.ts';
import { linkerdSkip, readLinkerdInjector, simulateLinkerd } from '../../src/mesh/simulate/linkerd-inject.ts';
import type { PodJson, Simulated } from '../../src/mesh/simulate/types.ts';

// biome-ignore lint/suspicious/noExplicitAny: test fixtures read field by field
type Obj = Record<string, any>;

/** The parts of istio-discovery 1.27's values the template reads, at the chart's defaults. */
const VALUES = {
  revision: '',
  global: {
    hub: 'docker.io/istio',
    tag: '1.27.0',
    istioNamespace: 'istio-system',
    pilotCertProvider: 'istiod',
    logging: { level: 'default:info' },
    proxy: {
      image: 'proxyv2',
      clusterDomain: 'cluster.local',
      statusPort: 15020,
      includeIPRanges: '*',
      excludeIPRanges: '',
      includeInboundPorts: '*',
      excludeInboundPorts: '',
      excludeOutboundPorts: '',
      logLevel: 'warning',
      componentLogLevel: 'misc:error',
      privileged: false,
      readinessInitialDelaySeconds: 0,
      readinessPeriodSeconds: 15,
      readinessFailureThreshold: 4,
      startupProbe: { enabled: true, failureThreshold: 600 },
    },
    proxy_init: { image: 'proxyv2' },
    sds: { token: { aud: 'istio-ca' } },
    multiCluster: { clusterName: '' },
  },
  pilot: { cni: { enabled: false } },
  sidecarInjectorWebhook: { rewriteAppHTTPProbe: true },
};
const CONFIG = {
  policy: 'enabled',
  templates: { sidecar: '# not the stock template' },
  neverInjectSelector: [{ matchLabels: { batch: 'true' } }],
};

const istio = (values: Obj = VALUES, config: Obj = CONFIG, name = 'istio-sidecar-injector') => {
  const i = readIstioInjector({ name, namespace: 'istio-system' }, config, values, {});
  if ('problem' in i) throw new Error(i.problem);
  return i;
};
const pod = (meta: Obj = {}, spec: Obj = {}): PodJson => ({
  metadata: { labels: { app: 'web' }, ...meta },
  spec: { containers: [{ name: 'web', image: 'nginx', ports: [{ containerPort: 80 }] }], ...spec },
});
const injected = (s: Simulated): Obj => {
  if (s.kind !== 'injected') throw new Error(`not injected: ${JSON.stringify(s)}`);
  return s.pod as Obj;
};
const names = (l: Obj[] | undefined) => (l ?? []).map((c) => c.name);
const ctx = { namespace: 'shop', nativeSidecars: false };

describe('Istio: who istiod injects (injectRequired)', () => {
  it.each([
    ['hostNetwork', pod({}, { hostNetwork: true }), 'shop', /hostNetwork/],
    ['kube-system', pod(), 'kube-system', /never injects/],
    [
      'the label beats the annotation',
      pod({ labels: { 'sidecar.istio.io/inject': 'false' }, annotations: { 'sidecar.istio.io/inject': 'true' } }),
      'shop',
      /opts out/,
    ],
    ['neverInjectSelector', pod({ labels: { batch: 'true' } }), 'shop', /opts out/],
    ['any other value: the policy', pod({ annotations: { 'sidecar.istio.io/inject': 'yes' } }), 'shop', undefined],
  ])('%s', (_n, p, ns, why) => {
    const r = injectionRequired(istio(), p, ns);
    if (why) expect(r).toMatch(why);
    else expect(r).toBeUndefined();
  });

  it('policy disabled: only pods that opt in', () => {
    const i = istio(VALUES, { ...CONFIG, policy: 'disabled' });
    expect(injectionRequired(i, pod(), 'shop')).toMatch(/disabled/);
    expect(injectionRequired(i, pod({ labels: { 'sidecar.istio.io/inject': 'true' } }), 'shop')).toBeUndefined();
  });
});

describe('Istio: the template’s branches', () => {
  it('excludeInboundPort adds the status port unless listed or 0 (template.go)', () => {
    expect(excludeInboundPort('15020', '')).toBe('15020');
    expect(excludeInboundPort('15020', '80, 443')).toBe('80,443,15020');
    expect(excludeInboundPort('15020', '80,15020')).toBe('80,15020');
    expect(excludeInboundPort('0', '80')).toBe('80');
  });

  it('init mode: istio-init last among init containers, root with NET_ADMIN/NET_RAW; the proxy last', () => {
    const p = injected(simulateIstio(istio(), pod({}, { initContainers: [{ name: 'migrate', image: 'm' }] }), ctx));
    expect(names(p.spec.initContainers)).toEqual(['migrate', 'istio-init']);
    expect(names(p.spec.containers)).toEqual(['web', 'istio-proxy']);
    const init = p.spec.initContainers[1];
    expect(init.image).toBe('docker.io/istio/proxyv2:1.27.0');
    expect(init.securityContext).toMatchObject({ runAsUser: 0, capabilities: { add: ['NET_ADMIN', 'NET_RAW'] } });
    expect(init.args).toEqual(expect.arrayContaining(['-d', '15090,15021,15020', '-i', '*']));
    expect(JSON.parse(p.metadata.annotations['sidecar.istio.io/status'])).toMatchObject({
      initContainers: ['istio-init'],
      containers: ['istio-proxy'],
      revision: 'default',
    });
  });

  it('istio-cni: istio-validation first, as the proxy UID, validating only; the traffic annotations written', () => {
    const values = { ...VALUES, pilot: { cni: { enabled: true } } };
    const p = injected(
      simulateIstio(istio(values), pod({}, { initContainers: [{ name: 'migrate', image: 'm' }] }), ctx),
    );
    expect(names(p.spec.initContainers)).toEqual(['istio-validation', 'migrate']);
    expect(p.spec.initContainers[0].securityContext).toMatchObject({
      runAsUser: 1337,
      runAsNonRoot: true,
      capabilities: { drop: ['ALL'] },
    });
    expect(p.spec.initContainers[0].args.slice(-2)).toEqual(['--run-validation', '--skip-rule-apply']);
    expect(p.metadata.annotations['traffic.sidecar.istio.io/excludeInboundPorts']).toBe('15020');
  });

  it('native sidecars: istio-init, then istio-proxy (restartPolicy Always, a drain preStop), then the rest', () => {
    const p = injected(
      simulateIstio(istio(), pod({}, { initContainers: [{ name: 'migrate', image: 'm' }] }), {
        ...ctx,
        nativeSidecars: true,
      }),
    );
    expect(names(p.spec.initContainers)).toEqual(['istio-init', 'istio-proxy', 'migrate']);
    expect(p.spec.initContainers[1]).toMatchObject({
      restartPolicy: 'Always',
      lifecycle: { preStop: { exec: { command: ['pilot-agent', 'request', '--debug-port=15020', 'POST', 'drain'] } } },
    });
    // The annotation beats the nodes.
    const off = injected(
      simulateIstio(istio(), pod({ annotations: { 'sidecar.istio.io/nativeSidecar': 'false' } }), {
        ...ctx,
        nativeSidecars: true,
      }),
    );
    expect(names(off.spec.containers)).toEqual(['web', 'istio-proxy']);
  });

  it('holdApplicationUntilProxyStarts: the proxy first, waited for', () => {
    const values = {
      ...VALUES,
      global: { ...VALUES.global, proxy: { ...VALUES.global.proxy, holdApplicationUntilProxyStarts: true } },
    };
    const p = injected(simulateIstio(istio(values), pod(), ctx));
    expect(names(p.spec.containers)).toEqual(['istio-proxy', 'web']);
    expect(p.spec.containers[0].lifecycle).toEqual({ postStart: { exec: { command: ['pilot-agent', 'wait'] } } });
  });

  it('TPROXY: the proxy as root with NET_ADMIN; a proxyImage annotation with a registry is used as it is', () => {
    const p = injected(
      simulateIstio(
        istio(),
        pod({
          annotations: {
            'sidecar.istio.io/interceptionMode': 'TPROXY',
            'sidecar.istio.io/proxyImage': 'mirror.example/istio/proxyv2:1.27.0',
          },
        }),
        ctx,
      ),
    );
    const proxy = p.spec.containers.find((c: Obj) => c.name === 'istio-proxy');
    expect(proxy.image).toBe('mirror.example/istio/proxyv2:1.27.0');
    expect(proxy.securityContext).toMatchObject({ runAsUser: 0, capabilities: { add: ['NET_ADMIN'] } });
    expect(proxy.env.find((e: Obj) => e.name === 'ISTIO_META_INTERCEPTION_MODE').value).toBe('TPROXY');
  });

  it('the pod’s own istio-proxy fields win, as istiod re-applies them', () => {
    const p = injected(
      simulateIstio(
        istio(),
        pod(
          {},
          {
            containers: [
              { name: 'web', image: 'nginx' },
              { name: 'istio-proxy', image: 'auto', securityContext: { runAsUser: 1000 } },
            ],
          },
        ),
        ctx,
      ),
    );
    const proxy = p.spec.containers.find((c: Obj) => c.name === 'istio-proxy');
    expect(proxy.image).toBe('docker.io/istio/proxyv2:1.27.0');
    expect(proxy.securityContext.runAsUser).toBe(1000);
  });

  it('says where it may differ: a template that is not 1.27’s, templates it does not model', () => {
    const withSpire = istio(VALUES, { ...CONFIG, templates: { ...CONFIG.templates, spire: '# spire' } });
    const s = simulateIstio(withSpire, pod({ annotations: { 'inject.istio.io/templates': 'sidecar,spire' } }), ctx);
    const none = simulateIstio(istio(), pod({ annotations: { 'inject.istio.io/templates': 'custom' } }), ctx);
    expect(none.kind === 'unavailable' && none.why).toMatch(/has no template custom/);
    expect(s.kind === 'unavailable' && s.why).toMatch(/template spire is not simulated/);
    const plain = simulateIstio(istio(), pod(), ctx);
    expect(plain.kind === 'injected' && plain.differs.join('\n')).toMatch(/sidecar template is not Istio 1\.27's/);
  });
});

describe('explain: which injector, from which file', () => {
  const cfg = compileConfig(buildConfig({ mesh: 'istio' }, '--mesh'));
  const cms: ConfigMap[] = [
    {
      metadata: { name: 'istio-sidecar-injector', namespace: 'istio-system' },
      data: { config: JSON.stringify(CONFIG), values: JSON.stringify(VALUES) },
    },
    {
      metadata: { name: 'istio-sidecar-injector-canary', namespace: 'istio-system' },
      data: { config: JSON.stringify(CONFIG), values: JSON.stringify({ ...VALUES, revision: 'canary' }) },
    },
    {
      metadata: { name: 'istio-canary', namespace: 'istio-system' },
      data: { mesh: 'defaultConfig:\n  discoveryAddress: istiod-canary.istio-system.svc:15012\n' },
    },
  ];
  const inj = injectorsOf(cms);

  it.each([
    [{ 'istio-injection': 'enabled' }, {}, /default/],
    [{ 'istio.io/rev': 'canary' }, {}, /revision canary/],
    [{}, { 'istio.io/rev': 'canary' }, /revision canary/],
    [{ 'istio.io/rev': 'stable' }, {}, /no ConfigMap istio-sidecar-injector-stable .*revisions read: default, canary/],
    [{}, {}, /no istiod webhook selects it/],
    [{ 'istio-injection': 'disabled', 'istio.io/rev': 'canary' }, {}, /no istiod webhook selects it/],
  ])('namespace %j, pod %j', (nsLabels, podLabels, expected) => {
    const s = simulateMesh(inj, cfg, pod({ labels: podLabels }), {
      namespace: 'shop',
      namespaceLabels: nsLabels,
      nativeSidecars: false,
    });
    expect(JSON.stringify(s)).toMatch(expected);
  });

  it('the revision’s MeshConfig is read with it', () => {
    const s = injected(
      simulateMesh(inj, cfg, pod(), {
        namespace: 'shop',
        namespaceLabels: { 'istio.io/rev': 'canary' },
        nativeSidecars: false,
      }),
    );
    const proxy = s.spec.containers.find((c: Obj) => c.name === 'istio-proxy');
    expect(JSON.parse(proxy.env.find((e: Obj) => e.name === 'PROXY_CONFIG').value).discoveryAddress).toBe(
      'istiod-canary.istio-system.svc:15012',
    );
    expect(proxy.env.find((e: Obj) => e.name === 'CA_ADDR').value).toBe('istiod-canary.istio-system.svc:15012');
  });

  it('--mesh-config: ConfigMaps of a List or documents; a file without one is an error naming it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mesh-config-'));
    writeFileSync(
      join(dir, 'list.yaml'),
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'List',
        items: cms.map((c) => ({ apiVersion: 'v1', kind: 'ConfigMap', ...c })),
      }),
    );
    expect(readMeshConfigFile(join(dir, 'list.yaml'))).toHaveLength(3);
    writeFileSync(join(dir, 'none.yaml'), 'apiVersion: v1\nkind: Secret\n');
    expect(() => readMeshConfigFile(join(dir, 'none.yaml'))).toThrow(/none\.yaml: no ConfigMap in it/);
    expect(() => readMeshConfigFile(join(dir, 'missing.yaml'))).toThrow(/missing\.yaml/);
  });
});

describe('Linkerd: the proxy injector’s branches', () => {
  const values = {
    linkerdVersion: 'edge-25.1.1',
    namespace: 'linkerd',
    identityTrustAnchorsPEM: 'pem',
    proxy: {
      image: { name: 'cr.l5d.io/linkerd/proxy' },
      uid: 2102,
      gid: -1,
      await: true,
      nativeSidecar: false,
      ports: { admin: 4191, control: 4190, inbound: 4143, outbound: 4140 },
    },
    proxyInit: {
      ignoreInboundPorts: '4567,4568',
      ignoreOutboundPorts: '4567,4568',
      runAsUser: 65534,
      runAsGroup: 65534,
      iptablesMode: 'nft',
      xtMountPath: { mountPath: '/run', name: 'linkerd-proxy-init-xtables-lock' },
    },
    identity: { serviceAccountTokenProjection: true },
    cniEnabled: false,
  };
  const l5d = (v: Obj = values) => {
    const i = readLinkerdInjector({ name: 'linkerd-config', namespace: 'linkerd' }, v);
    if ('problem' in i) throw new Error(i.problem);
    return i;
  };
  const enabled = {
    namespace: 'shop',
    nativeSidecars: false,
    namespaceAnnotations: { 'linkerd.io/inject': 'enabled' },
  };

  it.each([
    [pod({}, { hostNetwork: true }), enabled, /hostNetwork/],
    [pod({ annotations: { 'linkerd.io/inject': 'disabled' } }), enabled, /linkerd.io\/inject=disabled/],
    [pod(), { namespace: 'shop', nativeSidecars: false, namespaceAnnotations: {} }, /neither the pod nor namespace/],
    [
      pod({ annotations: { 'linkerd.io/inject': 'enabled' } }),
      { namespace: 'shop', nativeSidecars: false, namespaceAnnotations: {} },
      undefined,
    ],
  ])('who is injected (%#)', (p, c, why) => {
    const r = linkerdSkip(p, c);
    if (why) expect(r).toMatch(why);
    else expect(r).toBeUndefined();
  });

  it('linkerd-init last, the proxy first (await), the skip ports and UID in its arguments', () => {
    const p = injected(
      simulateLinkerd(l5d(), pod({ annotations: { 'config.linkerd.io/skip-outbound-ports': '25' } }), enabled),
    );
    expect(names(p.spec.containers)).toEqual(['linkerd-proxy', 'web']);
    expect(names(p.spec.initContainers)).toEqual(['linkerd-init']);
    expect(p.spec.initContainers[0].args).toEqual(
      expect.arrayContaining([
        '--proxy-uid',
        '2102',
        '--outbound-ports-to-ignore',
        '25',
        '--inbound-ports-to-ignore',
        '4190,4191,4567,4568',
      ]),
    );
  });

  it('cniEnabled: the network validator; native sidecars: the validator, then the proxy, first', () => {
    const p = injected(
      simulateLinkerd(
        l5d({ ...values, cniEnabled: true, proxy: { ...values.proxy, nativeSidecar: true } }),
        pod({}, { initContainers: [{ name: 'migrate', image: 'm' }] }),
        enabled,
      ),
    );
    expect(names(p.spec.initContainers)).toEqual(['linkerd-network-validator', 'linkerd-proxy', 'migrate']);
    expect(p.spec.initContainers[1].restartPolicy).toBe('Always');
    expect(p.spec.volumes.map((v: Obj) => v.name)).not.toContain('linkerd-proxy-init-xtables-lock');
  });
});
