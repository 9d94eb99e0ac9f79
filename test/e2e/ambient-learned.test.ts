/**
 * Istio ambient's enrolment learned from istio-cni itself (issue 26): the webhook watches istio-cni-config in
 * config.learnImages' namespaces (default istio-system) and guards the pods istio-cni would enrol by its selectors,
 * not only by the ones copied into meshgate's configuration. The ConfigMap is the REAL istio-cni chart of Istio
 * 1.27.0 rendered with a custom enablement selector, created in a real kube-apiserver; the admission path reads the
 * watch's cache only.
 */
import { describe, expect, it } from 'vitest';
import type { V1Pod } from '@kubernetes/client-node';
import { waitFor } from './harness/index.ts';
import { apiError, createNamespace, restrictedPod, startMeshgate } from './meshgate.ts';
import { istioCniConfigData } from '../istio/cni-chart.ts';
import { shared } from './harness/shared.ts';
import { startVerdictCluster } from './harness/clusters.ts';

const CUSTOM = [{ namespaceSelector: { matchLabels: { 'mesh.example/ambient': 'on' } } }];
/** The cluster this file's tests share: a verified node, istio-system, and meshgate for Istio with ambient on. */
const s = shared(async (stopLater) => {
  const cluster = await startVerdictCluster(stopLater, { 'node-verified': true });
  await cluster.core.createNamespace({ body: { metadata: { name: 'istio-system' } } });
  const mg = stopLater(await startMeshgate(cluster.cp, { ambient: { enabled: true } }, 'istio', { register: {} }));
  // Ambient by the cluster's own selector, not by Istio's default label.
  await createNamespace(cluster.cp, 'team', { 'meshgate.io/inject': 'enabled', 'mesh.example/ambient': 'on' });
  return { ...cluster, mg };
});

let n = 0;
async function create(): Promise<V1Pod | string> {
  try {
    return await s.core.createNamespacedPod({ namespace: 'team', body: restrictedPod(`web-${n++}`) });
  } catch (err) {
    return apiError(err);
  }
}
const ambientValidatorFirst = (p: V1Pod | string) =>
  typeof p !== 'string' && p.spec?.initContainers?.[0]?.args?.includes('--ambient') === true;

describe("ambient enrolment learned from Istio's istio-cni-config", () => {
  it("before istio-cni-config exists, meshgate's configured (default) selectors apply: not ambient, no sidecar: refused", async () => {
    // The namespace cache may still be filling: wait for a decision that is not "namespace unknown".
    let got: V1Pod | string = '';
    await waitFor('a decision on the pod', async () => {
      got = await create();
      return typeof got !== 'string' || !got.includes('ambient_namespace_unknown');
    });
    expect(got).toEqual(expect.stringContaining('proxy_missing'));
  });

  it("with the chart's istio-cni-config (a custom namespace selector), the same pod is ambient: validator first", async () => {
    const data = await istioCniConfigData({ ambient: { enabled: true, enablementSelectors: CUSTOM } });
    await s.core.createNamespacedConfigMap({
      namespace: 'istio-system',
      body: { metadata: { name: 'istio-cni-config' }, data },
    });
    const pod = await waitFor('an ambient pod admitted', async () => {
      const got = await create();
      return ambientValidatorFirst(got) && (got as V1Pod);
    });
    expect(pod.spec?.initContainers?.[0]?.name).toBe('istio-validation');
  });

  it('once istio-cni-config is deleted, the configured selectors apply again', async () => {
    await s.core.deleteNamespacedConfigMap({ name: 'istio-cni-config', namespace: 'istio-system' });
    const refusal = await waitFor('the pod refused again', async () => {
      const got = await create();
      return typeof got === 'string' && got;
    });
    expect(refusal).toEqual(expect.stringContaining('proxy_missing'));
  });
});
