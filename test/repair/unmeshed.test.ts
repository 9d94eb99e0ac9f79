/**
 * Pods of opted-in namespaces running without meshgate's redirect: which are evicted, which only reported (bare
 * pods, pods meshgate would refuse as they are), which left alone; and the sweep against a fake API on a fake
 * clock — opted-in namespaces from the webhook configuration's selectors, the eviction rate limit, a
 * PodDisruptionBudget's refusal retried, one Event per pod.
 */
import { describe, expect, it } from 'vitest';
import type { PodRecord } from '../../src/check/facts.ts';
import type { NamespaceFacts, WebhookConfig } from '../../src/check/facts.ts';
import { createRepairMetrics } from '../../src/repair/metrics.ts';
import { judgeUnmeshed } from '../../src/repair/unmeshed/judge.ts';
import { BLOCKED_RETRY_MS, UnmeshedPods, type PodRef, type UnmeshedApi } from '../../src/repair/unmeshed/sweep.ts';
import type { Pod } from '../../src/contract/pod.ts';
import { cfg, istioPod, pod } from '../policy/mutate/fixtures.ts';
import { LabelledUnmeshed } from '../../src/repair/unmeshed/labelled.ts';

const c = cfg('istio');
const RS = { kind: 'ReplicaSet', name: 'web-6d4f' };

function record(p: Pod, o: Partial<PodRecord> = {}): PodRecord {
  return {
    namespace: 'shop',
    name: p.metadata?.name ?? 'web',
    object: p,
    labels: p.metadata?.labels,
    annotations: p.metadata?.annotations,
    phase: 'Running',
    deleting: false,
    owner: RS,
    ...o,
  };
}

describe('judgeUnmeshed', () => {
  it.each([
    ['a plain pod of a ReplicaSet (created before the label)', record(pod()), 'evict'],
    ['Istio-injected with its own istio-init', record(istioPod()), 'none'],
    ['CNI mode with meshgate’s validator', record(istioPod({ initContainers: [c.validator as never] })), 'none'],
    ['a bare pod', record(pod(), { owner: undefined }), 'report'],
    ['hostNetwork (meshgate would refuse it again)', record(pod({ hostNetwork: true })), 'report'],
    [
      'opted out by label (refused: allowPodOptOut is false)',
      record(pod({}, { name: 'web', labels: { 'sidecar.istio.io/inject': 'false' } })),
      'report',
    ],
    [
      'a kubelet mirror pod',
      record(pod(), { owner: { kind: 'Node', name: 'n1' }, annotations: { 'kubernetes.io/config.mirror': 'x' } }),
      'none',
    ],
    ['a finished pod', record(pod(), { phase: 'Succeeded' }), 'none'],
    ['a terminating pod', record(pod(), { deleting: true }), 'none'],
    ['a pod of a system namespace', record(pod(), { namespace: 'kube-system' }), 'none'],
  ] as const)('%s → %s', (_n, p, action) => {
    expect(judgeUnmeshed(p, c).action).toBe(action);
  });

  it('says why, where it came from and how to restart it', () => {
    const a = judgeUnmeshed(record(pod(), { owner: { kind: 'DaemonSet', name: 'agent' } }), c);
    expect(a).toMatchObject({ action: 'evict', reason: 'proxy_missing' });
    expect(a.action === 'evict' && a.message).toMatch(
      /created before the namespace was opted in.*Evicting it \(PodDisruptionBudgets respected\) so its DaemonSet agent recreates it.*kubectl -n shop rollout restart daemonset\/agent/,
    );
    const refused = judgeUnmeshed(record(pod({ hostNetwork: true })), c);
    expect(refused.action === 'report' && [refused.why, refused.message]).toEqual([
      'would_be_refused',
      expect.stringContaining('meshgate would refuse it, so it is not evicted'),
    ]);
    const bare = judgeUnmeshed(record(pod(), { owner: undefined }), c);
    expect(bare.action === 'report' && bare.why).toBe('bare_pod');
  });
});

const T0 = Date.parse('2026-05-01T10:00:00Z');
const webhook: WebhookConfig = {
  kind: 'mutating',
  name: 'meshgate',
  webhooks: [
    {
      name: 'ns-meshgate.mutate.meshgate.io',
      namespaceSelector: {
        matchExpressions: [
          { key: 'meshgate.io/inject', operator: 'In', values: ['enabled'] },
          { key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: ['meshgate', 'kube-system'] },
        ],
      },
    },
  ],
};

/** Pods by namespace, a namespace list, evictions a PodDisruptionBudget may refuse. */
class FakeApi implements UnmeshedApi {
  pods_ = new Map<string, PodRecord[]>();
  namespaces_: NamespaceFacts[] = [
    { name: 'shop', labels: { 'meshgate.io/inject': 'enabled' } },
    { name: 'other', labels: {} },
  ];
  readonly evictions: string[] = [];
  readonly events: Array<{ pod: string; reason: string; message: string }> = [];
  /** Evictions refused by a PodDisruptionBudget before they succeed. */
  blocked = 0;
  async webhookConfig() {
    return webhook;
  }
  async namespaces() {
    return this.namespaces_;
  }
  /** The selector of each list asked for. */
  readonly selectors: Array<string | undefined> = [];
  async pods(namespace: string, each: (p: PodRecord) => void, labelSelector?: string) {
    this.selectors.push(labelSelector);
    // The apiserver's filtering of the one selector the sweep adds: pods without meshgate's label.
    const unlabelled = labelSelector === '!meshgate.io/redirect';
    for (const p of this.pods_.get(namespace) ?? [])
      if (!unlabelled || p.labels?.['meshgate.io/redirect'] === undefined) each(p);
    return undefined;
  }
  async evict(p: PodRef) {
    if (this.blocked > 0) {
      this.blocked--;
      return 'blocked' as const;
    }
    this.evictions.push(p.name);
    this.pods_.set(
      p.namespace,
      (this.pods_.get(p.namespace) ?? []).filter((r) => r.name !== p.name),
    );
    return 'evicted' as const;
  }
  async event(p: PodRef, _type: string, reason: string, message: string) {
    this.events.push({ pod: p.name, reason, message });
  }
}

function plain(ns: string, name: string, owner: PodRecord['owner'] = RS): PodRecord {
  return record({ ...pod(), metadata: { name, namespace: ns, uid: `uid-${name}` } }, { namespace: ns, name, owner });
}

function setup(o: { evict?: boolean; perMinute?: number; labelled?: LabelledUnmeshed } = {}) {
  let now = T0;
  const api = new FakeApi();
  const sweeper = new UnmeshedPods(api, {
    cfg: c,
    evict: o.evict ?? true,
    maxEvictionsPerMinute: o.perMinute ?? 10,
    dryRun: false,
    now: () => now,
    metrics: createRepairMetrics(),
    labelled: o.labelled,
  });
  return { api, sweeper, advance: (ms: number) => (now += ms) };
}

describe('the unmeshed-pod sweep', () => {
  it('evicts the unmeshed pods of opted-in namespaces only, at most N a minute, with an Event each', async () => {
    const s = setup({ perMinute: 2 });
    s.api.pods_.set(
      'shop',
      ['a', 'b', 'c', 'd', 'e'].map((n) => plain('shop', n)),
    );
    s.api.pods_.set('other', [plain('other', 'x')]);
    const r = await s.sweeper.sweep();
    expect(r).toMatchObject({ found: 5, queued: 5, errors: [] });
    expect(s.api.evictions).toEqual(['a', 'b']);
    expect(s.sweeper.stats.throttled).toBe(1);
    s.advance(30_000);
    await s.sweeper.drain();
    expect(s.api.evictions).toEqual(['a', 'b']); // the window is a full minute
    s.advance(30_001);
    await s.sweeper.drain();
    expect(s.api.evictions).toEqual(['a', 'b', 'c', 'd']);
    s.advance(60_000);
    await s.sweeper.drain();
    expect(s.api.evictions).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(s.api.events.map((e) => `${e.pod} ${e.reason}`)).toEqual(
      ['a', 'b', 'c', 'd', 'e'].map((n) => `${n} MeshUnmeshedEvicted`),
    );
    s.sweeper.stop();
  });

  it('a PodDisruptionBudget refusal is retried after BLOCKED_RETRY_MS, reported once', async () => {
    const s = setup();
    s.api.pods_.set('shop', [plain('shop', 'a')]);
    s.api.blocked = 2;
    await s.sweeper.sweep();
    expect(s.api.evictions).toEqual([]);
    await s.sweeper.drain(); // too early: not retried
    expect(s.sweeper.stats.blocked).toBe(1);
    s.advance(BLOCKED_RETRY_MS);
    await s.sweeper.drain();
    s.advance(BLOCKED_RETRY_MS);
    await s.sweeper.drain();
    expect(s.api.evictions).toEqual(['a']);
    expect(s.api.events.map((e) => e.reason)).toEqual(['MeshUnmeshedEvictionBlocked', 'MeshUnmeshedEvicted']);
    s.sweeper.stop();
  });

  it('bare pods and pods meshgate would refuse get one Event and stay; report-only mode evicts nothing', async () => {
    const s = setup({ evict: false });
    const refused = record({ ...pod({ hostNetwork: true }), metadata: { name: 'h', uid: 'uid-h' } }, { name: 'h' });
    s.api.pods_.set('shop', [plain('shop', 'bare', undefined), refused, plain('shop', 'a')]);
    await s.sweeper.sweep();
    await s.sweeper.sweep();
    expect(s.api.evictions).toEqual([]);
    expect(s.api.events.map((e) => `${e.pod} ${e.reason}`)).toEqual([
      'bare MeshUnmeshedPod',
      'h MeshUnmeshedPod',
      'a MeshUnmeshedPod',
    ]);
    expect(s.api.events[2].message).toContain('Restart it so the webhook meshes it');
  });

  it('a namespace is opted in only by the webhook configuration’s selectors: labelled later, swept then', async () => {
    const s = setup();
    s.api.namespaces_ = [{ name: 'shop', labels: {} }];
    s.api.pods_.set('shop', [plain('shop', 'a')]);
    expect(await s.sweeper.sweep()).toMatchObject({ found: 0 });
    s.api.namespaces_ = [{ name: 'shop', labels: { 'meshgate.io/inject': 'enabled' } }];
    expect(await s.sweeper.sweep()).toMatchObject({ found: 1 });
    expect(s.api.evictions).toEqual(['a']);
    s.sweeper.stop();
  });

  it('no webhook configuration: nothing is judged, the sweep says why', async () => {
    const s = setup();
    s.api.webhookConfig = async () => undefined as never;
    s.api.pods_.set('shop', [plain('shop', 'a')]);
    expect(await s.sweeper.sweep()).toMatchObject({
      found: 0,
      errors: ["meshgate's MutatingWebhookConfiguration does not exist"],
    });
    expect(s.api.evictions).toEqual([]);
  });

  it('lists only pods without meshgate’s label; the labelled ones come judged from the pod watch', async () => {
    const labelled = new LabelledUnmeshed(c);
    const s = setup({ labelled });
    // A plain pod carrying meshgate's label (copied into a pod created while the webhooks were down): unmeshed.
    const forged = (name: string) => ({
      ...pod(),
      metadata: { name, namespace: 'shop', uid: `uid-${name}`, labels: { 'meshgate.io/redirect': 'cni' } },
      status: { phase: 'Running' },
    });
    const meshed = {
      ...istioPod(),
      metadata: { name: 'meshed', namespace: 'shop', uid: 'uid-meshed', labels: { 'meshgate.io/redirect': 'init' } },
      status: { phase: 'Running' },
    };
    for (const p of [forged('copied'), meshed])
      labelled.observe({ ...p, metadata: { ...p.metadata, ownerReferences: [{ ...RS, controller: true }] } });
    s.api.pods_.set('shop', [plain('shop', 'a'), record(forged('copied')), record(meshed)]);
    const r = await s.sweeper.sweep();
    expect(s.api.selectors).toEqual(['!meshgate.io/redirect']);
    expect(r).toMatchObject({ found: 2, queued: 2 });
    expect(s.api.evictions.sort()).toEqual(['a', 'copied']);
    expect(labelled.stats).toEqual({ judged: 2, marked: 0 });
    labelled.forget('uid-copied');
    expect([...labelled.flagged()]).toEqual([]);
    s.sweeper.stop();
  });
});

describe('the sweep on OpenShift (proxy.idsFrom: openshift)', () => {
  const ids = { uid: 1000659999, gid: 1000659999 };
  /** An Istio pod as istiod injects it in that namespace: its proxy and istio-init's -u the range's last UID. */
  const injected = (): PodRecord => {
    const p = istioPod();
    p.metadata = { name: 'web', namespace: 'shop', uid: 'uid-web' };
    const init = p.spec.initContainers!.find((x) => x.name === 'istio-init')!;
    init.args = init.args!.map((a, i, args) => (args[i - 1] === '-u' ? String(ids.uid) : a));
    const proxy = p.spec.containers.find((x) => x.name === 'istio-proxy')!;
    proxy.securityContext = { ...proxy.securityContext, runAsUser: ids.uid, runAsGroup: ids.gid };
    return record(p);
  };
  const sweepWith = async (proxyIds?: typeof ids) => {
    const api = new FakeApi();
    api.namespaces_ = [
      { name: 'shop', labels: { 'meshgate.io/inject': 'enabled' }, ...(proxyIds ? { proxyIds } : {}) },
    ];
    api.pods_.set('shop', [injected()]);
    const sweeper = new UnmeshedPods(api, {
      cfg: cfg('istio', { proxy: { idsFrom: 'openshift' } }),
      evict: false,
      maxEvictionsPerMinute: 10,
      dryRun: false,
      now: () => T0,
      metrics: createRepairMetrics(),
    });
    const r = await sweeper.sweep();
    sweeper.stop();
    return { found: r.found, events: api.events.map((e) => e.message) };
  };

  it("judges a namespace's pods with its proxy IDs: the injected pod is meshed", async () => {
    expect(await sweepWith(ids)).toEqual({ found: 0, events: [] });
  });

  it('with the configured IDs the same pod would be reported, which is why they are read', async () => {
    const r = await sweepWith();
    expect(r.found).toBe(1);
    expect(r.events.join('\n')).toMatch(/impostor_container/);
  });
});
