/**
 * `meshgate check`'s judging of opted-in namespaces and their pods: the webhooks' selectors evaluated against
 * namespace labels, each running pod judged by the validating webhook's own posture check, and the command that
 * restarts each workload. Meshed pods are made by meshgate's own decision core (decide + its JSON Patch).
 */
import jsonpatch from 'fast-json-patch';
import { describe, expect, it } from 'vitest';
import type { NamespaceFacts, Owner, WebhookConfig, WebhookEntry } from '../../src/check/facts.ts';
import { judgeNamespaces, judgeSelectorsAgree, optedInNamespaces } from '../../src/check/judge-namespaces.ts';
import { PodTally } from '../../src/check/judge-pods.ts';
import type { PodRecord } from '../../src/check/facts.ts';
import { listGuardedPods } from '../../src/check/list-pods.ts';
import { selectorQuery } from '../../src/util/selector.ts';
import { NodeFactStore } from '../../src/facts/node-facts.ts';
import { decide } from '../../src/policy/mutate/decide.ts';
import type { Pod } from '../../src/contract/pod.ts';
import { testConfig } from '../support/config.ts';

const cfg = testConfig('custom');
const inject = { key: 'meshgate.io/inject', operator: 'In', values: ['enabled'] };
const notSystem = { key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: ['meshgate', 'kube-system'] };
const nsEntry: WebhookEntry = {
  name: 'ns-meshgate',
  url: 'https://x/mutate',
  namespaceSelector: { matchExpressions: [inject, notSystem] },
  objectSelector: {},
};
const podEntry: WebhookEntry = {
  name: 'pod-optin',
  url: 'https://x/mutate',
  namespaceSelector: { matchLabels: { team: 'a' }, matchExpressions: [{ ...inject, operator: 'NotIn' }, notSystem] },
  objectSelector: { matchLabels: { 'meshgate.io/inject': 'true' } },
};
const webhooks = (kind: 'mutating' | 'validating', entries: WebhookEntry[]): WebhookConfig => ({
  kind,
  name: 'meshgate',
  webhooks: entries,
});
const namespaces: NamespaceFacts[] = [
  { name: 'shop', labels: { 'meshgate.io/inject': 'enabled' } },
  { name: 'team-a', labels: { team: 'a' } },
  { name: 'plain', labels: {} },
  { name: 'meshgate', labels: { 'meshgate.io/inject': 'enabled' } },
];

describe('opted-in namespaces', () => {
  it('are the ones a mutating entry selects; a pod-label entry guards only the pods it selects', () => {
    const opted = optedInNamespaces(
      namespaces,
      webhooks('mutating', [nsEntry, podEntry]),
      webhooks('validating', [nsEntry, podEntry]),
    );
    expect(opted.map((o) => [o.namespace, o.mutating.map((e) => e.name)])).toEqual([
      ['shop', ['ns-meshgate']],
      ['team-a', ['pod-optin']],
    ]);
    const r = judgeNamespaces(opted, true);
    expect(r).toMatchObject({ status: 'ok', message: '1 namespace opted in; in 1 more, the pods labelled to opt in' });
    expect(r.items!.map((i) => [i.name, i.message])).toEqual([['shop', 'selected by ns-meshgate; level enforce']]);
    expect(judgeSelectorsAgree(opted, webhooks('mutating', [nsEntry]), webhooks('validating', [nsEntry])).status).toBe(
      'ok',
    );
  });

  it('warns when none is, and fails namespaces only one of the two configurations selects', () => {
    expect(
      judgeNamespaces(
        optedInNamespaces([{ name: 'plain', labels: {} }], webhooks('mutating', [nsEntry]), undefined),
        true,
      ).status,
    ).toBe('warn');
    expect(judgeNamespaces([], false).status).toBe('skip');
    const m = webhooks('mutating', [nsEntry, podEntry]);
    const v = webhooks('validating', [nsEntry]);
    const r = judgeSelectorsAgree(optedInNamespaces(namespaces, m, v), m, v);
    expect(r.status).toBe('fail');
    expect(r.items).toEqual([
      expect.objectContaining({
        name: 'team-a',
        message: 'injected (pod-optin (labelled pods only)) but not enforced: no validating webhook selects it',
      }),
    ]);
  });
});

describe('listing the guarded pods', () => {
  /** A lister that records each LIST (namespace and label selector) and serves pods by their labels. */
  function lister(pods: Record<string, Array<{ name: string; labels: Record<string, string> }>>) {
    const calls: Array<[string, string | undefined]> = [];
    return {
      calls,
      async pods(namespace: string, each: (p: PodRecord) => void, labelSelector?: string) {
        calls.push([namespace, labelSelector]);
        for (const p of pods[namespace] ?? []) {
          const [k, v] = (labelSelector ?? '').split('=');
          if (!labelSelector || p.labels[k] === v)
            each({ namespace, name: p.name, object: {}, labels: p.labels, deleting: false });
        }
        return undefined;
      },
    };
  }

  it('lists a whole namespace once, and only the selected pods where the entries select pods', async () => {
    const second: WebhookEntry = { ...podEntry, name: 'pod-rev', objectSelector: { matchLabels: { rev: 'canary' } } };
    const opted = optedInNamespaces(namespaces, webhooks('mutating', [nsEntry, podEntry, second]), undefined);
    const both = { name: 'both', labels: { 'meshgate.io/inject': 'true', rev: 'canary' } };
    const l = lister({ shop: [{ name: 'a', labels: {} }], 'team-a': [both, { name: 'plain', labels: {} }] });
    const seen: string[] = [];
    expect(await listGuardedPods(l, opted, (p) => seen.push(`${p.namespace}/${p.name}`))).toEqual([]);
    expect(l.calls).toEqual([
      ['shop', undefined],
      ['team-a', 'meshgate.io/inject=true'],
      ['team-a', 'rev=canary'],
    ]);
    expect(seen).toEqual(['shop/a', 'team-a/both']);
  });

  it("turns selectors into the API's query syntax, or says it cannot", () => {
    expect(
      selectorQuery({
        matchLabels: { a: 'b' },
        matchExpressions: [
          { key: 'c', operator: 'In', values: ['d', 'e'] },
          { key: 'f', operator: 'NotIn', values: ['g'] },
          { key: 'h', operator: 'Exists' },
          { key: 'i', operator: 'DoesNotExist' },
        ],
      }),
    ).toBe('a=b,c in (d,e),f notin (g),h,!i');
    expect(selectorQuery({ matchExpressions: [{ key: 'n', operator: 'Gt', values: ['1'] }] })).toBeUndefined();
  });
});

describe('pods of opted-in namespaces', () => {
  const facts = new NodeFactStore();
  facts.upsert({ name: 'node-a', verified: true, reason: 'verified', message: 'verified', kubeletVersion: 'v1.34.2' });
  facts.upsert({
    name: 'node-b',
    verified: false,
    reason: 'mesh_plugin_missing',
    message: 'the mesh plugin is missing',
    kubeletVersion: 'v1.34.2',
  });
  facts.markSynced();
  const plain = (name: string, labels: Record<string, string> = {}): Pod => ({
    metadata: { name, labels: { app: name, ...labels } },
    spec: { nodeName: 'node-a', containers: [{ name: 'app', image: 'app:1' }] },
  });
  /** The pod as meshgate's webhook admits it (CNI mode on the verified node). */
  function meshed(name: string): Pod {
    const pod = plain(name);
    const d = decide({ pod, namespace: 'shop' }, facts, cfg);
    if (d.kind !== 'patch') throw new Error(`expected a patch, got ${d.kind}`);
    return jsonpatch.applyPatch(structuredClone(pod), structuredClone(d.ops) as jsonpatch.Operation[], true, false)
      .newDocument;
  }
  const record = (
    namespace: string,
    pod: Pod,
    o: { owner?: Owner; phase?: string; deleting?: boolean } = {},
  ): PodRecord => ({
    namespace,
    name: pod.metadata!.name!,
    object: pod,
    labels: pod.metadata?.labels,
    annotations: pod.metadata?.annotations,
    phase: o.phase ?? 'Running',
    deleting: o.deleting ?? false,
    owner: o.owner,
    nodeName: pod.spec.nodeName,
  });
  const opted = optedInNamespaces(
    namespaces,
    webhooks('mutating', [nsEntry, podEntry]),
    webhooks('validating', [nsEntry, podEntry]),
  );

  it('flag unmeshed pods and group them by the workload to restart', () => {
    const tally = new PodTally(opted, facts, cfg);
    const rs = (name: string): Owner => ({ kind: 'ReplicaSet', name });
    const flagged = [
      record('shop', plain('web-1-a'), { owner: rs('web-1') }),
      record('shop', plain('web-2-a'), { owner: rs('web-2') }),
      record('shop', plain('web-2-b'), { owner: rs('web-2') }),
      record('shop', plain('db-0'), { owner: { kind: 'StatefulSet', name: 'db' } }),
      record('shop', plain('nightly-x'), { owner: { kind: 'Job', name: 'nightly' } }),
      record('shop', plain('orphan-rs-a'), { owner: rs('orphan-rs') }),
      record('shop', plain('bare')),
      record('team-a', plain('opted-by-label', { 'meshgate.io/inject': 'true' })),
    ].map((p) => tally.add(p));
    expect(flagged.every(Boolean)).toBe(true);
    const ignored = [
      record('shop', meshed('fine')),
      record('shop', plain('done'), { phase: 'Succeeded' }),
      record('shop', plain('going'), { deleting: true }),
      record('plain', plain('elsewhere')),
      record('team-a', plain('not-labelled')),
      record('meshgate', plain('meshgate-itself')),
    ].map((p) => tally.add(p));
    expect(ignored.some(Boolean)).toBe(false);
    expect(tally.replicaSets()).toEqual([
      { namespace: 'shop', name: 'web-1' },
      { namespace: 'shop', name: 'web-2' },
      { namespace: 'shop', name: 'orphan-rs' },
    ]);
    const owners = new Map<string, Owner | undefined>([
      ['shop/web-1', { kind: 'Deployment', name: 'web' }],
      ['shop/web-2', { kind: 'Deployment', name: 'web' }],
      ['shop/orphan-rs', undefined],
    ]);
    const [redirected, would, admitted, held] = tally.results(owners, true);
    expect([would.status, held.status]).toEqual(['ok', 'ok']);
    expect(redirected).toMatchObject({
      code: 'pods_redirected',
      status: 'fail',
      message: '6 workloads run pods without a redirect meshgate accepts (9 pods judged)',
    });
    expect(redirected.items!.map((i) => [i.name, i.reason, i.command])).toEqual([
      ['shop/deployment/web', 'proxy_missing', 'kubectl -n shop rollout restart deployment/web'],
      ['shop/statefulset/db', 'proxy_missing', 'kubectl -n shop rollout restart statefulset/db'],
      ['shop/job/nightly', 'proxy_missing', 'kubectl -n shop delete pod nightly-x'],
      ['shop/replicaset/orphan-rs', 'proxy_missing', 'kubectl -n shop delete pod orphan-rs-a'],
      ['shop/pod/bare', 'proxy_missing', 'kubectl -n shop delete pod bare'],
      ['team-a/pod/opted-by-label', 'proxy_missing', 'kubectl -n team-a delete pod opted-by-label'],
    ]);
    expect(redirected.items![0].message).toMatch(
      /^3 pods \(web-1-a, web-2-a, web-2-b\): the pod is opted in but has no .* proxy/,
    );
    expect(redirected.items![4].message).toMatch(/a bare pod: nothing recreates it/);
    expect(admitted).toMatchObject({ code: 'pods_admitted', status: 'ok' });
  });

  it("warns about meshed pods meshgate's mutating webhook never saw, and fails CNI-mode pods on a node no longer verified", () => {
    const tally = new PodTally(opted, facts, cfg);
    const unseen = meshed('unseen');
    delete unseen.metadata!.annotations!['meshgate.io/status'];
    const moved = meshed('moved');
    moved.spec.nodeName = 'node-b';
    tally.add(record('shop', unseen, { owner: { kind: 'DaemonSet', name: 'logs' } }));
    tally.add(record('shop', moved));
    const [redirected, , admitted] = tally.results(new Map(), true);
    expect(redirected.items).toEqual([
      expect.objectContaining({
        name: 'shop/pod/moved',
        reason: 'node_unverified',
        message: expect.stringContaining('node node-b has no verified CNI chain (mesh_plugin_missing'),
      }),
    ]);
    expect(admitted).toMatchObject({
      status: 'warn',
      message: "1 workload runs pods meshgate's mutating webhook never saw",
    });
    expect(admitted.items).toEqual([
      expect.objectContaining({
        name: 'shop/daemonset/logs',
        reason: 'status_missing',
        command: 'kubectl -n shop rollout restart daemonset/logs',
      }),
    ]);
  });

  it('skips both checks when no namespace is opted in', () => {
    expect(new PodTally([], facts, cfg).results(new Map(), false).map((r) => [r.code, r.status])).toEqual([
      ['pods_redirected', 'skip'],
      ['pods_would_be_refused', 'skip'],
      ['pods_admitted', 'skip'],
      ['pods_held', 'skip'],
    ]);
  });
});
