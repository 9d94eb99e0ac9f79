/**
 * The repair controller's Events on pods meshgate holds Pending or admitted below enforce (src/repair/notices/notice.ts,
 * notices.ts): one per pod and reason, written by the leader only (a new leader writes what is still due), none in
 * meshgate's own or the system namespaces, a failed write retried at the pod's next update. A hand-written fake API.
 */
import { describe, expect, it } from 'vitest';
import type { PodForRepair } from '../../src/repair/failed/decide.ts';
import { noticeFor } from '../../src/repair/notices/notice.ts';
import { PodNotices } from '../../src/repair/notices/notices.ts';

const EXCLUDED = ['meshgate', 'kube-system'];

function held(uid = 'u-held', namespace = 'shop'): PodForRepair {
  return {
    metadata: {
      name: 'logs-x',
      namespace,
      uid,
      labels: { 'meshgate.io/redirect': 'cni' },
      annotations: {
        'meshgate.io/status': JSON.stringify({
          version: 1,
          mode: 'cni',
          reason: 'node_unverified_wait',
          node: 'node-b',
          nativeSidecar: true,
          initContainers: ['istio-validation'],
          containers: [],
          volumes: [],
          affinity: true,
        }),
      },
    },
    spec: {},
    status: {
      phase: 'Pending',
      conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: '0/2 nodes fit' }],
    },
  } as PodForRepair;
}

function audited(uid = 'u-audit'): PodForRepair {
  return {
    metadata: {
      name: 'web-1',
      namespace: 'shop',
      uid,
      labels: { 'meshgate.io/would-deny': 'audit' },
      annotations: { 'meshgate.io/would-deny': 'impostor_container: container istio-proxy is not the real proxy' },
    },
  };
}

class FakeEvents {
  events: Array<[string, string, string]> = [];
  failNext = false;
  async event(pod: PodForRepair, _type: string, reason: string, message: string) {
    if (this.failNext) {
      this.failNext = false;
      throw new Error('apiserver unavailable');
    }
    this.events.push([pod.metadata?.uid ?? '', reason, message]);
  }
}

describe('pod notices', () => {
  it('say why a pod is held, and what enforce would refuse with the fix', () => {
    expect(noticeFor(held(), EXCLUDED)).toMatchObject({
      reason: 'MeshPodHeld',
      message: expect.stringMatching(/pinned to node node-b .*\[node_unverified_wait\].*The scheduler says: 0\/2/),
    });
    const n = noticeFor(audited(), EXCLUDED);
    expect(n?.reason).toBe('MeshWouldDeny');
    expect(n?.message).toMatch(
      /^meshgate admitted this pod only because its namespace is at enforcement level audit; at enforce it would be refused \[impostor_container\]: container istio-proxy is not the real proxy\. To fix: rename the container; .*config\.recognisedImages/,
    );
    expect(noticeFor(held('u', 'kube-system'), EXCLUDED)).toBeUndefined();
    expect(noticeFor({ metadata: { uid: 'u', namespace: 'shop', labels: { app: 'x' } } }, EXCLUDED)).toBeUndefined();
  });

  it('one Event per pod and reason, by the leader only; a new leader writes those still due', async () => {
    const api = new FakeEvents();
    let leader = false;
    const n = new PodNotices(api, { excludedNamespaces: EXCLUDED, isLeader: () => leader });
    await n.observe(held());
    await n.observe(audited());
    expect(api.events).toEqual([]);
    leader = true;
    await n.resync();
    await n.observe(held());
    await n.observe(audited());
    expect(api.events.map(([uid, reason]) => `${uid} ${reason}`)).toEqual([
      'u-held MeshPodHeld',
      'u-audit MeshWouldDeny',
    ]);
    expect(n.stats).toEqual({ MeshPodHeld: 1, MeshWouldDeny: 1 });
  });

  it('a pod no longer held needs nothing; a pod gone and back (another UID) gets its own', async () => {
    const api = new FakeEvents();
    const n = new PodNotices(api, { excludedNamespaces: EXCLUDED });
    await n.observe(held());
    const scheduled = held();
    (scheduled as { spec: { nodeName?: string } }).spec.nodeName = 'node-b';
    await n.observe(scheduled);
    await n.resync();
    n.forget('u-held');
    await n.observe(held('u-held-2'));
    expect(api.events.map(([uid]) => uid)).toEqual(['u-held', 'u-held-2']);
  });

  it('a failed write is tried again at the next update', async () => {
    const api = new FakeEvents();
    const n = new PodNotices(api, { excludedNamespaces: EXCLUDED });
    api.failNext = true;
    await n.observe(audited());
    expect(api.events).toEqual([]);
    await n.observe(audited());
    expect(api.events).toHaveLength(1);
  });
});
