// S6's capability on a real kube-apiserver (issue 13): a namespace is opted in after its pods exist. The repair
// controller (startRepair, what `meshgate repair-controller --evict-unmeshed=true` runs), acting as the chart's
// service account under the chart's RBAC and eviction policy, learns that the namespace is opted in from meshgate's
// own MutatingWebhookConfiguration, evicts the Deployment's unmeshed pods through the Eviction API — one at a time,
// as the PodDisruptionBudget allows — so the ReplicaSet recreates them through meshgate's real webhook (running in
// this process, registered under the chart's configuration name), and only reports a bare pod — also one carrying
// meshgate's label it never earned, which only the pod watch's judgement finds. Figures printed.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  AdmissionregistrationV1Api,
  AppsV1Api,
  CoreV1Api,
  PatchStrategy,
  PolicyV1Api,
  setHeaderOptions,
  type V1Pod,
} from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { buildConfig } from '../../src/config/load.ts';
import type { RunningRepair } from '../../src/repair/run.ts';
import { chartDir } from '../chart/helm.ts';
import { CUSTOM_REQUIRED } from '../chart/profiles.ts';
import { rawConfig } from '../support/config.ts';
import { waitFor, type ControlPlane } from './harness/index.ts';
import { startVerdictCluster } from './harness/clusters.ts';
import { logger, startConfigRepair } from './harness/suite.ts';
import { shared } from './harness/shared.ts';
import { ImpersonatingKubeConfig, outcome, serviceAccount } from './impersonate.ts';
import { createNamespace, restrictedPod, startMeshgate } from './meshgate.ts';
import { keyDir } from '../support/mark.ts';

const NS = 'meshgate';
const APP = 'shop';
const OTHER = 'other';
const REPAIR = serviceAccount(NS, 'meshgate-repair-controller');
const REPLICAS = 3;
const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

describe('unmeshed pods of a namespace opted in late are evicted through the webhook (S6)', () => {
  let cp: ControlPlane;
  let core: CoreV1Api;

  let repair: RunningRepair;
  const keys = keyDir();
  const originals: string[] = [];

  shared(async (stopLater) => {
    stopLater(() => keys.cleanup());
    // Both nodes verified (CNI mode), published before the chart's node policies reserve that to the node agent.
    ({ cp, core } = await startVerdictCluster(stopLater, { 'node-a': true, 'node-b': true }));
    await core.createNamespace({ body: { metadata: { name: NS } } });
    const dir = mkdtempSync(join(tmpdir(), 'meshgate-values-'));
    try {
      writeFileSync(
        join(dir, 'values.json'),
        JSON.stringify({
          mesh: 'custom',
          config: CUSTOM_REQUIRED,
          nodeAgent: { enabled: false },
          repairController: { unmeshedPods: 'evict' },
        }),
      );
      const res = await cp.helm(['install', 'meshgate', chartDir, '--namespace', NS, '-f', join(dir, 'values.json')]);
      expect(res.code, res.stderr).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    // meshgate's real webhook in this process, under the chart's configuration name (the chart's own point at a
    // Service whose pods run on kwok nodes, i.e. nowhere).
    stopLater(await startMeshgate(cp, {}, 'custom', { register: { name: 'meshgate' } }));
    await createNamespace(cp, APP);
    await createNamespace(cp, OTHER);
    const pdbs = cp.kc.makeApiClient(PolicyV1Api);
    const template = restrictedPod('web');
    await cp.kc.makeApiClient(AppsV1Api).createNamespacedDeployment({
      namespace: APP,
      body: {
        metadata: { name: 'web' },
        spec: {
          replicas: REPLICAS,
          selector: { matchLabels: { app: 'web' } },
          template: { metadata: { labels: { app: 'web' } }, spec: template.spec },
        },
      },
    });
    await pdbs.createNamespacedPodDisruptionBudget({
      namespace: APP,
      body: {
        metadata: { name: 'web' },
        spec: { minAvailable: REPLICAS - 1, selector: { matchLabels: { app: 'web' } } },
      },
    });
    await core.createNamespacedPod({ namespace: APP, body: restrictedPod('lonely') });
    // A bare pod carrying meshgate's label without ever having gone through its webhook (a manifest copied from a
    // meshed pod): the sweep's list leaves labelled pods out, so only the pod watch's judgement (labelled.ts) finds it.
    const copied = restrictedPod('copied');
    await core.createNamespacedPod({
      namespace: APP,
      body: { ...copied, metadata: { ...copied.metadata, labels: { app: 'copied', 'meshgate.io/redirect': 'cni' } } },
    });
    // A pod in a namespace nobody opted in, kept by a PodDisruptionBudget should the policy not stop its eviction.
    await core.createNamespacedPod({ namespace: OTHER, body: restrictedPod('x') });
    await pdbs.createNamespacedPodDisruptionBudget({
      namespace: OTHER,
      body: { metadata: { name: 'x' }, spec: { minAvailable: 1, selector: { matchLabels: { app: 'x' } } } },
    });
    const running = await waitFor(
      'web running and its budget computed',
      async () => {
        const pods = (await core.listNamespacedPod({ namespace: APP, labelSelector: 'app=web' })).items.filter(
          (p) => p.status?.phase === 'Running',
        );
        const pdb = await pdbs.readNamespacedPodDisruptionBudget({ name: 'web', namespace: APP });
        return pods.length === REPLICAS && pdb.status?.disruptionsAllowed === 1 ? pods : false;
      },
      { timeoutMs: 60_000 },
    );
    originals.push(...running.map((p) => p.metadata!.name!));
    // Without a proxy: they were created before the namespace was opted in.
    expect(running.every((p) => p.spec!.containers.length === 1)).toBe(true);
    // No pod here fails its validator: the mark's key (keys.dir) only has to be there for the controller to start ready.
    repair = stopLater(
      await startConfigRepair(cp, buildConfig(rawConfig('custom', { meshNamespace: NS })), keys.dir, {
        kc: new ImpersonatingKubeConfig(cp.kc, REPAIR),
        logger: logger('silent'),
        unmeshed: { evict: true, maxEvictionsPerMinute: 10, sweepIntervalMs: 60_000, webhookConfig: 'meshgate' },
      }),
    );
  });

  const events = async (ns: string) =>
    (await core.listNamespacedEvent({ namespace: ns })).items
      .filter((e) => e.source?.component === 'meshgate-repair-controller')
      .map((e) => ({ pod: e.involvedObject.name!, reason: e.reason!, message: e.message! }));

  it('the eviction policy refuses evictions where no meshgate webhook selects the namespace', async () => {
    const policy = cp.kc.makeApiClient(CoreV1Api);
    const asRepair = new ImpersonatingKubeConfig(cp.kc, REPAIR).makeApiClient(CoreV1Api);
    const evict = () =>
      outcome(
        asRepair.createNamespacedPodEviction({
          name: 'x',
          namespace: OTHER,
          body: { metadata: { name: 'x', namespace: OTHER } },
        }),
      );
    const r = await waitFor('the eviction policy to be enforced', async () => {
      const res = await evict();
      return res.includes('ValidatingAdmissionPolicy') ? res : false;
    });
    expect(r).toContain('HTTP 403');
    expect(r).toContain(`no meshgate webhook selects namespace ${OTHER}`);
    expect(
      (await policy.readNamespacedPod({ name: 'x', namespace: OTHER })).metadata?.deletionTimestamp,
    ).toBeUndefined();
  }, 60_000);

  it('labelled: its unmeshed pods are evicted one at a time as the budget allows, and come back meshed; the bare pod gets an Event', async () => {
    let lastSeen: unknown;
    // Both nodes cordoned until the budget has refused an eviction: a replacement then cannot become ready between
    // the first eviction and the next, as kwok can make one ready within milliseconds (a CI run saw no refusal).
    const cordon = (unschedulable: boolean) =>
      Promise.all(
        ['node-a', 'node-b'].map((name) => core.patchNode({ name, body: { spec: { unschedulable } } }, merge)),
      );
    await cordon(true);
    const t0 = Date.now();
    await core.patchNamespace(
      { name: APP, body: { metadata: { labels: { 'meshgate.io/inject': 'enabled' } } } },
      merge,
    );
    const firstEviction = await waitFor(
      'the first eviction',
      async () => (await events(APP)).some((e) => e.reason === 'MeshUnmeshedEvicted') && Date.now(),
      { timeoutMs: 30_000 },
    );
    await waitFor(
      'an eviction refused by the PodDisruptionBudget',
      async () => (await events(APP)).some((e) => e.reason === 'MeshUnmeshedEvictionBlocked'),
      { timeoutMs: 30_000 },
    );
    await cordon(false);
    const pods = await waitFor(
      `${REPLICAS} meshed replicas and no original`,
      async () => {
        const items = (await core.listNamespacedPod({ namespace: APP, labelSelector: 'app=web' })).items.filter(
          (p) => !p.metadata?.deletionTimestamp,
        );
        lastSeen = {
          pods: items.map((p) => [
            p.metadata!.name,
            p.status?.phase,
            [...(p.spec!.initContainers ?? []), ...p.spec!.containers].map((c) => c.name),
          ]),
          events: (await events(APP)).map((e) => `${e.pod} ${e.reason}`),
        };
        const meshed = items.filter(
          (p: V1Pod) =>
            p.status?.phase === 'Running' &&
            p.metadata?.annotations?.['meshgate.io/status'] &&
            [...p.spec!.containers, ...(p.spec!.initContainers ?? [])].some((c) => c.name === 'meshgate-proxy'),
        );
        return meshed.length === REPLICAS && items.every((p) => !originals.includes(p.metadata!.name!))
          ? meshed
          : false;
      },
      { timeoutMs: 120_000, intervalMs: 200, describe: () => JSON.stringify(lastSeen) },
    );
    const done = Date.now();
    const ev = await events(APP);
    console.log(
      `namespace labelled → first eviction ${firstEviction - t0} ms, all ${REPLICAS} replicas meshed ${done - t0} ms ` +
        `(PodDisruptionBudget minAvailable ${REPLICAS - 1}: evictions refused ${ev.filter((e) => e.reason === 'MeshUnmeshedEvictionBlocked').length} pod(s) first, retried every 10 s)`,
    );
    expect(pods).toHaveLength(REPLICAS);
    expect(
      ev
        .filter((e) => e.reason === 'MeshUnmeshedEvicted')
        .map((e) => e.pod)
        .sort(),
    ).toEqual([...originals].sort());
    // The budget was respected: evictions after the first were refused until a meshed replacement was ready (the
    // wait above saw the refusal; every original was evicted in the end, retried every 10 s).
    expect(ev.some((e) => e.reason === 'MeshUnmeshedEvictionBlocked')).toBe(true);
    expect(ev.find((e) => e.reason === 'MeshUnmeshedEvicted')!.message).toMatch(
      /created before the namespace was opted in.*recreates it through the webhook/,
    );
    const lonely = ev.filter((e) => e.pod === 'lonely');
    expect(lonely).toEqual([
      {
        pod: 'lonely',
        reason: 'MeshUnmeshedPod',
        message: expect.stringContaining('no controller to recreate it, so it is left running'),
      },
    ]);
    expect(
      (await core.readNamespacedPod({ name: 'lonely', namespace: APP })).metadata?.deletionTimestamp,
    ).toBeUndefined();
    expect(ev.filter((e) => e.pod === 'copied')).toEqual([
      {
        pod: 'copied',
        reason: 'MeshUnmeshedPod',
        message: expect.stringContaining('no controller to recreate it, so it is left running'),
      },
    ]);
    const metrics = await repair.metrics.registry.getSingleMetricAsString('meshgate_repair_pods_evicted_total');
    expect(metrics).toContain(`{reason="proxy_missing"} ${REPLICAS}`);
  }, 180_000);

  it('the webhook configuration is the only source: a namespace whose labels do not match stays untouched', async () => {
    const x = await core.readNamespacedPod({ name: 'x', namespace: OTHER });
    expect(x.metadata?.deletionTimestamp).toBeUndefined();
    expect((await events(OTHER)).filter((e) => e.pod === 'x')).toEqual([]);
    // Its own configuration name: the chart's RBAC lets the repair controller read no other.
    const other = await outcome(
      new ImpersonatingKubeConfig(cp.kc, REPAIR)
        .makeApiClient(AdmissionregistrationV1Api)
        .readMutatingWebhookConfiguration({ name: 'istio-sidecar-injector' }),
    );
    expect(other).toContain('HTTP 403');
  });
});
