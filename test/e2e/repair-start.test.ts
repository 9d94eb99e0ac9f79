// A repair controller (re)started while failures already exist, on a real kube-apiserver (issue 32): its start reads
// the labelled pods in pages (src/repair/failed/watch.ts) and, once ready, has acted on every one its judges must —
// a validator crash-looping on a Pending pod, the same on a Running pod (what the kubelet reports when a running pod's
// sandbox is recreated and its init containers fail again: the pod stays Running), a pod meshgate holds Pending —
// and on no healthy one. More pods than a page (LIST_PAGE), so the failures sit on different pages. Figures printed.
import { describe, expect, it } from 'vitest';
import { buildConfig } from '../../src/config/load.ts';
import { core } from '../../src/kube/api/paths.ts';
import { LIST_PAGE } from '../../src/kube/reflector.ts';
import type { RunningRepair } from '../../src/repair/run.ts';
import { keyDir, markFor } from '../support/mark.ts';
import { daemonClient } from './daemon-client.ts';
import { startControlPlane, waitFor } from './harness/index.ts';
import { shared } from './harness/shared.ts';
import { logger, startConfigRepair } from './harness/suite.ts';
import { validatorCrashLoop } from './validator-status.ts';

const NS = 'shop';
const HEALTHY = LIST_PAGE + 100;
const FAILED_PENDING = 'failed-pending';
const FAILED_RUNNING = 'failed-running';
const HELD = 'held';
type Obj = Record<string, unknown>;

const owner = {
  apiVersion: 'apps/v1',
  kind: 'ReplicaSet',
  name: 'web-7d9c8b5f4',
  uid: '00000000-0000-4000-8000-000000000001',
  controller: true,
};

/** A guarded pod as meshgate admits it: its label, its mark, an owner; bound to node-a unless `unbound`. */
function guarded(name: string, o: { unbound?: boolean; status?: string } = {}): Obj {
  return {
    metadata: {
      name,
      labels: { 'meshgate.io/redirect': 'cni', app: 'web' },
      annotations: {
        'meshgate.io/admitted': markFor(NS, Math.floor(Date.now() / 1000)),
        ...(o.status && { 'meshgate.io/status': o.status }),
      },
      ownerReferences: [owner],
    },
    spec: {
      ...(o.unbound ? {} : { nodeName: 'node-a' }),
      initContainers: [{ name: 'istio-validation', image: 'ghcr.io/meshgate/meshgate:0.1.0' }],
      containers: [{ name: 'app', image: 'docker.io/library/nginx:1.27' }],
    },
  };
}

const ran = { exitCode: 0, reason: 'Completed' };
/** What a kubelet reports of a pod that runs: its validator passed, its app runs. */
const running = {
  phase: 'Running',
  initContainerStatuses: [
    { name: 'istio-validation', image: 'x', imageID: '', ready: true, restartCount: 0, state: { terminated: ran } },
  ],
  containerStatuses: [{ name: 'app', image: 'x', imageID: '', ready: true, restartCount: 0, state: { running: {} } }],
};

describe('a repair controller started while failures already exist', () => {
  const keys = keyDir();
  const config = buildConfig({ mesh: 'istio', meshNamespace: 'meshgate' });
  const s = shared(async (stopLater) => {
    stopLater(() => keys.cleanup());
    const cp = stopLater(
      await startControlPlane({ withScheduler: false, withControllerManager: false, withKwok: false }),
    );
    const client = daemonClient(cp.kc);
    stopLater(() => client.close());
    await client.create(core('namespaces'), { metadata: { name: NS } });
    await client.create(core('serviceaccounts', { namespace: NS }), { metadata: { name: 'default' } });
    const status = (name: string, body: Obj) =>
      client.patch(core('pods', { namespace: NS, name, sub: 'status' }), 'merge', { status: body });
    // Healthy Running pods on both sides of the failures, so the pages split them.
    const names = Array.from({ length: HEALTHY }, (_, i) => `web-${i}`);
    let next = 0;
    const worker = async () => {
      while (next < names.length) {
        const name = names[next++];
        await client.create(core('pods', { namespace: NS }), guarded(name));
        await status(name, running);
        if (name === `web-${Math.floor(HEALTHY / 2)}`) await createFailures();
      }
    };
    const createFailures = async () => {
      await client.create(core('pods', { namespace: NS }), guarded(FAILED_PENDING));
      await status(FAILED_PENDING, validatorCrashLoop('the probe reached its own destination'));
      await client.create(core('pods', { namespace: NS }), guarded(FAILED_RUNNING));
      // A running pod whose sandbox was recreated: its app stopped, its validator failing again; still Running.
      await status(FAILED_RUNNING, {
        ...validatorCrashLoop('the probe reached its own destination'),
        phase: 'Running',
        containerStatuses: [
          {
            name: 'app',
            image: 'x',
            imageID: '',
            ready: false,
            restartCount: 1,
            state: { terminated: { exitCode: 137, reason: 'Error' } },
          },
        ],
      });
      const held = JSON.stringify({
        version: 1,
        mode: 'cni',
        reason: 'affinity_verified',
        initContainers: ['istio-validation'],
        containers: [],
        volumes: [],
        affinity: true,
      });
      await client.create(core('pods', { namespace: NS }), guarded(HELD, { unbound: true, status: held }));
      await status(HELD, {
        phase: 'Pending',
        conditions: [
          { type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: '0/3 nodes are available' },
        ],
      });
    };
    await Promise.all(Array.from({ length: 8 }, worker));
    const t0 = performance.now();
    const repair: RunningRepair = stopLater(
      await startConfigRepair(cp, config, keys.dir, {
        listen: { host: '127.0.0.1', port: 0 },
        logger: logger('silent'),
      }),
    );
    await waitFor(
      'the repair controller ready',
      async () => (await fetch(`http://127.0.0.1:${repair.port}/readyz`)).status === 200,
    );
    console.log(
      `repair controller ready ${Math.round(performance.now() - t0)} ms after its start, ${HEALTHY + 3} labelled pods`,
    );
    return { client, repair };
  });

  const pod = (name: string) =>
    s.client
      .get<{ metadata?: { deletionTimestamp?: string } }>(core('pods', { namespace: NS, name }))
      .catch(() => undefined);
  const events = async (reason: string) =>
    (
      await s.client.get<{ items: Array<{ reason?: string; involvedObject?: { name?: string } }> }>(
        core('events', { namespace: NS }),
      )
    ).items
      .filter((e) => e.reason === reason)
      .map((e) => e.involvedObject?.name)
      .sort();

  it('deletes the pods whose validator failed before it started, Pending or Running, with an Event each', async () => {
    await waitFor('both failed pods deleted', async () => {
      for (const name of [FAILED_PENDING, FAILED_RUNNING]) {
        const p = await pod(name);
        if (p && !p.metadata?.deletionTimestamp) return false;
      }
      return true;
    });
    expect(await events('MeshRedirectFailed')).toEqual([FAILED_PENDING, FAILED_RUNNING]);
    expect(s.repair.controller.stats.deleted).toBe(2);
  });

  it('notices the pod it holds Pending', async () => {
    expect(
      await waitFor(
        'the MeshPodHeld Event',
        async () => (await events('MeshPodHeld')).length > 0 && events('MeshPodHeld'),
      ),
    ).toEqual([HELD]);
  });

  it('leaves every healthy pod alone', async () => {
    const healthy = await Promise.all([0, Math.floor(HEALTHY / 2), HEALTHY - 1].map((i) => pod(`web-${i}`)));
    for (const p of healthy) expect(p?.metadata?.deletionTimestamp).toBeUndefined();
    expect(s.repair.controller.stats).toEqual({ deleted: 2, reported: 0, throttled: 0 });
  });
});
