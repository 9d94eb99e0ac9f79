// The proxy-identity guard (src/agent/guard/) over a procfs tree on disk and the pods a watch would deliver: what it
// finds, whom it spares, what it kills, deletes and records, and that it acts once per pod.
import { afterEach, describe, expect, it } from 'vitest';
import { type GuardActions, ProxyGuard } from '../../../src/agent/guard/guard.ts';
import { type GuardedPod, guardOf } from '../../../src/agent/guard/pods.ts';
import { scanProcesses } from '../../../src/agent/guard/scan.ts';
import { cid, FakeProc, guardedPod, istioView, linkerdView } from './fake-node.ts';

const P1 = '11111111-1111-4111-8111-111111111111';
const P2 = '22222222-2222-4222-8222-222222222222';
const ROOT = [0, 0, 0, 0];
const PROXY = [1337, 1337, 1337, 1337];
const silent = { info() {}, warn() {}, error() {} };

let proc: FakeProc;
afterEach(() => proc?.remove());

function setup(pods: GuardedPod[]) {
  const killed: number[] = [];
  const deleted: string[] = [];
  const events: string[] = [];
  const actions: GuardActions = {
    async deletePod(p) {
      deleted.push(p.name);
    },
    async event(p, reason, message) {
      events.push(`${p.name} ${reason}: ${message}`);
    },
  };
  const map = new Map(pods.map((p) => [p.uid, p]));
  const guard = new ProxyGuard(1000, {
    pods: { current: () => map },
    actions,
    log: silent,
    scan: (w) => scanProcesses(proc.root, w),
    kill: (pid) => killed.push(pid),
  });
  return { guard, killed, deleted, events };
}

const must = (p: GuardedPod | undefined): GuardedPod => {
  if (!p) throw new Error('not guarded');
  return p;
};

describe('the guard stops containers of guarded pods that run as the proxy', () => {
  it('kills and removes an app whose thread became UID 1337; spares the proxy and another pod', async () => {
    proc = new FakeProc();
    proc.process(10, { podUid: P1, container: 'istio-proxy' }, [{ tid: 10, uids: PROXY, gids: PROXY }]);
    proc.process(20, { podUid: P1, container: 'app' }, [
      { tid: 20, uids: ROOT, gids: ROOT },
      { tid: 21, uids: [0, 1337, 0, 1337], gids: ROOT }, // one thread: a raw setuid syscall changes only it
    ]);
    proc.process(22, { podUid: P1, container: 'app' }, [{ tid: 22, uids: ROOT, gids: ROOT }]);
    proc.process(30, { podUid: P2, container: 'app' }, [{ tid: 30, uids: [1000, 1000, 1000, 1000], gids: ROOT }]);
    proc.process(40, 'host', [{ tid: 40, uids: PROXY, gids: PROXY }]);
    const pods = [P1, P2].map((u) =>
      must(guardOf(guardedPod(u, [{ name: 'istio-proxy' }, { name: 'app' }]), istioView)),
    );
    const { guard, killed, deleted, events } = setup(pods);
    const found = await guard.pass();
    expect(found.map((f) => [f.pod.uid, f.container, f.kind])).toEqual([[P1, 'app', 'running']]);
    expect(found[0].message).toMatch(
      /container app of pod demo\/pod-1111 ran as UID 1337 \(effective, filesystem\) in pid 20 thread 21/,
    );
    expect(killed.sort()).toEqual([20, 22]);
    expect(deleted).toEqual(['pod-1111']);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatch(/MeshProxyIdentityStopped: .*killed and its pod removed \[proxy_identity_stopped\]/);
    // Still running on the next pass (the delete is on its way): killed again, deleted and reported once.
    await guard.pass();
    expect(killed.sort()).toEqual([20, 20, 22, 22]);
    expect(deleted).toHaveLength(1);
    expect(events).toHaveLength(1);
  });

  it('judges the GID Istio exempts, and the UID of an OpenShift proxy (its runAsUser)', async () => {
    proc = new FakeProc();
    proc.process(20, { podUid: P1, container: 'app' }, [{ tid: 20, uids: [1000, 1000, 1000, 1000], gids: PROXY }]);
    proc.process(30, { podUid: P2, container: 'app' }, [{ tid: 30, uids: [1000650001, 1000650001, 0, 0], gids: ROOT }]);
    const p1 = must(guardOf(guardedPod(P1, [{ name: 'istio-proxy' }, { name: 'app' }]), istioView));
    const p2 = must(
      guardOf(guardedPod(P2, [{ name: 'istio-proxy' }, { name: 'app' }], { proxyRunAsUser: 1000650001 }), istioView),
    );
    const { guard, deleted } = setup([p1, p2]);
    const found = await guard.pass();
    expect(found.map((f) => f.message)).toEqual([
      expect.stringMatching(/ran as GID 1337 \(real, effective, saved, filesystem\)/),
      expect.stringMatching(/ran as UID 1000650001 \(real, effective\)/),
    ]);
    expect(deleted.sort()).toEqual(['pod-1111', 'pod-2222']);
  });

  it("Linkerd: the proxy's UID 2102, and a GID the pod's annotation exempts", async () => {
    proc = new FakeProc();
    proc.process(20, { podUid: P1, container: 'app' }, [{ tid: 20, uids: ROOT, gids: [0, 0, 0, 1337] }]);
    proc.process(30, { podUid: P2, container: 'app' }, [{ tid: 30, uids: [2102, 2102, 2102, 2102], gids: ROOT }]);
    const annotations = { 'config.linkerd.io/proxy-gid': '1337' };
    const pods = [
      must(guardOf(guardedPod(P1, [{ name: 'linkerd-proxy' }, { name: 'app' }], { annotations }), linkerdView)),
      must(guardOf(guardedPod(P2, [{ name: 'linkerd-proxy' }, { name: 'app' }]), linkerdView)),
    ];
    const { guard } = setup(pods);
    expect((await guard.pass()).map((f) => f.message)).toEqual([
      expect.stringMatching(/pod-1111 ran as GID 1337 \(filesystem\)/),
      expect.stringMatching(/pod-2222 ran as UID 2102/),
    ]);
  });

  it('waits for the kubelet to name a container before judging it (it could be the proxy)', async () => {
    proc = new FakeProc();
    proc.process(10, { podUid: P1, container: 'istio-proxy' }, [{ tid: 10, uids: PROXY, gids: PROXY }]);
    const pending = must(guardOf(guardedPod(P1, [{ name: 'istio-proxy', running: false }]), istioView));
    const { guard, killed } = setup([pending]);
    expect(await guard.pass()).toEqual([]);
    expect(killed).toEqual([]);
  });

  it('acts on what the runtime reports (KEP-3619), and records a refusal by the NRI plugin once', async () => {
    proc = new FakeProc();
    const reported = must(
      guardOf(
        guardedPod(P1, [
          { name: 'istio-proxy', user: { uid: 1337, gid: 1337 } },
          { name: 'app', user: { uid: 1337, gid: 0 } },
        ]),
        istioView,
      ),
    );
    const refusal =
      'failed to create containerd container: meshgate: container app runs as UID 1337 [proxy_identity_refused]';
    const refused = must(guardOf(guardedPod(P2, [{ name: 'app', running: false, waiting: refusal }]), istioView));
    const { guard, deleted, events } = setup([reported, refused]);
    expect((await guard.pass()).map((f) => [f.pod.uid, f.kind])).toEqual([
      [P1, 'reported'],
      [P2, 'refused'],
    ]);
    await guard.pass();
    expect(deleted).toEqual(['pod-1111']);
    expect(events.map((e) => e.split(':')[0])).toEqual([
      'pod-1111 MeshProxyIdentityStopped',
      'pod-2222 MeshProxyIdentityRefused',
    ]);
  });

  it('does not watch pods meshgate did not admit, and reads no process when none is guarded', async () => {
    proc = new FakeProc();
    const plain = guardedPod(P1, [{ name: 'app' }]);
    plain.metadata = { ...plain.metadata, annotations: {} };
    expect(guardOf(plain, istioView)).toBeUndefined();
    let scans = 0;
    const guard = new ProxyGuard(1000, {
      pods: { current: () => new Map() },
      actions: { deletePod: async () => {}, event: async () => {} },
      log: silent,
      scan: () => {
        scans++;
        return { containers: new Map(), processes: 0, threadsRead: 0 };
      },
    });
    await guard.pass();
    expect(scans).toBe(0);
  });

  it('retries a deletion that failed on the next pass', async () => {
    proc = new FakeProc();
    proc.process(20, { podUid: P1, container: 'app' }, [{ tid: 20, uids: PROXY, gids: ROOT }]);
    const pod = must(guardOf(guardedPod(P1, [{ name: 'app' }]), istioView));
    let attempts = 0;
    const guard = new ProxyGuard(1000, {
      pods: { current: () => new Map([[pod.uid, pod]]) },
      actions: {
        deletePod: async () => {
          if (++attempts === 1) throw new Error('apiserver unavailable');
        },
        event: async () => {},
      },
      log: silent,
      scan: (w) => scanProcesses(proc.root, w),
      kill: () => {},
    });
    await guard.pass();
    await guard.pass();
    await guard.pass();
    expect(attempts).toBe(2);
  });
});

it("the fake node's container IDs are the runtime's form", () => {
  expect(cid(P1, 'app')).toMatch(/^[0-9a-f]{64}$/);
  expect(cid(P1, 'app')).not.toBe(cid(P2, 'app'));
});
