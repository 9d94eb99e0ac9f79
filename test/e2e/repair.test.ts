// The repair controller as the chart deploys it, against a real kube-apiserver: two replicas (startRepair, the code
// `meshgate repair-controller` runs) acting as the chart's service account — so the chart's RBAC and admission policy
// apply to their real calls — elect one leader through a real Lease; only it deletes a pod whose validator failed;
// a graceful stop hands over at once; and two bare electors show that a leader cut off from the apiserver stops
// acting before the other takes over. Timings are printed, not asserted (2 shared cores).
import { type CoreV1Api, PatchStrategy, setHeaderOptions, type V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { buildConfig } from '../../src/config/load.ts';
import { LeaderElector, type LeaseStore } from '../../src/kube/lease.ts';
import { kubeLeaseStore } from '../../src/kube/lease-store.ts';
import type { RunningRepair } from '../../src/repair/run.ts';
import { waitFor, type ControlPlane } from './harness/index.ts';
import { installChart, logger, startConfigRepair } from './harness/suite.ts';
import { startKwokCluster } from './harness/clusters.ts';
import { shared } from './harness/shared.ts';
import { ImpersonatingKubeConfig, serviceAccount } from './impersonate.ts';
import { keyDir, markFor } from '../support/mark.ts';
import { daemonClient } from './daemon-client.ts';
import { validatorCrashLoop } from './validator-status.ts';

const NS = 'meshgate';
const APP = 'shop';
const LEASE = 'meshgate-repair-controller';
/** Short enough for a test, in the chart's proportions (retry < renew deadline < lease duration). */
const TIMING = { leaseDurationMs: 4_000, renewDeadlineMs: 3_000, retryPeriodMs: 500 };
const strategic = setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch);

async function metric(r: RunningRepair, name: string): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${r.port}/metrics`);
  return (await res.text())
    .split('\n')
    .filter((l) => l.startsWith(name))
    .join('\n');
}

describe('repair controller with leader election on a real apiserver', () => {
  let cp: ControlPlane;
  let core: CoreV1Api;
  const replicas: RunningRepair[] = [];
  const config = buildConfig({ mesh: 'istio', meshNamespace: NS });
  // The admission mark's key, as the chart mounts the webhook's Secret; the test marks its pods as the webhook would.
  const keys = keyDir();
  const kc = () => new ImpersonatingKubeConfig(cp.kc, serviceAccount(NS, 'meshgate-repair-controller'));
  const start = (identity: string) =>
    startConfigRepair(cp, config, keys.dir, {
      kc: kc(),
      lease: { namespace: NS, name: LEASE, identity, ...TIMING },
      listen: { host: '127.0.0.1', port: 0 },
      logger: logger('silent'),
    });
  const leaders = () => replicas.filter((r) => r.elector!.isLeader());

  shared(async (stopLater) => {
    stopLater(() => keys.cleanup());
    ({ cp, core } = await startKwokCluster(stopLater, []));
    stopLater(async () => {
      for (const r of replicas) await r.stop().catch(() => undefined);
    });
    // The chart's RBAC and admission policies; its workloads stay Pending (no nodes): the replicas run in this process.
    await installChart(cp, NS, '--set', 'nodeAgent.enabled=false');
    await core.createNamespace({ body: { metadata: { name: APP } } });
    await waitFor('default ServiceAccount', () =>
      core.readNamespacedServiceAccount({ name: 'default', namespace: APP }),
    );
    replicas.push(await start('replica-a'), await start('replica-b'));
  });

  it('exactly one replica leads, and says so in its metrics; both are ready and alive', async () => {
    const [leader] = await waitFor('a leader', () => leaders().length === 1 && leaders());
    const other = replicas.find((r) => r !== leader)!;
    expect(await metric(leader, 'meshgate_repair_leader ')).toBe('meshgate_repair_leader 1');
    expect(await metric(other, 'meshgate_repair_leader ')).toBe('meshgate_repair_leader 0');
    for (const r of replicas) {
      expect((await fetch(`http://127.0.0.1:${r.port}/readyz`)).status).toBe(200);
      expect((await fetch(`http://127.0.0.1:${r.port}/healthz`)).status).toBe(200);
    }
    const lease = await kubeLeaseStore(daemonClient(cp.kc), NS, LEASE).get();
    expect(lease?.spec.holderIdentity).toBe(leader.elector!.leader());
  });

  it('the leader deletes a failed pod (once, with an Event); a failed pod that is not meshgate’s stays', async () => {
    const cm = await core.readNamespacedConfigMap({ name: 'kube-root-ca.crt', namespace: APP });
    const owner = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      name: 'kube-root-ca.crt',
      uid: cm.metadata!.uid!,
      controller: true,
    };
    const pod = (name: string, labels: Record<string, string>): V1Pod => ({
      metadata: {
        name,
        labels,
        annotations: { 'meshgate.io/admitted': markFor(APP, Math.floor(Date.now() / 1000)) },
        ownerReferences: [owner],
      },
      spec: {
        nodeName: 'node-gone',
        initContainers: [{ name: 'istio-validation', image: 'ghcr.io/meshgate/meshgate:0.1.0' }],
        containers: [{ name: 'app', image: 'docker.io/library/nginx:1.27' }],
      },
    });
    const failed = { status: validatorCrashLoop('the probe reached its own destination') };
    for (const [name, labels] of [
      ['web-1', { 'meshgate.io/redirect': 'cni' }],
      ['other-1', { app: 'other' }],
    ] as const) {
      await core.createNamespacedPod({ namespace: APP, body: pod(name, labels) });
      await core.patchNamespacedPodStatus({ name, namespace: APP, body: failed }, strategic);
    }
    const t0 = Date.now();
    // Bound to a node with no kubelet, a deleted pod keeps its object (deletionTimestamp set) until its grace period ends.
    await waitFor('web-1 deleted', () =>
      core.readNamespacedPod({ name: 'web-1', namespace: APP }).then(
        (p) => !!p.metadata?.deletionTimestamp,
        () => true,
      ),
    );
    console.log(`failed pod deleted ${Date.now() - t0} ms after its status showed the failure`);
    const events = (await core.listNamespacedEvent({ namespace: APP })).items.filter(
      (e) => e.reason === 'MeshRedirectFailed',
    );
    expect(events.map((e) => [e.involvedObject.name, e.message])).toEqual([
      ['web-1', expect.stringContaining('(not_redirected: the probe reached its own destination); deleting the pod')],
    ]);
    expect(
      (await core.readNamespacedPod({ name: 'other-1', namespace: APP })).metadata?.deletionTimestamp,
    ).toBeUndefined();
    const [leader] = leaders();
    expect(await metric(leader, 'meshgate_repair_pods_deleted_total')).toContain(
      'meshgate_repair_pods_deleted_total{reason="not_redirected"} 1',
    );
    for (const r of replicas.filter((x) => x !== leader))
      expect(await metric(r, 'meshgate_repair_pods_deleted_total')).toBe('');
  });

  it('a leader that stops releases the Lease: the other replica takes over without waiting for it to expire', async () => {
    const [leader] = leaders();
    const other = replicas.find((r) => r !== leader)!;
    const t0 = Date.now();
    await leader.stop();
    replicas.splice(replicas.indexOf(leader), 1);
    await waitFor('the other replica to lead', () => other.elector!.isLeader());
    console.log(`handover after a graceful stop: ${Date.now() - t0} ms (lease duration ${TIMING.leaseDurationMs} ms)`);
    expect((await kubeLeaseStore(daemonClient(cp.kc), NS, LEASE).get())?.spec.leaseTransitions).toBeGreaterThanOrEqual(
      1,
    );
  });

  it('two electors on one Lease: one cut off from the apiserver stops acting before the other starts', async () => {
    const name = 'e2e-partition';
    let cut = false;
    const real = kubeLeaseStore(daemonClient(cp.kc), NS, name);
    const cuttable: LeaseStore = {
      get: () => (cut ? Promise.reject(new Error('connection refused')) : real.get()),
      create: (s) => (cut ? Promise.reject(new Error('connection refused')) : real.create(s)),
      update: (s, rv) => (cut ? Promise.reject(new Error('connection refused')) : real.update(s, rv)),
    };
    const times: Record<string, number> = {};
    const a = new LeaderElector(cuttable, {
      identity: 'a',
      ...TIMING,
      onStoppedLeading: () => (times.aStopped = Date.now()),
    });
    a.start();
    await waitFor('a leads', () => a.isLeader());
    const b = new LeaderElector(real, {
      identity: 'b',
      ...TIMING,
      onStartedLeading: () => (times.bStarted = Date.now()),
    });
    b.start();
    const both: string[] = [];
    const sampler = setInterval(() => a.isLeader() && b.isLeader() && both.push(new Date().toISOString()), 20);
    try {
      await new Promise((r) => setTimeout(r, 1_500));
      cut = true;
      times.cut = Date.now();
      await waitFor('b leads', () => b.isLeader(), { timeoutMs: 30_000 });
    } finally {
      clearInterval(sampler);
      await a.stop();
      await b.stop();
    }
    expect(both).toEqual([]);
    expect(times.aStopped).toBeLessThan(times.bStarted);
    console.log(
      `partition: a stopped acting ${times.aStopped - times.cut} ms after the cut, b started ${times.bStarted - times.cut} ms after it`,
    );
  });
});
