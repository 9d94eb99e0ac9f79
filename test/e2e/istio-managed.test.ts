/**
 * Managed Istio and revisions (issue 23 §1): Istio's REAL injector (istio.io/istio 1.27.0, its istio-discovery chart)
 * rendered with AKS's add-on hub injects mcr.microsoft.com/oss/istio/proxyv2, which no configuration of meshgate
 * names. meshgate learns it from Istio's own istio-sidecar-injector ConfigMap (config.learnImages, default
 * istio-system) through a watch — before the ConfigMap exists the pod is an impostor and refused; once it exists the
 * same pod is admitted with no configuration beyond `mesh: istio`. A second revision (ConfigMap
 * istio-sidecar-injector-canary, GKE's ASM hub, rendered by the same chart) is trusted side by side once its
 * MutatingWebhookConfiguration calls the canary's istiod (a ConfigMap no installed injector reads is not: issue 33
 * §8), and no longer once its ConfigMap is deleted. The control plane is learned the same way (issue 33 §3): the
 * canary's proxies use istiod-canary, refused until the revision is installed.
 */
import { AdmissionregistrationV1Api, type V1Container, type V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { renderIstioDiscovery, waitFor } from './harness/index.ts';
import { apiError, createNamespace, restrictedPod } from './meshgate.ts';
import { shared } from './harness/shared.ts';
import { startIstioCompanion } from './harness/clusters.ts';

const AKS_HUB = 'mcr.microsoft.com/oss/istio';
const ASM_HUB = 'gcr.io/gke-release/asm';
/** The cluster this file's tests share: Istio's real injector with AKS's images, and meshgate called after it. */
const s = shared(async (stopLater) => {
  const istio = { hub: AKS_HUB, tag: '1.27.0-distroless' };
  const cluster = await startIstioCompanion(stopLater, { 'node-verified': true }, { istio });
  // The namespace of Istio's control plane, where meshgate finds its injector's ConfigMap once there is one.
  await cluster.core.createNamespace({ body: { metadata: { name: 'istio-system' } } });
  await createNamespace(cluster.cp, 'mesh', { 'istio-injection': 'enabled', 'meshgate.io/inject': 'enabled' });
  await createNamespace(cluster.cp, 'canary', { 'meshgate.io/inject': 'enabled' });
  return cluster;
});

/**
 * In namespace mesh (Istio's injector, then meshgate), or, given a pod, in canary (meshgate only: the pod is
 * injected already, and Istio's injector would inject it again with its own revision's image).
 */
const create = (name: string, body?: V1Pod) =>
  s.core
    .createNamespacedPod({
      namespace: body ? 'canary' : 'mesh',
      body: body ?? restrictedPod(name, { nodeName: 'node-verified' }),
    })
    .then(
      (p) => ({ pod: p, error: undefined }),
      (e) => ({ pod: undefined, error: apiError(e) }),
    );

const injectorConfigMap = (name: string, data: { config: string; values: string }, rev: string) =>
  s.core.createNamespacedConfigMap({
    namespace: 'istio-system',
    body: { metadata: { name, labels: { 'istio.io/rev': rev } }, data },
  });

/**
 * A revision's MutatingWebhookConfiguration as istiod's chart renders it (calling Service istiod-<rev> in
 * istio-system), selecting no namespace here: what makes the revision's ConfigMaps an installed injector's (issue 33 §8).
 */
const revisionWebhook = (rev: string) =>
  s.cp.kc.makeApiClient(AdmissionregistrationV1Api).createMutatingWebhookConfiguration({
    body: {
      metadata: { name: `istio-sidecar-injector-${rev}`, labels: { 'istio.io/rev': rev } },
      webhooks: [
        {
          name: 'rev.namespace.sidecar-injector.istio.io',
          admissionReviewVersions: ['v1'],
          sideEffects: 'None',
          failurePolicy: 'Ignore',
          clientConfig: { service: { namespace: 'istio-system', name: `istiod-${rev}`, path: '/inject' } },
          rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
          namespaceSelector: { matchLabels: { 'istio.io/rev': rev } },
        },
      ],
    },
  });

describe("images learned from Istio's own injector ConfigMaps", () => {
  let admitted: V1Pod;

  it("before Istio's ConfigMap exists, the add-on's image is not trusted: refused as an impostor", async () => {
    const r = await create('before');
    expect(r.error).toMatch(
      /mcr\.microsoft\.com\/oss\/istio\/proxyv2:1\.27\.0-distroless is not one of the recognised .*\[impostor_container\]/,
    );
  });

  it('with istio-sidecar-injector in istio-system, the same pod is admitted: nothing configured but mesh: istio', async () => {
    await injectorConfigMap(
      'istio-sidecar-injector',
      { config: s.istio.rendered.injectorConfig, values: s.istio.rendered.injectorValues },
      'default',
    );
    let n = 0;
    admitted = await waitFor('a pod admitted once meshgate has learned the image', async () => {
      const r = await create(`after-${n++}`);
      return r.pod;
    });
    const proxy = [...(admitted.spec?.initContainers ?? []), ...(admitted.spec?.containers ?? [])].find(
      (c) => c.name === 'istio-proxy',
    );
    expect(proxy?.image).toBe(`${AKS_HUB}/proxyv2:1.27.0-distroless`);
    expect(JSON.parse(admitted.metadata!.annotations!['meshgate.io/status'])).toMatchObject({
      reason: 'node_verified',
    });
  });

  it('a second revision (istio-sidecar-injector-canary, another hub) is trusted beside it, until its ConfigMap goes', async () => {
    // The chart rendered for the canary's hub. The harness finds the default revision's ConfigMap names; a revision
    // only adds the suffix, which this test gives the ConfigMap it creates.
    const canary = await renderIstioDiscovery(s.cp, { hub: ASM_HUB, tag: '1.27.0-asm.1' });
    expect(JSON.parse(canary.injectorValues)).toMatchObject({ global: { hub: ASM_HUB } });
    // The pod the real injector made, with the canary revision's images (what its injector would write); its
    // sidecar.istio.io/status annotation makes Istio's injector leave it as it is.
    const asCanary = (name: string): V1Pod => {
      const p = structuredClone(admitted);
      const retag = (cs: V1Container[]) =>
        cs.map((c) => (c.image?.startsWith(AKS_HUB) ? { ...c, image: `${ASM_HUB}/proxyv2:1.27.0-asm.1` } : c));
      // The canary revision's injector points its proxies at its own istiod (injection-template.yaml CA_ADDR).
      const caAddr = (cs: V1Container[]) =>
        cs.map((c) =>
          c.name === 'istio-proxy'
            ? {
                ...c,
                env: c.env?.map((e) =>
                  e.name === 'CA_ADDR' ? { name: 'CA_ADDR', value: 'istiod-canary.istio-system.svc:15012' } : e,
                ),
              }
            : c,
        );
      p.spec!.containers = caAddr(retag(p.spec!.containers));
      p.spec!.initContainers = caAddr(retag(p.spec!.initContainers ?? []));
      p.metadata = { name, labels: p.metadata?.labels, annotations: p.metadata?.annotations };
      delete p.status;
      return p;
    };
    expect((await create('canary-before', asCanary('canary-before'))).error).toMatch(/\[impostor_container\]/);
    await injectorConfigMap(
      'istio-sidecar-injector-canary',
      {
        config: canary.injectorConfig,
        values: JSON.stringify({ ...JSON.parse(canary.injectorValues), revision: 'canary' }),
      },
      'canary',
    );
    // Issue 33 §8: a ConfigMap alone is no installed revision. Anyone who may write ConfigMaps in istio-system could
    // otherwise name an image; until a MutatingWebhookConfiguration calls the canary's istiod it is not trusted.
    await new Promise((r) => setTimeout(r, 3_000));
    expect((await create('canary-no-injector', asCanary('canary-no-injector'))).error).toMatch(
      /\[impostor_container\]/,
    );
    await revisionWebhook('canary');
    let n = 0;
    await waitFor(
      'the canary revision trusted',
      async () => (await create(`canary-${n}`, asCanary(`canary-${n++}`))).pod,
    );
    await s.core.deleteNamespacedConfigMap({ name: 'istio-sidecar-injector-canary', namespace: 'istio-system' });
    let m = 0;
    const error = await waitFor(
      'the canary revision no longer trusted',
      async () => (await create(`gone-${m}`, asCanary(`gone-${m++}`))).error,
    );
    expect(error).toMatch(/\[impostor_container\]/);
  });
});
