/**
 * What keeps the daemons' memory flat at cluster scale (issue 32), on a real kube-apiserver (Kubernetes 1.34):
 * - the reflector streams the initial state (watch-list: sendInitialEvents), and where the apiserver's WatchList
 *   feature is off (a second apiserver, --feature-gates=WatchList=false) it lists page by page instead;
 * - the binding guard's pod cache holds only pods waiting for a node (field selector spec.nodeName=): a pod leaves it
 *   when it is bound, a pod created bound never enters it;
 * - the webhook's node facts age by the later of the condition's heartbeat and the agent's Lease: a verdict whose
 *   condition is old but whose Lease was just renewed stays verified, and goes stale when the Lease goes.
 * Run: npx vitest run test/e2e/scale-caches.test.ts (needs the control plane built by scripts/build-controlplane.sh).
 */
import { describe, expect, it } from 'vitest';
import type { KubeClient } from '../../src/kube/api/client.ts';
import { core, group } from '../../src/kube/api/paths.ts';
import { startNodeCache } from '../../src/kube/node-cache.ts';
import { startPodNeedCache } from '../../src/kube/pod-mode-cache.ts';
import { Reflector } from '../../src/kube/reflector.ts';
import { testConfig } from '../support/config.ts';
import { daemonClient } from './daemon-client.ts';
import { startControlPlane, waitFor } from './harness/index.ts';
import { shared } from './harness/shared.ts';

const NS = 'scale-e2e';
const OBJECTS = 40;

/** A reflector over the test's ConfigMaps, recording each list as it arrives. */
function configMaps(client: KubeClient) {
  const lists: number[] = [];
  let adds = 0;
  const r = new Reflector({
    client,
    path: core('configmaps', { namespace: NS }),
    labelSelector: 'scale=yes',
    list: () => {
      let n = 0;
      const add = () => {
        n++;
        adds++;
      };
      return { add, done: () => void lists.push(n) };
    },
    upsert: () => undefined,
    remove: () => undefined,
  });
  return { r, lists, adds: () => adds };
}

async function seed(client: KubeClient): Promise<void> {
  await client.create(core('namespaces'), { metadata: { name: NS } });
  for (let i = 0; i < OBJECTS; i++)
    await client.create(core('configmaps', { namespace: NS }), {
      metadata: { name: `cm-${i}`, labels: { scale: 'yes' } },
      data: { i: String(i) },
    });
}

/**
 * The apiserver a describe's tests share, alone (no scheduler, controller manager or kwok: nothing else lists), with
 * `featureGates`, seeded with the test's ConfigMaps; the daemons' client to it.
 */
function seededApiserver(featureGates?: Record<string, boolean>) {
  return shared(async (stopLater) => {
    const cp = stopLater(
      await startControlPlane({ withScheduler: false, withControllerManager: false, withKwok: false, featureGates }),
    );
    const kube = daemonClient(cp.kc);
    stopLater(() => kube.close());
    await seed(kube);
    return { cp, kube };
  });
}

describe('the initial state of a watch, as Kubernetes 1.34 serves it', () => {
  const s = seededApiserver();

  it('streams (watch-list): every object once, one list ended by the bookmark, no LIST request', async () => {
    const { r, lists, adds } = configMaps(s.kube);
    await r.start();
    try {
      expect(lists).toEqual([OBJECTS]);
      expect(adds()).toBe(OBJECTS);
      expect(r.stats).toMatchObject({ lists: 1, watches: 1, initial: 'watch-list' });
    } finally {
      r.stop();
    }
  });

  it('the binding guard’s cache holds only pods waiting for a node: bound, a pod leaves it', async () => {
    const node = 'node-1';
    await s.kube.create(core('nodes'), { metadata: { name: node } });
    await s.kube.create(core('serviceaccounts', { namespace: NS }), { metadata: { name: 'default' } });
    const pod = (name: string, nodeName?: string) => ({
      metadata: { name, labels: { 'meshgate.io/redirect': 'cni' } },
      spec: { ...(nodeName ? { nodeName } : {}), containers: [{ name: 'app', image: 'app:1' }] },
    });
    await s.kube.create(core('pods', { namespace: NS }), pod('waiting'));
    await s.kube.create(core('pods', { namespace: NS }), pod('placed', node));
    const cache = startPodNeedCache(s.kube, testConfig('istio'));
    await cache.ready;
    try {
      expect(cache.get(NS, 'waiting')).toBe('unmeshed');
      expect(cache.get(NS, 'placed')).toBeUndefined();
      expect(cache.store.size()).toBe(1);
      await s.kube.create(core('pods', { namespace: NS, name: 'waiting', sub: 'binding' }), {
        apiVersion: 'v1',
        kind: 'Binding',
        metadata: { name: 'waiting' },
        target: { apiVersion: 'v1', kind: 'Node', name: node },
      });
      await waitFor('the bound pod to leave the cache', () => cache.get(NS, 'waiting') === undefined, {
        timeoutMs: 15_000,
      });
      await s.kube.create(core('pods', { namespace: NS }), pod('later'));
      await waitFor('a new waiting pod to enter it', () => cache.get(NS, 'later') !== undefined, { timeoutMs: 15_000 });
      expect(cache.store.size()).toBe(1);
    } finally {
      cache.stop();
    }
  });

  it('a verdict whose condition heartbeat is old lives by its agent’s Lease, and goes stale with it', async () => {
    const hourAgo = new Date(Date.now() - 3_600_000).toISOString().replace(/\.\d+Z$/, 'Z');
    const name = 'lease-node';
    await s.kube.create(core('nodes'), {
      metadata: {
        name,
        labels: { 'meshgate.io/cni-verified': 'true' },
        annotations: { 'meshgate.io/cni-evidence': JSON.stringify({ pluginType: 'istio-cni' }) },
      },
      status: {
        conditions: [
          { type: 'MeshCNIVerified', status: 'True', reason: 'verified', message: 'ok', lastHeartbeatTime: hourAgo },
        ],
      },
    });
    const leases = group('coordination.k8s.io/v1', 'leases', { namespace: NS });
    const cache = startNodeCache(s.kube, { pluginType: 'istio-cni', maxVerdictAgeMs: 20 * 60_000 }, undefined, {
      leaseNamespace: NS,
    });
    await cache.ready;
    try {
      expect(cache.store.get(name)).toMatchObject({ verified: false, reason: 'stale_verdict' });
      await s.kube.create(leases, {
        metadata: { name: `meshgate-node-${name}`, labels: { 'meshgate.io/node-lease': 'true' } },
        spec: { holderIdentity: name, renewTime: new Date().toISOString().replace('Z', '000Z') },
      });
      await waitFor('the Lease to revive the verdict', () => cache.store.get(name)?.verified === true, {
        timeoutMs: 15_000,
      });
      expect(cache.store.anyVerified()).toBe(true);
      await s.kube.delete(group('coordination.k8s.io/v1', 'leases', { namespace: NS, name: `meshgate-node-${name}` }));
      await waitFor('the verdict to go stale again', () => cache.store.get(name)?.reason === 'stale_verdict', {
        timeoutMs: 15_000,
      });
      expect(cache.store.anyVerified()).toBe(false);
    } finally {
      cache.reflector.stop();
    }
  });
});

describe('an apiserver without the WatchList feature', () => {
  const s = seededApiserver({ WatchList: false });

  it('refuses watch-list (422), and the reflector lists page by page instead, for good', async () => {
    const { r, lists, adds } = configMaps(s.kube);
    await r.start();
    try {
      expect(lists).toEqual([OBJECTS]);
      expect(adds()).toBe(OBJECTS);
      expect(r.stats).toMatchObject({ lists: 1, initial: 'pages' });
    } finally {
      r.stop();
    }
  });
});
