/**
 * Issue 33 §6: a guarded Istio ambient pod that loses ztunnel's capture while running. The judge (table): only a pod
 * meshgate admitted as ambient (mark, its ambient validator first and completed), running, whose
 * ambient.istio.io/redirection istio-cni removed (or set to anything but enabled/pending). The controller: one
 * Warning Event per pod on the leader, the metric and gauge, deletion at enforce only (with the UID), a reported pod
 * deleted later once its namespace is promoted, dry run and the rate limit, nothing on a follower.
 */
import { describe, expect, it } from 'vitest';
import { CaptureRepair } from '../../src/repair/capture/controller.ts';
import { judgeCapture, type RepairCapturePod } from '../../src/repair/capture/judge.ts';
import { createRepairMetrics } from '../../src/repair/metrics.ts';
import type { Level } from '../../src/admission/level.ts';
import { ISO_T0, markFor, RING } from '../support/mark.ts';

const TRUST = { excludedNamespaces: ['meshgate', 'kube-system'], keys: RING };
const REDIRECTION = 'ambient.istio.io/redirection';

function ambientPod(over: { annotations?: Record<string, string | undefined>; namespace?: string; uid?: string } = {}) {
  const namespace = over.namespace ?? 'shop';
  const annotations: Record<string, string> = { 'meshgate.io/admitted': markFor(namespace) };
  for (const [k, v] of Object.entries({ [REDIRECTION]: 'enabled', ...over.annotations }))
    if (v !== undefined) annotations[k] = v;
  return {
    metadata: {
      name: 'web-1',
      namespace,
      uid: over.uid ?? 'uid-1',
      creationTimestamp: ISO_T0,
      labels: { 'meshgate.io/redirect': 'cni', app: 'web' },
      annotations,
      ownerReferences: [{ controller: true, kind: 'ReplicaSet', name: 'web' }],
    },
    spec: {
      nodeName: 'rn-1',
      initContainers: [{ name: 'istio-validation', args: ['--ambient', '--timeout=10s'] }],
    },
    status: {
      phase: 'Running',
      initContainerStatuses: [{ name: 'istio-validation', state: { terminated: { exitCode: 0 } } }],
    },
  } satisfies RepairCapturePod;
}
const lost = (o: Parameters<typeof ambientPod>[0] = {}) =>
  ambientPod({ ...o, annotations: { [REDIRECTION]: undefined, ...o.annotations } });
type Pod = ReturnType<typeof ambientPod>;
const judge = (p: RepairCapturePod) => judgeCapture(p, 'istio-validation', TRUST);

describe('which pods lost their capture', () => {
  it('istio-cni removed the annotation from a running, proven ambient pod: lost, naming node and why', () => {
    expect(judge(lost())).toEqual({
      action: 'lost',
      value: undefined,
      message:
        "pod shop/web-1 runs without ztunnel's capture: istio-cni removed its ambient.istio.io/redirection annotation " +
        "after meshgate's ambient validator had proven the capture at its start on node rn-1 (the namespace's or the " +
        "pod's istio.io/dataplane-mode changed?): its traffic now leaves unredirected",
    });
    expect(judge(ambientPod({ annotations: { [REDIRECTION]: 'disabled' } }))).toMatchObject({
      action: 'lost',
      value: 'disabled',
    });
  });

  it.each<[string, (p: Pod) => void]>([
    [
      'still enabled',
      (p) => {
        p.metadata.annotations[REDIRECTION] = 'enabled';
      },
    ],
    [
      'pending (rules set, ztunnel not yet: fails closed)',
      (p) => {
        p.metadata.annotations[REDIRECTION] = 'pending';
      },
    ],
    [
      'not running (Pending)',
      (p) => {
        p.status.phase = 'Pending';
      },
    ],
    ['terminating', (p) => void Object.assign(p.metadata, { deletionTimestamp: ISO_T0 })],
    [
      'validator not completed yet',
      (p) => {
        p.status.initContainerStatuses = [{ name: 'istio-validation', state: {} } as never];
      },
    ],
    [
      'validator failed (the failed-pod repair’s case)',
      (p) => {
        p.status.initContainerStatuses[0].state.terminated.exitCode = 42;
      },
    ],
    [
      'a sidecar pod (the validator runs without --ambient)',
      (p) => {
        p.spec.initContainers[0].args = ['--outbound-port=15001'];
      },
    ],
    ['the validator not first', (p) => void p.spec.initContainers.unshift({ name: 'setup', args: [] })],
    ['no meshgate label', (p) => void delete (p.metadata.labels as Record<string, string>)['meshgate.io/redirect']],
    [
      'no admission mark',
      (p) => void delete (p.metadata.annotations as Record<string, string>)['meshgate.io/admitted'],
    ],
    [
      'a mark of another namespace',
      (p) => {
        p.metadata.annotations['meshgate.io/admitted'] = markFor('other');
      },
    ],
    [
      "in meshgate's own namespace",
      (p) => {
        p.metadata.namespace = 'meshgate';
      },
    ],
  ])('%s: not counted', (_n, change) => {
    const p = lost();
    change(p);
    expect(judge(p)).toEqual({ action: 'none' });
  });
});

interface Call {
  what: string;
  pod: string;
  detail?: string;
}

function setup(o: { level?: Level; leader?: boolean; dryRun?: boolean; max?: number } = {}) {
  const calls: Call[] = [];
  const levels = new Map<string, Level | undefined>([['shop', o.level ?? 'enforce']]);
  const metrics = createRepairMetrics();
  let t = 0;
  const ctl = new CaptureRepair(
    {
      async deletePod(namespace, name, uid, grace) {
        calls.push({ what: 'delete', pod: `${namespace}/${name}`, detail: `${uid} grace ${grace}` });
      },
      async event(pod, type, reason, message) {
        calls.push({
          what: `${type} ${reason}`,
          pod: `${pod.metadata?.namespace}/${pod.metadata?.name}`,
          detail: message,
        });
      },
    },
    {
      validatorName: 'istio-validation',
      trust: { excludedNamespaces: TRUST.excludedNamespaces, keys: () => RING },
      levelOf: async (ns) => levels.get(ns),
      maxDeletesPerMinute: o.max ?? 10,
      dryRun: o.dryRun ?? false,
      isLeader: () => o.leader ?? true,
      metrics,
      now: () => t,
    },
  );
  const metric = async (name: string) =>
    (await metrics.registry.getSingleMetricAsString(name)).split('\n').filter((l) => !l.startsWith('#'));
  return { ctl, calls, levels, metric, tick: (ms: number) => (t += ms) };
}

describe('what the repair controller does about them', () => {
  it('at enforce: deleted with its UID, one Event saying so, counted', async () => {
    const { ctl, calls, metric } = setup();
    await ctl.observe(ambientPod());
    expect(calls).toEqual([]);
    await ctl.observe(lost());
    await ctl.observe(lost());
    expect(calls.map((c) => [c.what, c.pod, c.what === 'delete' ? c.detail : undefined])).toEqual([
      ['delete', 'shop/web-1', 'uid-1 grace 2'],
      ['Warning MeshCaptureLost', 'shop/web-1', undefined],
    ]);
    expect(calls[1].detail).toMatch(/its traffic now leaves unredirected; deleted \(namespace shop is at enforce\)$/);
    expect(await metric('meshgate_repair_capture_lost_total')).toEqual([
      'meshgate_repair_capture_lost_total{action="deleted"} 1',
    ]);
    expect(await metric('meshgate_repair_capture_lost_pods')).toEqual(['meshgate_repair_capture_lost_pods 1']);
    ctl.forget('uid-1');
    expect(await metric('meshgate_repair_capture_lost_pods')).toEqual(['meshgate_repair_capture_lost_pods 0']);
  });

  it('below enforce: one Event, not deleted; deleted once the namespace is promoted (resync)', async () => {
    const { ctl, calls, levels, metric } = setup({ level: 'audit' });
    await ctl.observe(lost());
    await ctl.observe(lost());
    expect(calls.map((c) => c.what)).toEqual(['Warning MeshCaptureLost']);
    expect(calls[0].detail).toMatch(/; namespace shop is at level audit: not deleted \(at enforce it would be\)$/);
    expect(await metric('meshgate_repair_capture_lost_total')).toEqual([
      'meshgate_repair_capture_lost_total{action="reported"} 1',
    ]);
    levels.set('shop', 'enforce');
    await ctl.resync();
    expect(calls.map((c) => c.what)).toEqual(['Warning MeshCaptureLost', 'delete', 'Warning MeshCaptureLost']);
  });

  it('a namespace no longer guarded (a cluster admin took it out): reported, not deleted', async () => {
    const { ctl, calls, levels } = setup();
    levels.set('shop', undefined);
    await ctl.observe(lost());
    expect(calls.map((c) => c.what)).toEqual(['Warning MeshCaptureLost']);
    expect(calls[0].detail).toMatch(/the namespace is no longer guarded by meshgate: not deleted$/);
  });

  it('a pod that gets its capture back before the leader acts is left alone', async () => {
    const { ctl, calls } = setup({ leader: false });
    await ctl.observe(lost());
    await ctl.observe(ambientPod());
    expect(ctl.lost()).toEqual([]);
    await ctl.resync();
    expect(calls).toEqual([]);
  });

  it('a follower acts on nothing; dry run records without deleting', async () => {
    const follower = setup({ leader: false });
    await follower.ctl.observe(lost());
    expect(follower.calls).toEqual([]);
    expect(follower.ctl.lost()).toEqual(['shop/web-1']);
    const dry = setup({ dryRun: true });
    await dry.ctl.observe(lost());
    expect(dry.calls.map((c) => c.what)).toEqual(['Warning MeshCaptureLost']);
    expect(dry.calls[0].detail).toMatch(/; dry run: not deleted$/);
  });

  it('the rate limit postpones deletions (one Event saying so), a resync after the window deletes', async () => {
    const { ctl, calls, tick } = setup({ max: 1 });
    await ctl.observe(lost({ uid: 'a' }));
    await ctl.observe(lost({ uid: 'b' }));
    expect(calls.map((c) => c.what)).toEqual(['delete', 'Warning MeshCaptureLost', 'Warning MeshCaptureLost']);
    expect(calls[2].detail).toMatch(/deletion postponed \(--max-deletes-per-minute\)$/);
    tick(61_000);
    await ctl.resync();
    expect(calls.slice(3).map((c) => [c.what, c.detail])).toEqual([
      ['delete', 'b grace 2'],
      ['Warning MeshCaptureLost', expect.stringMatching(/deleted \(namespace shop is at enforce\)$/)],
    ]);
  });
});
