// The node agent's proxy guard on a real kube-apiserver (src/agent/guard/kube.ts): its watch sees exactly the guarded
// pods bound to its node (fieldSelector spec.nodeName, the status annotation), with their containers' runtime IDs
// from the kubelet's status; a pass that finds a container running as the proxy deletes its pod (grace 0, UID
// precondition) and records the Event a person reads; a pod already gone, or replaced by one of the same name, is
// left as it is. The processes are a stand-in here (a scan that reports one thread as 1337); the real-node tier's S9
// runs the same guard against kubelet, containerd and runc, and test/agent/guard/real-process.test.ts against the
// real /proc.
import { CoreV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProxyGuard } from '../../src/agent/guard/guard.ts';
import { kubeGuardActions, WatchedPods } from '../../src/agent/guard/kube.ts';
import type { ScanResult } from '../../src/agent/guard/scan.ts';
import { cid, istioView } from '../agent/guard/fake-node.ts';
import { daemonClient } from './daemon-client.ts';
import { startControlPlane, waitFor, type ControlPlane } from './harness/index.ts';

const NS = 'app';
const NODE = 'node-g';
const strategic = setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch);
const STATUS = JSON.stringify({ version: 1, mode: 'cni', initContainers: ['istio-validation'], containers: [] });
const silent = { info() {}, warn() {}, error() {} };

describe('the proxy guard on a real apiserver', () => {
  let cp: ControlPlane;
  let core: CoreV1Api;

  beforeAll(async () => {
    cp = await startControlPlane({ withKwok: false });
    core = cp.kc.makeApiClient(CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: NS } } });
  }, 180_000);
  afterAll(async () => {
    await cp?.stop();
  });

  /** A pod bound to `node` (nobody runs it), its containers reported running with runtime IDs as a kubelet would. */
  async function pod(name: string, node: string, guarded: boolean): Promise<string> {
    const created = await core.createNamespacedPod({
      namespace: NS,
      body: {
        metadata: { name, annotations: guarded ? { 'meshgate.io/status': STATUS } : {} },
        spec: {
          nodeName: node,
          containers: [
            { name: 'app', image: 'docker.io/library/nginx:1.27' },
            { name: 'istio-proxy', image: 'docker.io/istio/proxyv2:1.27.0' },
          ],
        },
      },
    });
    const uid = created.metadata?.uid ?? '';
    const statuses = ['app', 'istio-proxy'].map((c) => ({
      name: c,
      image: 'x',
      imageID: '',
      ready: true,
      restartCount: 0,
      containerID: `containerd://${cid(uid, c)}`,
      state: { running: { startedAt: new Date() } },
    }));
    await core.patchNamespacedPodStatus(
      { name, namespace: NS, body: { status: { containerStatuses: statuses } } },
      strategic,
    );
    return uid;
  }

  it('watches its node’s guarded pods, deletes the one whose app runs as the proxy, records the Event', async () => {
    const bad = await pod('bad', NODE, true);
    const calm = await pod('calm', NODE, true);
    await pod('elsewhere', 'node-other', true);
    await pod('plain', NODE, false);
    const client = daemonClient(cp.kc);
    const pods = new WatchedPods(client, NODE, istioView);
    await pods.start();
    try {
      const seen = await waitFor('both guarded pods with their container IDs', () => {
        const p = pods.current();
        return p.size === 2 && p.get(bad)?.containers.size === 2 && p.get(calm)?.containers.size === 2 ? p : false;
      });
      expect([...seen.values()].map((p) => p.name).sort()).toEqual(['bad', 'calm']);
      // The stand-in for /proc: bad's app has a thread running as 1337, calm's proxy runs as 1337 (the mesh's own).
      const scan = (): ScanResult => ({
        processes: 3,
        threadsRead: 3,
        containers: new Map([
          [
            cid(bad, 'app'),
            [{ pid: 4242, threads: [{ tid: 4243, ids: { uids: [0, 1337, 0, 1337], gids: [0, 0, 0, 0] } }] }],
          ],
          [
            cid(calm, 'istio-proxy'),
            [
              {
                pid: 5000,
                threads: [{ tid: 5000, ids: { uids: [1337, 1337, 1337, 1337], gids: [1337, 1337, 1337, 1337] } }],
              },
            ],
          ],
        ]),
      });
      const killed: number[] = [];
      const guard = new ProxyGuard(1000, {
        pods,
        actions: kubeGuardActions(client),
        log: silent,
        scan,
        kill: (p) => killed.push(p),
      });
      expect((await guard.pass()).map((f) => `${f.pod.name}/${f.container}`)).toEqual(['bad/app']);
      expect(killed).toEqual([4242]);
      const gone = await core.readNamespacedPod({ name: 'bad', namespace: NS }).then(
        () => false,
        (err) => (err as { code?: number }).code === 404,
      );
      expect(gone).toBe(true);
      const events = (await core.listNamespacedEvent({ namespace: NS })).items.filter(
        (e) => e.involvedObject?.uid === bad,
      );
      expect(events.map((e) => [e.type, e.reason, e.source?.component])).toEqual([
        ['Warning', 'MeshProxyIdentityStopped', 'meshgate-node-agent'],
      ]);
      expect(events[0].message).toMatch(
        /container app of pod app\/bad ran as UID 1337 \(effective, filesystem\) in pid 4242 thread 4243, .*\[proxy_identity_stopped\]/,
      );
      await waitFor('the watch to drop the deleted pod', () => !pods.current().has(bad));
      expect((await core.readNamespacedPod({ name: 'calm', namespace: NS })).metadata?.uid).toBe(calm);
    } finally {
      pods.stop();
      client.close();
    }
  }, 120_000);

  it('leaves a pod already gone, and a new pod under the old name, as they are', async () => {
    const client = daemonClient(cp.kc);
    const actions = kubeGuardActions(client);
    const old = await pod('reused', NODE, true);
    await core.deleteNamespacedPod({ name: 'reused', namespace: NS, gracePeriodSeconds: 0 });
    await expect(actions.deletePod({ uid: old, namespace: NS, name: 'reused' } as never)).resolves.toBeUndefined();
    const fresh = await pod('reused', NODE, true);
    await expect(actions.deletePod({ uid: old, namespace: NS, name: 'reused' } as never)).resolves.toBeUndefined();
    expect((await core.readNamespacedPod({ name: 'reused', namespace: NS })).metadata?.uid).toBe(fresh);
    client.close();
  });
});
