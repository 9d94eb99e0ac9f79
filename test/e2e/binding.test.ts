/**
 * The pods/binding guard through the real scheduler: a CNI-mode pod whose required affinity was removed by a
 * later mutating webhook is still never bound to an unverified node; and how often the guard's pod cache
 * misses (one GET each) when a Deployment's pods are bound within milliseconds of creation.
 */
import { describe, expect, it } from 'vitest';
import { request } from 'node:https';
import { AppsV1Api } from '@kubernetes/client-node';
import { waitFor, waitForPodsRunning } from './harness/index.ts';
import { createNamespace, publishVerdict, restrictedPod } from './meshgate.ts';
import { startStripWebhook } from './strip-webhook.ts';
import { shared } from './harness/shared.ts';
import { startGuardedCluster, VERIFIED_AND_NOT } from './harness/clusters.ts';
import { deployment } from './workloads.ts';

/**
 * The cluster this file's tests share: a verified and an unverified node, meshgate injecting its own templates, and
 * a hostile webhook after it that strips the required node affinity of pods labelled strip=yes.
 */
const s = shared(async (stopLater) => {
  const cluster = await startGuardedCluster(stopLater, VERIFIED_AND_NOT);
  await createNamespace(cluster.cp, 'mesh', { 'meshgate.io/inject': 'enabled' });
  stopLater(await startStripWebhook(cluster.cp, 'node-unverified'));
  return cluster;
});

function metrics(): Promise<string> {
  return new Promise((resolve, reject) => {
    request(`${s.mg.server.url}/metrics`, { ca: s.mg.server.ca }, (res) => {
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
    const created = await s.core.createNamespacedPod({ namespace: 'mesh', body: pod });
    // meshgate chose CNI mode and added the required affinity; the hostile webhook replaced it with a preference.
    expect(created.metadata!.labels!['meshgate.io/redirect']).toBe('cni');
    expect(created.spec!.affinity!.nodeAffinity!.requiredDuringSchedulingIgnoredDuringExecution).toBeUndefined();

    const event = await waitFor(
      'an event showing the binding to node-unverified was denied',
      async () => {
        const events = await s.core.listNamespacedEvent({
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
    expect((await s.core.readNamespacedPod({ namespace: 'mesh', name: 'stripped' })).spec!.nodeName).toBeUndefined();

    // Once the node agent says the node is verified, the scheduler's next attempt is allowed.
    await publishVerdict(s.cp, 'node-unverified', true);
    const [running] = await waitForPodsRunning(s.cp.kc, 'mesh', 'app=stripped', 1, { timeoutMs: 90_000 });
    expect(running.spec!.nodeName).toBe('node-unverified');
    await publishVerdict(s.cp, 'node-unverified', false);
  });

  it("a DaemonSet's pod for the unverified node waits unbound, and its pod for the verified node runs", async () => {
    // Refusing the pod for node-unverified would stop the DaemonSet controller's slow-start batch: its pod for
    // node-verified would wait out the controller's backoff whenever node-unverified came first.
    const apps = s.cp.kc.makeApiClient(AppsV1Api);
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
    const [first] = await waitForPodsRunning(s.cp.kc, 'mesh', 'app=agent', 1);
    expect(first.spec!.nodeName).toBe('node-verified');
    const waiting = await waitFor('the pod for node-unverified, Pending', async () => {
      const pods = (await s.core.listNamespacedPod({ namespace: 'mesh', labelSelector: 'app=agent' })).items;
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
    const refused = (await s.core.listNamespacedEvent({ namespace: 'mesh', fieldSelector: 'reason=FailedCreate' }))
      .items;
    expect(refused.filter((e) => e.involvedObject.name === 'agent').map((e) => e.message)).toEqual([]);

    // The node is verified: the scheduler binds the waiting pod there.
    await publishVerdict(s.cp, 'node-unverified', true);
    const pods = await waitForPodsRunning(s.cp.kc, 'mesh', 'app=agent', 2, { timeoutMs: 90_000 });
    expect(pods.map((p) => p.spec!.nodeName).sort()).toEqual(['node-unverified', 'node-verified']);
    await publishVerdict(s.cp, 'node-unverified', false);
    await apps.deleteNamespacedDaemonSet({ namespace: 'mesh', name: 'agent' });
    await waitFor(
      'the DaemonSet pods gone',
      async () =>
        (await s.core.listNamespacedPod({ namespace: 'mesh', labelSelector: 'app=agent' })).items.length === 0,
    );
  });

  it('measures how often the pod cache misses under a burst of bindings', async () => {
    const before = await metrics();
    const replicas = 40;
    await s.cp.kc.makeApiClient(AppsV1Api).createNamespacedDeployment({
      namespace: 'mesh',
      body: deployment('burst', restrictedPod('burst').spec, replicas),
    });
    const pods = await waitForPodsRunning(s.cp.kc, 'mesh', 'app=burst', replicas, { timeoutMs: 120_000 });
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
