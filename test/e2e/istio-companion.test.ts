/**
 * meshgate (mesh istio, companion) next to Istio's REAL injection webhook (istio.io/istio 1.27.0's pkg/kube/inject
 * with the istio-discovery chart's template and values, built by scripts/build-istio.sh) on a real kube-apiserver:
 * - verified node: istio-init gone, meshgate's istio-validation in its place, sidecar.istio.io/status consistent,
 *   Pod Security `restricted` passes;
 * - unverified node: refused with the reason, or istio-init kept (onUnverifiedNode validate);
 * - node unknown: pinned to verified nodes, scheduled there by the real scheduler;
 * - the same pod whichever webhook the apiserver calls first (configurations are called in name order; meshgate
 *   asks for reinvocation when it runs first).
 */
import { describe, expect, it } from 'vitest';
import { AppsV1Api, type V1Pod } from '@kubernetes/client-node';
import { waitForPodsRunning } from './harness/index.ts';
import { apiError, createNamespace, mutateCalls, restrictedPod, startMeshgate } from './meshgate.ts';
import { shared } from './harness/shared.ts';
import { startIstioCompanion, VERIFIED_AND_NOT } from './harness/clusters.ts';
import { deployment } from './workloads.ts';

/**
 * The cluster this file's tests share: a verified and an unverified node, Istio's real injector and meshgate called
 * after it, in a namespace opted in for both (Istio's injector, meshgate's webhooks) with Pod Security restricted.
 */
const s = shared(async (stopLater) => {
  const cluster = await startIstioCompanion(stopLater, VERIFIED_AND_NOT);
  await createNamespace(cluster.cp, 'mesh', {
    'istio-injection': 'enabled',
    'meshgate.io/inject': 'enabled',
    'pod-security.kubernetes.io/enforce': 'restricted',
  });
  return cluster;
});

const inits = (p: V1Pod) => (p.spec?.initContainers ?? []).map((c) => c.name);
/** The containers, with the ServiceAccount token volume's generated suffix blanked (each create draws its own). */
const containers = (p: V1Pod) =>
  JSON.parse(
    JSON.stringify({ init: p.spec?.initContainers, containers: p.spec?.containers }).replace(
      /kube-api-access-[a-z0-9]{5}/g,
      'kube-api-access-*',
    ),
  );
const TOKEN_PATH = '/var/run/secrets/kubernetes.io/serviceaccount';
const status = (p: V1Pod) =>
  JSON.parse(p.metadata!.annotations!['sidecar.istio.io/status']) as { initContainers: string[] };

async function create(name: string, extra: Partial<V1Pod['spec']> = {}): Promise<V1Pod> {
  return s.core.createNamespacedPod({ namespace: 'mesh', body: restrictedPod(name, extra) });
}

describe("meshgate next to Istio's own injector", () => {
  it('verified node: istio-init replaced by the validator, status truthful, Pod Security restricted passes', async () => {
    const p = await create('on-verified', { nodeName: 'node-verified' });
    expect(inits(p)).toEqual(['istio-validation', 'istio-proxy']); // Istio 1.27 makes the proxy a native sidecar on 1.34 kubelets
    const validation = p.spec!.initContainers![0];
    expect(validation.image).toBe('ghcr.io/meshgate/meshgate:0.1.0');
    expect(validation.securityContext).toMatchObject({ runAsUser: 1337, runAsGroup: 1337, runAsNonRoot: true });
    expect(JSON.stringify(p.spec)).not.toContain('NET_ADMIN');
    expect(p.spec!.initContainers![1].image).toBe('docker.io/istio/proxyv2:1.27.0');
    expect(status(p).initContainers).toEqual(['istio-validation', 'istio-proxy']);
    expect(JSON.parse(p.metadata!.annotations!['meshgate.io/status'])).toMatchObject({
      mode: 'cni',
      reason: 'node_verified',
      removedInitContainers: ['istio-init'],
    });
    expect(p.metadata!.labels!['meshgate.io/redirect']).toBe('cni');
  });

  it('unverified node: refused with the reason (reject)', async () => {
    const err = await create('on-unverified', { nodeName: 'node-unverified' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(apiError(err)).toMatch(
      /node node-unverified has no verified CNI chain \(mesh_plugin_missing: .*\[node_unverified\]/,
    );
  });

  it('node unknown: pinned to verified nodes and scheduled there', async () => {
    const spec = restrictedPod('web').spec!;
    await s.cp.kc
      .makeApiClient(AppsV1Api)
      .createNamespacedDeployment({ namespace: 'mesh', body: deployment('web', spec, 2) });
    const pods = await waitForPodsRunning(s.cp.kc, 'mesh', 'app=web', 2, { timeoutMs: 90_000 });
    for (const p of pods) {
      expect(p.spec!.nodeName).toBe('node-verified');
      expect(inits(p)).toEqual(['istio-validation', 'istio-proxy']);
      expect(
        p.spec!.affinity!.nodeAffinity!.requiredDuringSchedulingIgnoredDuringExecution!.nodeSelectorTerms,
      ).toContainEqual({ matchExpressions: [{ key: 'meshgate.io/cni-verified', operator: 'In', values: ['true'] }] });
    }
  });

  it('whichever webhook runs first, the pod comes out the same (meshgate first is reinvoked after Istio)', async () => {
    const after = await s.core.createNamespacedPod({
      namespace: 'mesh',
      body: restrictedPod('order-after', { nodeName: 'node-verified' }),
      dryRun: 'All',
    });
    await s.mg.unregister('z-meshgate');
    await s.mg.register({ name: 'a-meshgate' });
    try {
      const before = s.mg.reviews.length;
      const first = await s.core.createNamespacedPod({
        namespace: 'mesh',
        body: restrictedPod('order-after', { nodeName: 'node-verified' }),
        dryRun: 'All',
      });
      expect(inits(first)).toEqual(inits(after));
      expect(first.metadata!.annotations).toEqual(after.metadata!.annotations);
      // The ServiceAccount token mount included: meshgate adds it to the validator in either order.
      expect(containers(first)).toEqual(containers(after));
      const calls = s.mg.reviews
        .slice(before)
        .filter((r) => r.route === 'mutate')
        .map((r) => r.verdict.reason);
      // Called before Istio (nothing to adjust yet), then again after Istio injected.
      expect(calls).toEqual(['no_proxy_yet', 'node_verified']);
    } finally {
      await s.mg.unregister('a-meshgate');
      await s.mg.register({ name: 'z-meshgate' });
    }
  });

  it("one mutate call per pod: meshgate's patch holds the ServiceAccount token mounts the plugin's re-run would add", async () => {
    const before = s.mg.reviews.length;
    const p = await create('called-once', { nodeName: 'node-verified' });
    // Twice before meshgate added the mounts: the re-run gave istio-validation and istio-proxy theirs, and the
    // apiserver called meshgate again for that change.
    expect(mutateCalls(s.mg, before, 'called-once')).toEqual(['node_verified']);
    const token = (c: { volumeMounts?: Array<{ mountPath: string }> }) =>
      (c.volumeMounts ?? []).filter((m) => m.mountPath === TOKEN_PATH).length;
    expect([...p.spec!.initContainers!, ...p.spec!.containers].map((c) => [c.name, token(c)])).toEqual([
      ['istio-validation', 1],
      ['istio-proxy', 1],
      ['app', 1],
    ]);
  });

  it('a pod Istio skipped (its own opt-out label) is refused, never admitted unmeshed', async () => {
    const body = restrictedPod('opted-out', { nodeName: 'node-verified' });
    body.metadata!.labels = { ...body.metadata!.labels, 'sidecar.istio.io/inject': 'false' };
    const err = await s.core.createNamespacedPod({ namespace: 'mesh', body }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(apiError(err)).toMatch(/sidecar\.istio\.io\/inject=false.*\[opt_out_refused\]/);
  });
});

describe('onUnverifiedNode validate, next to Istio', () => {
  it('keeps istio-init on an unverified node and adds the validator after it', async () => {
    const alt = await startMeshgate(s.cp, { redirect: { onUnverifiedNode: 'validate' } }, 'istio');
    await s.mg.unregister('z-meshgate');
    await alt.register({ name: 'z-meshgate-validate' });
    try {
      await createNamespace(s.cp, 'privileged', { 'istio-injection': 'enabled', 'meshgate.io/inject': 'enabled' });
      const p = await s.core.createNamespacedPod({
        namespace: 'privileged',
        body: restrictedPod('fallback', { nodeName: 'node-unverified' }),
      });
      expect(inits(p)).toEqual(['istio-init', 'istio-validation', 'istio-proxy']);
      expect(status(p).initContainers).toEqual(['istio-init', 'istio-proxy']);
      expect(JSON.parse(p.metadata!.annotations!['meshgate.io/status'])).toMatchObject({
        mode: 'init',
        reason: 'node_unverified_validate',
      });
    } finally {
      await alt.unregister('z-meshgate-validate');
      await alt.stop();
      await s.mg.register({ name: 'z-meshgate' });
    }
  });
});
