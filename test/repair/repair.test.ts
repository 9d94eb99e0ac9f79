import { ApiException } from '@kubernetes/client-node';
import { memoryLogger } from '../log/logs.ts';
import { describe, expect, it } from 'vitest';
import { decideRepair, type PodForRepair, type ValidatorWatch } from '../../src/repair/failed/decide.ts';
import { RepairController, type RepairApi } from '../../src/repair/failed/controller.ts';
import { VALIDATION_FAILURES } from '../../src/repair/failed/failures.ts';
import { createRepairMetrics } from '../../src/repair/metrics.ts';
import { keyRing } from '../../src/mark/keys.ts';
import { ISO_T0, KEY_A, KEY_B, RING, T0, markFor } from '../support/mark.ts';

const CUSTOM: ValidatorWatch = { name: 'meshgate-validate', failures: VALIDATION_FAILURES.custom };
const ISTIO: ValidatorWatch = { name: 'istio-validation', failures: VALIDATION_FAILURES.istio };
const LINKERD: ValidatorWatch = { name: 'linkerd-network-validator', failures: VALIDATION_FAILURES.linkerd };

const term = (exitCode: number, message = '') => ({ terminated: { exitCode, message } });
interface Over {
  exit?: number;
  last?: number;
  owned?: boolean;
  label?: boolean;
  deleting?: boolean;
  uid?: string;
  message?: string;
  container?: string;
  namespace?: string;
  /** The pod's admission mark; null: none. Default: issued for its namespace at its creation. */
  mark?: string | null;
  created?: string;
}
function pod(over: Over = {}): PodForRepair {
  const namespace = over.namespace ?? 'demo';
  const mark = over.mark === undefined ? markFor(namespace) : over.mark;
  return {
    metadata: {
      name: 'web-1',
      namespace,
      uid: over.uid ?? 'uid-1',
      creationTimestamp: over.created ?? ISO_T0,
      labels: over.label === false ? {} : { 'meshgate.io/redirect': 'cni' },
      annotations: mark === null ? {} : { 'meshgate.io/admitted': mark },
      ownerReferences: over.owned === false ? [] : [{ controller: true, kind: 'ReplicaSet', name: 'web' }],
      ...(over.deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}),
    },
    spec: { nodeName: 'node-a' },
    status: {
      initContainerStatuses: [
        {
          name: over.container ?? 'meshgate-validate',
          state: over.exit === undefined ? {} : term(over.exit, over.message),
          lastState: over.last === undefined ? {} : term(over.last, over.message),
        },
      ],
    },
  };
}

const msg = JSON.stringify({
  reason: 'timeout',
  node: 'node-a',
  probeAddress: '192.0.2.1:80',
  outboundPort: 15001,
  elapsedMs: 5003,
  detail: 'no answer',
});
const ISTIO_MSG =
  'iptables validation failed; workload is not ready for Istio.\nWhen using Istio CNI, this can occur if a pod is scheduled before the node is ready.';

const TRUST = { excludedNamespaces: ['meshgate', 'kube-system'], keys: RING };

describe('decideRepair', () => {
  it.each([
    ['validator exited 42 now', CUSTOM, { exit: 42, message: msg }, 'delete'],
    ['validator exited 42 before (CrashLoopBackOff)', CUSTOM, { last: 42, message: msg }, 'delete'],
    ['validator succeeded', CUSTOM, { exit: 0 }, 'none'],
    ['validator failed for another reason (OOM 137)', CUSTOM, { exit: 137 }, 'none'],
    ['exit 126 is no failure for mesh custom', CUSTOM, { exit: 126 }, 'none'],
    ['not a meshgate pod', CUSTOM, { exit: 42, label: false }, 'none'],
    ['already terminating', CUSTOM, { exit: 42, deleting: true }, 'none'],
    ['bare pod without a controller', CUSTOM, { exit: 42, owned: false }, 'report'],
    [
      'istio: Istio’s own istio-validation exited 126',
      ISTIO,
      { last: 126, container: 'istio-validation', message: ISTIO_MSG },
      'delete',
    ],
    [
      'istio: meshgate’s validator (named istio-validation) exited 42',
      ISTIO,
      { exit: 42, container: 'istio-validation', message: msg },
      'delete',
    ],
    [
      'istio: istio-validation exited 1 (bad flags, not a redirect failure)',
      ISTIO,
      { exit: 1, container: 'istio-validation' },
      'none',
    ],
    [
      'istio: another container named like the custom validator',
      ISTIO,
      { exit: 42, container: 'meshgate-validate' },
      'none',
    ],
    [
      'linkerd: the network validator exited 95',
      LINKERD,
      { exit: 95, container: 'linkerd-network-validator' },
      'delete',
    ],
    ['linkerd: 126 means nothing to Linkerd', LINKERD, { exit: 126, container: 'linkerd-network-validator' }, 'none'],
  ] as const)('%s → %s', (_n, validator, over, action) => {
    expect(decideRepair(pod(over), validator, TRUST).action).toBe(action);
  });

  it.each([
    [
      'no mark (a look-alike in a namespace meshgate does not guard)',
      { mark: null },
      'mark_missing',
      /carries no meshgate.io\/admitted/,
    ],
    [
      'a mark copied from another namespace',
      { mark: markFor('shop') },
      'mark_invalid',
      /does not verify for namespace demo/,
    ],
    ['a forged mark', { mark: markFor('demo', T0, keyRing(KEY_B)) }, 'mark_invalid', /which meshgate does not hold/],
    ['a truncated mark', { mark: markFor('demo').slice(0, -3) }, 'mark_invalid', /is not a meshgate mark/],
    [
      'a mark copied onto a pod created an hour later',
      { created: '2026-01-01T01:00:00Z' },
      'mark_invalid',
      /a mark holds only for a pod created within 5 minutes/,
    ],
    ['no creationTimestamp', { created: 'not a time' }, 'mark_invalid', /no creationTimestamp/],
  ] as const)('validator failed, %s → untrusted (%s)', (_n, over, why, problem) => {
    const d = decideRepair(pod({ exit: 42, message: msg, ...over }), CUSTOM, TRUST);
    expect(d).toMatchObject({ action: 'untrusted', why, node: 'node-a', reason: 'timeout' });
    expect(d.action === 'untrusted' && d.problem).toMatch(problem);
    expect(d.action === 'untrusted' && d.message).toMatch(/; not acted on: /);
  });

  it('no key loaded → untrusted (no_key), whatever the mark', () => {
    expect(decideRepair(pod({ exit: 42 }), CUSTOM, { ...TRUST, keys: undefined })).toMatchObject({
      action: 'untrusted',
      why: 'no_key',
    });
  });

  it('a mark by the previous key is trusted after a rotation', () => {
    const rotated = { ...TRUST, keys: keyRing(KEY_B, [KEY_A]) };
    expect(decideRepair(pod({ exit: 42 }), CUSTOM, rotated).action).toBe('delete');
  });

  it.each(['meshgate', 'kube-system'])('a pod in %s (never guarded) → none, even marked', (namespace) => {
    expect(decideRepair(pod({ exit: 42, namespace }), CUSTOM, TRUST)).toEqual({
      action: 'none',
      why: 'excluded_namespace',
    });
  });

  it('explains with the node and the validator reason from the termination message', () => {
    const d = decideRepair(pod({ exit: 42, message: msg }), CUSTOM, TRUST);
    expect(d.action === 'delete' && d.message).toMatch(/node node-a \(timeout: no answer\)/);
  });

  it('names Istio’s failure with the first line of its message', () => {
    const d = decideRepair(pod({ last: 126, container: 'istio-validation', message: ISTIO_MSG }), ISTIO, TRUST);
    expect(d.action === 'delete' && [d.reason, d.message]).toEqual([
      'istio_validation_failed',
      expect.stringContaining(
        '(istio_validation_failed: iptables validation failed; workload is not ready for Istio.)',
      ),
    ]);
  });

  it('tolerates a termination message that is not JSON', () => {
    const d = decideRepair(pod({ exit: 42, message: 'garbage' }), CUSTOM, TRUST);
    expect(d.action === 'delete' && d.reason).toBe('unknown');
  });
});

function fakeApi(fail: { delete?: Error } = {}) {
  const calls: string[] = [];
  const api: RepairApi = {
    deletePod: async (ns, name, uid) => {
      if (fail.delete) throw fail.delete;
      calls.push(`delete ${ns}/${name} ${uid}`);
    },
    event: async (p, type, reason) => void calls.push(`event ${type} ${reason} ${p.metadata?.name}`),
  };
  return { api, calls };
}

const opts = {
  validator: CUSTOM,
  trust: { excludedNamespaces: TRUST.excludedNamespaces, keys: () => RING },
  maxDeletesPerMinute: 10,
  dryRun: false,
};

describe('RepairController', () => {
  it('deletes a failed pod once, with its UID, and records an event', async () => {
    const { api, calls } = fakeApi();
    const metrics = createRepairMetrics();
    const ctl = new RepairController(api, { ...opts, metrics });
    await ctl.observe(pod({ exit: 42, message: msg }));
    await ctl.observe(pod({ exit: 42, message: msg }));
    expect(calls).toEqual(['event Warning MeshRedirectFailed web-1', 'delete demo/web-1 uid-1']);
    expect(await metrics.registry.getSingleMetricAsString('meshgate_repair_pods_deleted_total')).toContain(
      'meshgate_repair_pods_deleted_total{reason="timeout"} 1',
    );
  });

  it('dry run records the event but deletes nothing', async () => {
    const { api, calls } = fakeApi();
    await new RepairController(api, { ...opts, dryRun: true }).observe(pod({ exit: 42 }));
    expect(calls).toEqual(['event Warning MeshRedirectFailed web-1']);
  });

  it('reports a bare pod and counts it', async () => {
    const { api, calls } = fakeApi();
    const metrics = createRepairMetrics();
    await new RepairController(api, { ...opts, metrics }).observe(pod({ exit: 42, owned: false, message: msg }));
    expect(calls).toEqual(['event Warning MeshRedirectFailed web-1']);
    expect(await metrics.registry.getSingleMetricAsString('meshgate_repair_pods_reported_total')).toContain(
      '{reason="timeout"} 1',
    );
  });

  it('throttles deletions per minute and retries them on resync', async () => {
    const { api, calls } = fakeApi();
    let now = 0;
    const ctl = new RepairController(api, { ...opts, maxDeletesPerMinute: 2, now: () => now });
    for (let i = 0; i < 5; i++) await ctl.observe(pod({ exit: 42, uid: `u${i}` }));
    expect(calls.filter((c) => c.startsWith('delete'))).toHaveLength(2);
    expect(ctl.stats.throttled).toBe(3);
    now = 61_000;
    await ctl.resync();
    expect(calls.filter((c) => c.startsWith('delete'))).toEqual([
      'delete demo/web-1 u0',
      'delete demo/web-1 u1',
      'delete demo/web-1 u2',
      'delete demo/web-1 u3',
    ]);
  });

  it('acts only while leader, and a new leader acts on what failed before', async () => {
    const { api, calls } = fakeApi();
    let leader = false;
    const metrics = createRepairMetrics();
    const ctl = new RepairController(api, { ...opts, isLeader: () => leader, metrics });
    await ctl.observe(pod({ exit: 42, uid: 'a' }));
    await ctl.observe(pod({ exit: 0, uid: 'b' }));
    expect(calls).toEqual([]);
    expect(await metrics.registry.getSingleMetricAsString('meshgate_repair_candidates')).toContain(
      'meshgate_repair_candidates 1',
    );
    leader = true;
    await ctl.resync();
    expect(calls).toEqual(['event Warning MeshRedirectFailed web-1', 'delete demo/web-1 a']);
  });

  it('does not delete when it lost the lease while recording the event', async () => {
    const { api, calls } = fakeApi();
    let leader = true;
    const slowEvent: RepairApi = {
      ...api,
      event: async (...a) => {
        await api.event(...a);
        leader = false;
      },
    };
    await new RepairController(slowEvent, { ...opts, isLeader: () => leader }).observe(pod({ exit: 42 }));
    expect(calls).toEqual(['event Warning MeshRedirectFailed web-1']);
  });

  it('a failed delete is counted, logged as fields, not thrown, and retried at the next event', async () => {
    const forbidden = { kind: 'Status', reason: 'Forbidden', message: 'pods "web-1" is forbidden', code: 403 };
    const failing = fakeApi({ delete: new ApiException(403, 'Forbidden', JSON.stringify(forbidden), {}) });
    const metrics = createRepairMetrics();
    const { logger, lines } = memoryLogger();
    const ctl = new RepairController(failing.api, { ...opts, metrics, logger });
    await ctl.observe(pod({ exit: 42 }));
    await ctl.observe(pod({ exit: 42 }));
    expect(await metrics.registry.getSingleMetricAsString('meshgate_repair_errors_total')).toContain(
      '{action="delete"} 2',
    );
    expect(ctl.stats.deleted).toBe(0);
    const failed = lines.filter((l) => l.msg === 'repair call failed');
    expect(failed).toHaveLength(2);
    expect(failed[0]).toMatchObject({
      level: 'error',
      action: 'delete',
      err: { type: 'ApiException', code: 403, reason: 'Forbidden', message: 'pods "web-1" is forbidden' },
    });
  });

  it('forgets a pod that is gone, and one whose validator now passes', async () => {
    const { api } = fakeApi();
    const metrics = createRepairMetrics();
    const ctl = new RepairController(api, { ...opts, isLeader: () => false, metrics });
    await ctl.observe(pod({ exit: 42, uid: 'a' }));
    await ctl.observe(pod({ exit: 42, uid: 'b' }));
    ctl.forget('a');
    await ctl.observe(pod({ exit: 0, uid: 'b' }));
    expect(await metrics.registry.getSingleMetricAsString('meshgate_repair_candidates')).toContain(
      'meshgate_repair_candidates 0',
    );
  });

  it('neither acts on nor reports an untrusted failure; counts it once per pod', async () => {
    const { api, calls } = fakeApi();
    const metrics = createRepairMetrics();
    const failures: string[] = [];
    const ctl = new RepairController(api, { ...opts, metrics, onFailure: (f) => void failures.push(f.pod) });
    for (const uid of ['x', 'x', 'y']) await ctl.observe(pod({ exit: 42, uid, mark: null }));
    await ctl.observe(pod({ exit: 42, uid: 'z', mark: markFor('shop') }));
    await ctl.resync();
    expect(calls).toEqual([]);
    expect(failures).toEqual([]);
    const text = await metrics.registry.getSingleMetricAsString('meshgate_repair_untrusted_failures_total');
    expect(text).toContain('{why="mark_missing"} 2');
    expect(text).toContain('{why="mark_invalid"} 1');
    expect(await metrics.registry.getSingleMetricAsString('meshgate_repair_candidates')).toContain(
      'meshgate_repair_candidates 0',
    );
    // A marked pod next to them is acted on as before.
    await ctl.observe(pod({ exit: 42, uid: 'real', message: msg }));
    expect(calls).toEqual(['event Warning MeshRedirectFailed web-1', 'delete demo/web-1 real']);
    expect(failures).toEqual(['demo/web-1']);
  });

  it('deletes a pod whose validator could not check, but never counts it against the node (issue 33 §7)', async () => {
    const { api, calls } = fakeApi();
    const failures: string[] = [];
    const ctl = new RepairController(api, { ...opts, onFailure: (f) => void failures.push(`${f.pod} ${f.reason}`) });
    const says = (reason: string) => JSON.stringify({ reason, node: 'node-a', detail: 'x' });
    await ctl.observe(pod({ exit: 42, uid: 'a', message: says('listen_failed') }));
    await ctl.observe(pod({ exit: 42, uid: 'b', message: says('internal_error') }));
    await ctl.observe(pod({ exit: 42, uid: 'c', message: 'not json' }));
    expect(failures).toEqual([]);
    expect(calls.filter((c) => c.startsWith('delete'))).toEqual([
      'delete demo/web-1 a',
      'delete demo/web-1 b',
      'delete demo/web-1 c',
    ]);
    await ctl.observe(pod({ exit: 42, uid: 'd', message: says('not_redirected') }));
    expect(failures).toEqual(['demo/web-1 not_redirected']);
    // Istio's own validator exits 126 for every failure: it counts (admission refuses what breaks it on a healthy node).
    const istio = decideRepair(pod({ exit: 126, container: 'istio-validation', message: ISTIO_MSG }), ISTIO, TRUST);
    expect(istio).toMatchObject({ action: 'delete', counted: true });
    const unchecked = decideRepair(pod({ exit: 42, message: says('listen_failed') }), CUSTOM, TRUST);
    expect(unchecked).toMatchObject({ action: 'delete', reason: 'listen_failed', counted: false });
  });

  it('acts once the key arrives on a pod it could not trust before', async () => {
    const { api, calls } = fakeApi();
    let keys: typeof RING | undefined;
    const ctl = new RepairController(api, { ...opts, trust: { ...opts.trust, keys: () => keys } });
    await ctl.observe(pod({ exit: 42 }));
    expect(calls).toEqual([]);
    keys = RING;
    await ctl.observe(pod({ exit: 42 }));
    expect(calls).toEqual(['event Warning MeshRedirectFailed web-1', 'delete demo/web-1 uid-1']);
  });
});
