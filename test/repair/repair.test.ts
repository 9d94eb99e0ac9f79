import { describe, expect, it } from 'vitest';
import { decideRepair, type PodForRepair } from '../../src/repair/decide.ts';
import { RepairController, type RepairApi } from '../../src/repair/controller.ts';

const term = (exitCode: number, message = '') => ({ terminated: { exitCode, message } });
function pod(over: { exit?: number; last?: number; owned?: boolean; label?: boolean; deleting?: boolean; uid?: string; message?: string } = {}): PodForRepair {
  return {
    metadata: {
      name: 'web-1', namespace: 'demo', uid: over.uid ?? 'uid-1',
      labels: over.label === false ? {} : { 'meshgate.io/redirect': 'cni' },
      ownerReferences: over.owned === false ? [] : [{ controller: true, kind: 'ReplicaSet', name: 'web' }],
      ...(over.deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}),
    },
    spec: { nodeName: 'node-a' },
    status: { initContainerStatuses: [{
      name: 'meshgate-validate',
      state: over.exit === undefined ? {} : term(over.exit, over.message),
      lastState: over.last === undefined ? {} : term(over.last, over.message),
    }] },
  };
}

const msg = JSON.stringify({ reason: 'timeout', node: 'node-a', probeAddress: '192.0.2.1:80', outboundPort: 15001, elapsedMs: 5003, detail: 'no answer' });

describe('decideRepair', () => {
  it.each([
    ['validator exited 42 now', { exit: 42, message: msg }, 'delete'],
    ['validator exited 42 before (CrashLoopBackOff)', { last: 42, message: msg }, 'delete'],
    ['validator succeeded', { exit: 0 }, 'none'],
    ['validator failed for another reason (OOM 137)', { exit: 137 }, 'none'],
    ['not a meshgate pod', { exit: 42, label: false }, 'none'],
    ['already terminating', { exit: 42, deleting: true }, 'none'],
    ['bare pod without a controller', { exit: 42, owned: false }, 'report'],
  ] as const)('%s → %s', (_n, over, action) => {
    expect(decideRepair(pod(over), 'meshgate-validate').action).toBe(action);
  });

  it('explains with the node and the validator reason from the termination message', () => {
    const d = decideRepair(pod({ exit: 42, message: msg }), 'meshgate-validate');
    expect(d.action === 'delete' && d.message).toMatch(/node node-a \(timeout: no answer\)/);
  });

  it('tolerates a termination message that is not JSON', () => {
    const d = decideRepair(pod({ exit: 42, message: 'garbage' }), 'meshgate-validate');
    expect(d.action === 'delete' && d.reason).toBe('unknown');
  });
});

function fakeApi() {
  const calls: string[] = [];
  const api: RepairApi = {
    deletePod: async (ns, name, uid) => void calls.push(`delete ${ns}/${name} ${uid}`),
    event: async (p, type, reason) => void calls.push(`event ${type} ${reason} ${p.metadata?.name}`),
  };
  return { api, calls };
}

describe('RepairController', () => {
  it('deletes a failed pod once, with its UID, and records an event', async () => {
    const { api, calls } = fakeApi();
    const ctl = new RepairController(api, { validatorName: 'meshgate-validate', maxDeletesPerMinute: 10, dryRun: false });
    await ctl.onPod(pod({ exit: 42 }));
    await ctl.onPod(pod({ exit: 42 }));
    expect(calls).toEqual(['event Warning MeshRedirectFailed web-1', 'delete demo/web-1 uid-1']);
  });

  it('dry run records the event but deletes nothing', async () => {
    const { api, calls } = fakeApi();
    await new RepairController(api, { validatorName: 'meshgate-validate', maxDeletesPerMinute: 10, dryRun: true }).onPod(pod({ exit: 42 }));
    expect(calls).toEqual(['event Warning MeshRedirectFailed web-1']);
  });

  it('throttles deletions per minute', async () => {
    const { api, calls } = fakeApi();
    let now = 0;
    const ctl = new RepairController(api, { validatorName: 'meshgate-validate', maxDeletesPerMinute: 2, dryRun: false, now: () => now });
    for (let i = 0; i < 5; i++) await ctl.onPod(pod({ exit: 42, uid: `u${i}` }));
    expect(calls.filter((c) => c.startsWith('delete'))).toHaveLength(2);
    expect(ctl.stats.throttled).toBe(3);
    now = 61_000;
    await ctl.onPod(pod({ exit: 42, uid: 'u4' }));
    expect(calls.filter((c) => c.startsWith('delete'))).toHaveLength(3);
  });
});
