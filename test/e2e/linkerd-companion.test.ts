/**
 * meshgate (mesh linkerd, companion) next to Linkerd's REAL proxy injector (linkerd2 b24cd40's proxy-injector, built
 * by scripts/build-linkerd.sh, with the linkerd-control-plane chart's values rendered by the real helm) on a real
 * kube-apiserver, namespaces annotated linkerd.io/inject=enabled as in a cluster. What the injector writes, in each
 * of its modes, is admitted (adjusted on verified nodes) and never refused for being Linkerd's; what a pod author
 * makes it write, or writes instead of it, is refused with the reason.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import { installLinkerd, startLinkerdInjector } from './harness/linkerd.ts';
import { apiError, createNamespace, mutateVerdicts, restrictedPod, startMeshgate } from './meshgate.ts';
import { shared } from './harness/shared.ts';
import { startVerdictCluster, VERIFIED_AND_NOT } from './harness/clusters.ts';

const PROXY_IMAGE = 'cr.l5d.io/linkerd/proxy:git-b24cd405';
/**
 * The cluster this file's tests share: a verified and an unverified node (for linkerd-cni), Linkerd's real injector
 * installed as its chart would (installLinkerd), and meshgate for Linkerd called after it.
 */
const s = shared(async (stopLater) => {
  const cluster = await startVerdictCluster(stopLater, VERIFIED_AND_NOT, { pluginType: 'linkerd-cni' });
  const l5d = stopLater(await startLinkerdInjector(cluster.cp));
  await installLinkerd(cluster.cp, l5d);
  const mg = stopLater(await startMeshgate(cluster.cp, {}, 'linkerd', { register: { name: 'z-meshgate' } }));
  // Linkerd's opt-in is the namespace annotation; meshgate's the label. Pod Security restricted enforced.
  await createNamespace(
    cluster.cp,
    'mesh',
    { 'meshgate.io/inject': 'enabled', 'pod-security.kubernetes.io/enforce': 'restricted' },
    { 'linkerd.io/inject': 'enabled' },
  );
  await createNamespace(cluster.cp, 'plain', {}, { 'linkerd.io/inject': 'enabled' });
  return { ...cluster, l5d, mg };
});

const inits = (p: V1Pod) => (p.spec?.initContainers ?? []).map((c) => c.name);
const apps = (p: V1Pod) => p.spec!.containers.map((c) => c.name);
const meshgateStatus = (p: V1Pod) => JSON.parse(p.metadata!.annotations!['meshgate.io/status']) as object;
const named = (cs: V1Container[] | undefined, name: string) => (cs ?? []).find((c) => c.name === name);

/** The pod as the apiserver would store it (dry run: every webhook is called, nothing is kept). */
function create(name: string, node: string, opts: { annotations?: Record<string, string>; pod?: V1Pod } = {}) {
  const body = opts.pod ?? restrictedPod(name, { nodeName: node });
  body.metadata = { ...body.metadata, annotations: { ...body.metadata?.annotations, ...opts.annotations } };
  return s.core.createNamespacedPod({ namespace: 'mesh', body, dryRun: 'All' });
}
const refusal = (p: Promise<unknown>) =>
  p.then(
    () => 'admitted',
    (e: unknown) => apiError(e),
  );

/** Linkerd's own output for the pod (namespace plain: meshgate not called), to compare meshgate's result with. */
async function linkerdAlone(name: string, annotations: Record<string, string> = {}): Promise<V1Pod> {
  const body = restrictedPod(name, { nodeName: 'node-verified' });
  body.metadata!.annotations = annotations;
  return s.core.createNamespacedPod({ namespace: 'plain', body, dryRun: 'All' });
}

describe("meshgate next to Linkerd's own proxy injector (the chart's defaults: native-sidecar proxy, linkerd-init)", () => {
  it('Linkerd alone writes linkerd-init (NET_ADMIN, NET_RAW) and a native-sidecar linkerd-proxy', async () => {
    const p = await linkerdAlone('alone');
    expect(inits(p)).toEqual(['linkerd-init', 'linkerd-proxy']);
    expect(named(p.spec!.initContainers, 'linkerd-proxy')!.restartPolicy).toBe('Always');
    expect(named(p.spec!.initContainers, 'linkerd-init')!.securityContext!.capabilities!.add).toEqual([
      'NET_ADMIN',
      'NET_RAW',
    ]);
    expect(p.metadata!.annotations!['linkerd.io/proxy-version']).toBe('git-b24cd405');
  });

  it('verified node: linkerd-init replaced by the validator, Pod Security restricted passes', async () => {
    const before = s.mg.reviews.length;
    const p = await create('on-verified', 'node-verified');
    expect(inits(p)).toEqual(['linkerd-network-validator', 'linkerd-proxy']);
    expect(named(p.spec!.initContainers, 'linkerd-network-validator')!.image).toBe('ghcr.io/meshgate/meshgate:0.1.0');
    expect(named(p.spec!.initContainers, 'linkerd-proxy')!.image).toBe(PROXY_IMAGE);
    expect(JSON.stringify(p.spec)).not.toContain('NET_ADMIN');
    expect(meshgateStatus(p)).toMatchObject({
      mode: 'cni',
      reason: 'node_verified',
      removedInitContainers: ['linkerd-init'],
    });
    expect(p.metadata!.labels!['meshgate.io/redirect']).toBe('cni');
    expect(mutateVerdicts(s.mg, before, 'on-verified').map((v) => v.reason)).toEqual(['node_verified']);
  });

  it('unverified node: refused with the reason', async () => {
    expect(await refusal(create('on-unverified', 'node-unverified'))).toMatch(
      /node node-unverified has no verified CNI chain \(mesh_plugin_missing: .*\[node_unverified\]/,
    );
  });

  it('linkerd-init as root (proxyInit.runAsRoot) and iptables legacy: still Linkerd, still replaced', async () => {
    await s.l5d.setValues({ proxyInit: { runAsRoot: true, iptablesMode: 'legacy' } });
    try {
      const alone = await linkerdAlone('alone-root');
      expect(named(alone.spec!.initContainers, 'linkerd-init')!.securityContext!.runAsUser).toBe(0);
      const p = await create('init-root', 'node-verified');
      expect(inits(p)).toEqual(['linkerd-network-validator', 'linkerd-proxy']);
    } finally {
      await s.l5d.setValues({});
    }
  });
});

describe('the proxy as a regular container (proxy.nativeSidecar=false), and the pod annotation that turns it native', () => {
  beforeAll(() => s.l5d.setValues({ proxy: { nativeSidecar: false } }));
  afterAll(() => s.l5d.setValues({}));

  it('verified node: linkerd-proxy stays first among the containers, linkerd-init replaced', async () => {
    const p = await create('regular', 'node-verified');
    expect(inits(p)).toEqual(['linkerd-network-validator']);
    expect(apps(p)).toEqual(['linkerd-proxy', 'app']);
    // Without native sidecars the injector holds the app back until the proxy is ready (linkerd-await).
    expect(named(p.spec!.containers, 'linkerd-proxy')!.lifecycle?.postStart?.exec?.command?.[0]).toBe(
      '/usr/lib/linkerd/linkerd-await',
    );
    expect(meshgateStatus(p)).toMatchObject({ reason: 'node_verified', removedInitContainers: ['linkerd-init'] });
  });

  it('config.alpha.linkerd.io/proxy-enable-native-sidecar=true on the pod: a native sidecar again, admitted', async () => {
    const annotations = { 'config.alpha.linkerd.io/proxy-enable-native-sidecar': 'true' };
    expect(inits(await linkerdAlone('alone-native', annotations))).toEqual(['linkerd-init', 'linkerd-proxy']);
    const p = await create('native-by-annotation', 'node-verified', { annotations });
    expect(inits(p)).toEqual(['linkerd-network-validator', 'linkerd-proxy']);
    expect(apps(p)).toEqual(['app']);
  });
});

describe("CNI mode (cniEnabled=true): the injector's own linkerd-network-validator", () => {
  beforeAll(() => s.l5d.setValues({ cniEnabled: true }));
  afterAll(() => s.l5d.setValues({}));

  it("verified node: Linkerd's validator kept as it is, nothing removed", async () => {
    const alone = await linkerdAlone('alone-cni');
    expect(inits(alone)).toEqual(['linkerd-network-validator', 'linkerd-proxy']);
    const p = await create('cni-verified', 'node-verified');
    expect(inits(p)).toEqual(['linkerd-network-validator', 'linkerd-proxy']);
    expect(named(p.spec!.initContainers, 'linkerd-network-validator')!.image).toBe(
      named(alone.spec!.initContainers, 'linkerd-network-validator')!.image,
    );
    expect(meshgateStatus(p)).toMatchObject({ mode: 'cni', reason: 'node_verified' });
    expect(meshgateStatus(p)).not.toHaveProperty('removedInitContainers');
  });

  it('unverified node: refused, there is no linkerd-init to fall back to', async () => {
    expect(await refusal(create('cni-unverified', 'node-unverified'))).toMatch(/\[(node_unverified|no_fallback)\]/);
  });
});

describe("what users set through Linkerd's own annotations: written by the injector, admitted", () => {
  // Sizing, logging, timeouts, ports the proxy treats as opaque, the shutdown hook, and an exclusion within
  // meshgate's policy (exclusions.outboundCidrCoverage 8: at most one /8). Each makes the injector write other
  // fields or values; none is a reason to refuse a pod.
  const tuned = {
    'config.linkerd.io/proxy-cpu-request': '50m',
    'config.linkerd.io/proxy-memory-limit': '128Mi',
    'config.linkerd.io/proxy-log-level': 'debug',
    'config.linkerd.io/proxy-log-format': 'json',
    'config.linkerd.io/opaque-ports': '5432',
    'config.linkerd.io/proxy-outbound-connect-timeout': '2s',
    'config.linkerd.io/access-log': 'json',
    'config.alpha.linkerd.io/proxy-wait-before-exit-seconds': '5',
    'config.linkerd.io/skip-outbound-ports': '443',
    'config.linkerd.io/skip-subnets': '10.0.0.0/8',
  };
  for (const [what, values] of [
    ['native sidecar', {}],
    ['regular container', { proxy: { nativeSidecar: false } }],
  ] as const) {
    it(`${what}: verified node, linkerd-init replaced; the exclusions stay for linkerd-cni to read`, async () => {
      await s.l5d.setValues(values);
      try {
        const alone = await linkerdAlone(`alone-tuned-${what.replaceAll(' ', '-')}`, tuned);
        const proxy = [...(alone.spec!.initContainers ?? []), ...alone.spec!.containers].find(
          (c) => c.name === 'linkerd-proxy',
        )!;
        expect(proxy.resources).toMatchObject({ requests: { cpu: '50m' }, limits: { memory: '128Mi' } });
        expect(named(alone.spec!.initContainers, 'linkerd-init')!.args).toContain('--subnets-to-ignore');
        const p = await create(`tuned-${what.replaceAll(' ', '-')}`, 'node-verified', { annotations: tuned });
        expect(inits(p)[0]).toBe('linkerd-network-validator');
        expect(p.metadata!.annotations!['config.linkerd.io/skip-subnets']).toBe('10.0.0.0/8');
        expect(meshgateStatus(p)).toMatchObject({ reason: 'node_verified', removedInitContainers: ['linkerd-init'] });
      } finally {
        await s.l5d.setValues({});
      }
    });
  }
});

describe('what a pod author makes the injector write, or writes instead of it: refused', () => {
  const cases: Array<[string, Record<string, string>, RegExp]> = [
    [
      'another proxy UID (config.linkerd.io/proxy-uid)',
      { 'config.linkerd.io/proxy-uid': '1000' },
      /linkerd-proxy is not the real one: it runs as UID 1000, but the redirect exempts the proxy UID 2102 \[impostor_container\]/,
    ],
    [
      'a proxy image of its own (config.linkerd.io/proxy-image)',
      { 'config.linkerd.io/proxy-image': 'registry.example/proxy' },
      /image registry\.example\/proxy:git-b24cd405 is not one of the recognised .* \[impostor_container\]/,
    ],
    [
      "the app's GID exempted (config.linkerd.io/proxy-gid)",
      { 'config.linkerd.io/proxy-gid': '1000' },
      /runAsGroup is 1000, the proxy's GID.*\[proxy_identity\]/,
    ],
    [
      'all of IPv4 skipped (config.linkerd.io/skip-subnets)',
      { 'config.linkerd.io/skip-subnets': '0.0.0.0/0' },
      /cover all of IPv4.*\[exclusion_refused\]/,
    ],
    [
      'Linkerd told to skip the pod (linkerd.io/inject=disabled)',
      { 'linkerd.io/inject': 'disabled' },
      /linkerd\.io\/inject=disabled.*\[opt_out_refused\]/,
    ],
  ];
  cases.forEach(([what, annotations, message], i) => {
    it(what, async () => {
      expect(await refusal(create(`author-${i}`, 'node-verified', { annotations }))).toMatch(message);
    });
  });

  it('its own linkerd-proxy container (Linkerd then skips the pod as injected already)', async () => {
    const pod = restrictedPod('own-proxy', { nodeName: 'node-verified' });
    pod.spec!.containers.unshift({
      name: 'linkerd-proxy',
      image: 'registry.example/app:1',
      securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] }, runAsUser: 2102 },
    });
    expect(
      await refusal(linkerdAlone('own-proxy-alone').then(() => create('own-proxy', 'node-verified', { pod }))),
    ).toMatch(/container linkerd-proxy is not the real one: image registry\.example\/app:1 .*\[impostor_container\]/);
  });
});
