/**
 * The pods/binding guard through the real scheduler: a CNI-mode pod whose required affinity was removed by a
 * later mutating webhook is still never bound to an unverified node; and how often the guard's pod cache
 * misses (one GET each) when a Deployment's pods are bound within milliseconds of creation.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'node:https';
import { AppsV1Api, CoreV1Api } from '@kubernetes/client-node';
import { startControlPlane, waitFor, waitForPodsRunning, type ControlPlane } from './harness/index.ts';
import { createNamespace, publishVerdict, restrictedPod, startMeshgate, type Meshgate } from './meshgate.ts';
import { startStripWebhook } from './strip-webhook.ts';

let cp: ControlPlane;
let mg: Meshgate;
let strip: { stop(): Promise<void> };
let core: CoreV1Api;

beforeAll(async () => {
  cp = await startControlPlane({
    nodes: [
      { name: 'node-verified', kubeletVersion: 'v1.34.2' },
      { name: 'node-unverified', kubeletVersion: 'v1.34.2' },
    ],
  });
  core = cp.kc.makeApiClient(CoreV1Api);
  // The node agent's verdicts (label, condition, evidence), published through its own publisher.
  await publishVerdict(cp, 'node-verified', true);
  await publishVerdict(cp, 'node-unverified', false);
  mg = await startMeshgate(cp);
  await mg.register();
  await createNamespace(cp, 'mesh', { 'meshgate.io/inject': 'enabled' });
  strip = await startStripWebhook(cp, 'node-unverified');
}, 300_000);

afterAll(async () => {
  await strip?.stop();
  await mg?.stop();
  await cp?.stop();
});

function metrics(): Promise<string> {
  return new Promise((resolve, reject) => {
    request(`${mg.server.url}/metrics`, { ca: mg.server.ca }, (res) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve(body));
    })
      .on('error', reject)
      .end();
  });
}

const counter = (text: string, source: string) =>
  Number(new RegExp(`meshgate_binding_pod_lookups_total\\{source="${source}"\\} (\\d+)`).exec(text)?.[1] ?? 0);

describe('pods/binding guard', () => {
  it('never binds a CNI-mode pod to the unverified node even when a later webhook removed its affinity', async () => {
    const pod = restrictedPod('stripped');
    pod.metadata!.labels!.strip = 'yes';
    const created = await core.createNamespacedPod({ namespace: 'mesh', body: pod });
    // meshgate chose CNI mode and added the required affinity; the hostile webhook replaced it with a preference.
    expect(created.metadata!.labels!['meshgate.io/redirect']).toBe('cni');
    expect(created.spec!.affinity!.nodeAffinity!.requiredDuringSchedulingIgnoredDuringExecution).toBeUndefined();

    const event = await waitFor(
      'an event showing the binding to node-unverified was denied',
      async () => {
        const events = await core.listNamespacedEvent({
          namespace: 'mesh',
          fieldSelector: 'involvedObject.name=stripped',
        });
        return events.items.find((e) =>
          /meshgate: pod mesh\/stripped relies on the CNI plugin and cannot be bound to node node-unverified/.test(
            e.message ?? '',
          ),
        );
      },
      { timeoutMs: 45_000 },
    );
    expect(event.type).toBe('Warning');
    expect((await core.readNamespacedPod({ namespace: 'mesh', name: 'stripped' })).spec!.nodeName).toBeUndefined();

    // Once the node agent says the node is verified, the scheduler's next attempt is allowed.
    await publishVerdict(cp, 'node-unverified', true);
    const [running] = await waitForPodsRunning(cp.kc, 'mesh', 'app=stripped', 1, { timeoutMs: 90_000 });
    expect(running.spec!.nodeName).toBe('node-unverified');
    await publishVerdict(cp, 'node-unverified', false);
  });

  it("a DaemonSet's pod for the unverified node waits unbound, and its pod for the verified node runs", async () => {
    // Refusing the pod for node-unverified would stop the DaemonSet controller's slow-start batch: its pod for
    // node-verified would wait out the controller's backoff whenever node-unverified came first.
    const apps = cp.kc.makeApiClient(AppsV1Api);
    await apps.createNamespacedDaemonSet({
      namespace: 'mesh',
      body: {
        apiVersion: 'apps/v1',
        kind: 'DaemonSet',
        metadata: { name: 'agent' },
        spec: {
          selector: { matchLabels: { app: 'agent' } },
          template: { metadata: { labels: { app: 'agent' } }, spec: restrictedPod('agent').spec },
        },
      } as never,
    });
    const [first] = await waitForPodsRunning(cp.kc, 'mesh', 'app=agent', 1);
    expect(first.spec!.nodeName).toBe('node-verified');
    const waiting = await waitFor('the pod for node-unverified, Pending', async () => {
      const pods = (await core.listNamespacedPod({ namespace: 'mesh', labelSelector: 'app=agent' })).items;
      return pods.find((p) => JSON.stringify(p.spec?.affinity ?? {}).includes('"node-unverified"'));
    });
    expect(waiting.spec!.nodeName).toBeUndefined();
    expect(waiting.metadata!.labels!['meshgate.io/redirect']).toBe('cni');
    expect(JSON.parse(waiting.metadata!.annotations!['meshgate.io/status'])).toMatchObject({
      reason: 'node_unverified_wait',
      node: 'node-unverified',
      affinity: true,
    });
    for (const term of waiting.spec!.affinity!.nodeAffinity!.requiredDuringSchedulingIgnoredDuringExecution!
      .nodeSelectorTerms)
      expect(term.matchExpressions).toContainEqual({
        key: 'meshgate.io/cni-verified',
        operator: 'In',
        values: ['true'],
      });
    const refused = (await core.listNamespacedEvent({ namespace: 'mesh', fieldSelector: 'reason=FailedCreate' })).items;
    expect(refused.filter((e) => e.involvedObject.name === 'agent').map((e) => e.message)).toEqual([]);

    // The node is verified: the scheduler binds the waiting pod there.
    await publishVerdict(cp, 'node-unverified', true);
    const pods = await waitForPodsRunning(cp.kc, 'mesh', 'app=agent', 2, { timeoutMs: 90_000 });
    expect(pods.map((p) => p.spec!.nodeName).sort()).toEqual(['node-unverified', 'node-verified']);
    await publishVerdict(cp, 'node-unverified', false);
    await apps.deleteNamespacedDaemonSet({ namespace: 'mesh', name: 'agent' });
    await waitFor(
      'the DaemonSet pods gone',
      async () => (await core.listNamespacedPod({ namespace: 'mesh', labelSelector: 'app=agent' })).items.length === 0,
    );
  });

  it('measures how often the pod cache misses under a burst of bindings', async () => {
    const before = await metrics();
    const replicas = 40;
    await cp.kc.makeApiClient(AppsV1Api).createNamespacedDeployment({
      namespace: 'mesh',
      body: {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'burst' },
        spec: {
          replicas,
          selector: { matchLabels: { app: 'burst' } },
          template: { metadata: { labels: { app: 'burst' } }, spec: restrictedPod('burst').spec },
        },
      } as never,
    });
    const pods = await waitForPodsRunning(cp.kc, 'mesh', 'app=burst', replicas, { timeoutMs: 120_000 });
    expect(pods.every((p) => p.spec!.nodeName === 'node-verified')).toBe(true);
    const after = await metrics();
    const hits = counter(after, 'cache') - counter(before, 'cache');
    const gets = counter(after, 'get') - counter(before, 'get');
    const failed = counter(after, 'get_failed') - counter(before, 'get_failed');
    console.log(
      `[binding-guard] ${replicas} bindings: ${hits} cache hits, ${gets} GETs after a miss (${((100 * gets) / (hits + gets)).toFixed(1)}% miss), ${failed} failed GETs`,
    );
    expect(hits + gets).toBeGreaterThanOrEqual(replicas);
    expect(failed).toBe(0);
  });
});
