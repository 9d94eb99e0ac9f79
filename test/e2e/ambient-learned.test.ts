/**
 * Istio ambient's enrolment learned from istio-cni itself (issue 26): the webhook watches istio-cni-config in
 * config.learnImages' namespaces (default istio-system) and guards the pods istio-cni would enrol by its selectors,
 * not only by the ones copied into meshgate's configuration. The ConfigMap is the REAL istio-cni chart of Istio
 * 1.27.0 rendered with a custom enablement selector, created in a real kube-apiserver; the admission path reads the
 * watch's cache only.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CoreV1Api, type V1Pod } from '@kubernetes/client-node';
import { startControlPlane, waitFor, type ControlPlane } from './harness/index.ts';
import { apiError, createNamespace, publishVerdict, restrictedPod, startMeshgate, type Meshgate } from './meshgate.ts';
import { istioCniConfigData } from '../istio/cni-chart.ts';

const CUSTOM = [{ namespaceSelector: { matchLabels: { 'mesh.example/ambient': 'on' } } }];
let cp: ControlPlane;
let mg: Meshgate;
let core: CoreV1Api;

beforeAll(async () => {
  cp = await startControlPlane({ nodes: [{ name: 'node-verified', kubeletVersion: 'v1.34.2' }] });
  core = cp.kc.makeApiClient(CoreV1Api);
  await publishVerdict(cp, 'node-verified', true);
  await core.createNamespace({ body: { metadata: { name: 'istio-system' } } });
  mg = await startMeshgate(cp, { ambient: { enabled: true } }, 'istio');
  await mg.register();
  // Ambient by the cluster's own selector, not by Istio's default label.
  await createNamespace(cp, 'team', { 'meshgate.io/inject': 'enabled', 'mesh.example/ambient': 'on' });
}, 300_000);

afterAll(async () => {
  await mg?.stop();
  await cp?.stop();
});

let n = 0;
async function create(): Promise<V1Pod | string> {
  try {
    return await core.createNamespacedPod({ namespace: 'team', body: restrictedPod(`web-${n++}`) });
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
    await core.createNamespacedConfigMap({
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
    await core.deleteNamespacedConfigMap({ name: 'istio-cni-config', namespace: 'istio-system' });
    const refusal = await waitFor('the pod refused again', async () => {
      const got = await create();
      return typeof got === 'string' && got;
    });
    expect(refusal).toEqual(expect.stringContaining('proxy_missing'));
  });
});
