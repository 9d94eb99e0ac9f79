import { describe, expect, it } from 'vitest';
import { decideRedirect } from '../../src/policy/redirect.ts';
import { requiresNodeLabel, targetNode } from '../../src/policy/target-node.ts';
import { cfg, facts, pinnedTo, pod } from './mutate/fixtures.ts';

const V = 'v1.34.1';
const OLD = 'v1.28.9';
const oneVerified = facts({
  good: { verified: true, kubeletVersion: V },
  bad: { verified: false, kubeletVersion: V, reason: 'mesh_plugin_missing' },
});
const noneVerified = facts({ bad: { verified: false, kubeletVersion: V } });
const empty = facts({});

describe('decideRedirect: every branch', () => {
  const cases: Array<{
    name: string;
    p: ReturnType<typeof pod>;
    f: ReturnType<typeof facts>;
    c: Record<string, unknown>;
    want: Record<string, unknown>;
  }> = [
    {
      name: 'known verified node → cni, no affinity',
      p: pod({ nodeName: 'good' }),
      f: oneVerified,
      c: {},
      want: { kind: 'cni', reason: 'node_verified', affinity: false, node: 'good' },
    },
    {
      name: 'DaemonSet-pinned verified node → cni',
      p: pod(pinnedTo('good')),
      f: oneVerified,
      c: {},
      want: { kind: 'cni', reason: 'node_verified', node: 'good' },
    },
    {
      name: 'known unverified node, reject → deny',
      p: pod({ nodeName: 'bad' }),
      f: oneVerified,
      c: {},
      want: { kind: 'deny', reason: 'node_unverified', node: 'bad', nodeReason: 'mesh_plugin_missing' },
    },
    {
      name: 'known unverified node, validate → init + validator',
      p: pod({ nodeName: 'bad' }),
      f: oneVerified,
      c: { redirect: { onUnverifiedNode: 'validate' } },
      want: { kind: 'init', reason: 'node_unverified_validate', validate: true },
    },
    {
      name: 'node missing from cache counts as unverified',
      p: pod({ nodeName: 'ghost' }),
      f: oneVerified,
      c: {},
      want: { kind: 'deny', nodeReason: 'node_not_found' },
    },
    {
      name: 'DaemonSet-pinned unverified node, reject → cni + affinity: Pending until the node is verified',
      p: pod(pinnedTo('bad')),
      f: oneVerified,
      c: {},
      want: { kind: 'cni', reason: 'node_unverified_wait', node: 'bad', affinity: true },
    },
    {
      name: 'DaemonSet-pinned node missing from cache, reject → cni + affinity',
      p: pod(pinnedTo('ghost')),
      f: empty,
      c: { redirect: { mode: 'required' } },
      want: { kind: 'cni', reason: 'node_unverified_wait', node: 'ghost', affinity: true },
    },
    {
      name: 'DaemonSet-pinned unverified node, validate → init + validator',
      p: pod(pinnedTo('bad')),
      f: oneVerified,
      c: { redirect: { onUnverifiedNode: 'validate' } },
      want: { kind: 'init', reason: 'node_unverified_validate', node: 'bad', validate: true },
    },
    {
      name: 'unknown node, auto, some verified → cni + affinity',
      p: pod(),
      f: oneVerified,
      c: {},
      want: { kind: 'cni', reason: 'affinity_verified', affinity: true },
    },
    {
      name: 'unknown node, auto, none verified → init',
      p: pod(),
      f: noneVerified,
      c: {},
      want: { kind: 'init', reason: 'no_verified_node', validate: false },
    },
    {
      name: 'unknown node, auto, no nodes at all → init',
      p: pod(),
      f: empty,
      c: {},
      want: { kind: 'init', reason: 'no_verified_node' },
    },
    {
      name: 'unknown node, required → cni + affinity even with none verified',
      p: pod(),
      f: noneVerified,
      c: { redirect: { mode: 'required' } },
      want: { kind: 'cni', reason: 'mode_required', affinity: true },
    },
    {
      name: 'required still rejects a known unverified node',
      p: pod({ nodeName: 'bad' }),
      f: oneVerified,
      c: { redirect: { mode: 'required' } },
      want: { kind: 'deny' },
    },
    {
      name: 'off → init even on a verified node',
      p: pod({ nodeName: 'good' }),
      f: oneVerified,
      c: { redirect: { mode: 'off' } },
      want: { kind: 'init', reason: 'mode_off', validate: false },
    },
  ];
  it.each(cases)('$name', ({ p, f, c, want }) => {
    expect(decideRedirect(p, f, cfg('custom', c))).toMatchObject(want);
  });

  it('deny message names the node and the verdict reason', () => {
    const d = decideRedirect(pod({ nodeName: 'bad' }), oneVerified, cfg('custom'));
    expect(d.kind === 'deny' && d.message).toMatch(/node bad .*mesh_plugin_missing/);
  });
});

describe('decideRedirect at enforcement level audit (hold: false): nothing that could keep a pod from running', () => {
  const cases: Array<{ name: string; p: ReturnType<typeof pod>; c?: Record<string, unknown>; want: object }> = [
    {
      name: 'known verified node → cni, as at enforce (the swap that lets the pod pass Pod Security)',
      p: pod({ nodeName: 'good' }),
      want: { kind: 'cni', reason: 'node_verified', affinity: false },
    },
    {
      name: 'DaemonSet-pinned verified node → cni',
      p: pod(pinnedTo('good')),
      want: { kind: 'cni', reason: 'node_verified', affinity: false },
    },
    {
      name: 'DaemonSet-pinned unverified node → init, not held Pending',
      p: pod(pinnedTo('bad')),
      want: { kind: 'init', reason: 'audit_unpinned', node: 'bad', validate: false },
    },
    {
      name: 'bound to an unverified node → init, not refused',
      p: pod({ nodeName: 'bad' }),
      want: { kind: 'init', reason: 'audit_unpinned', node: 'bad', validate: false },
    },
    {
      name: 'bound to an unverified node, validate → no validator added either',
      p: pod({ nodeName: 'bad' }),
      c: { redirect: { onUnverifiedNode: 'validate' } },
      want: { kind: 'init', reason: 'audit_unpinned', validate: false },
    },
    {
      name: 'no node yet, some verified → init, not pinned',
      p: pod(),
      want: { kind: 'init', reason: 'audit_unpinned', validate: false },
    },
    {
      name: 'no node yet, required → init, not pinned',
      p: pod(),
      c: { redirect: { mode: 'required' } },
      want: { kind: 'init', reason: 'audit_unpinned' },
    },
    {
      name: 'off → init, as configured',
      p: pod({ nodeName: 'good' }),
      c: { redirect: { mode: 'off' } },
      want: { kind: 'init', reason: 'mode_off' },
    },
  ];
  it.each(cases)('$name', ({ p, c, want }) => {
    const d = decideRedirect(p, oneVerified, cfg('custom', c ?? {}), { hold: false });
    expect(d).toMatchObject(want);
    expect(d.kind === 'cni' && d.affinity).toBe(false);
  });
});

describe('native sidecars', () => {
  const mixed = facts({ new: { verified: true, kubeletVersion: V }, old: { verified: false, kubeletVersion: OLD } });
  const cases: Array<{
    name: string;
    p: ReturnType<typeof pod>;
    f: ReturnType<typeof facts>;
    c: Record<string, unknown>;
    native: boolean;
  }> = [
    { name: 'auto, node kubelet ≥ 1.29', p: pod({ nodeName: 'new' }), f: mixed, c: {}, native: true },
    {
      name: 'auto, node kubelet 1.28',
      p: pod({ nodeName: 'old' }),
      f: mixed,
      c: { redirect: { onUnverifiedNode: 'validate' } },
      native: false,
    },
    { name: 'auto, affinity to verified nodes, all verified new', p: pod(), f: mixed, c: {}, native: true },
    {
      name: 'auto, init mode needs every node new',
      p: pod(),
      f: mixed,
      c: { redirect: { mode: 'off' } },
      native: false,
    },
    { name: 'auto, no nodes known → regular container', p: pod(), f: empty, c: {}, native: false },
    { name: 'on forces native', p: pod(), f: empty, c: { injection: { nativeSidecar: 'on' } }, native: true },
    {
      name: 'off forces regular',
      p: pod({ nodeName: 'new' }),
      f: mixed,
      c: { injection: { nativeSidecar: 'off' } },
      native: false,
    },
  ];
  it.each(cases)('$name', ({ p, f, c, native }) => {
    const d = decideRedirect(p, f, cfg('custom', c));
    if (d.kind === 'deny') throw new Error(`expected a redirect, got a denial: ${d.message}`);
    expect(d.native).toBe(native);
  });
});

describe('targetNode', () => {
  it('prefers spec.nodeName', () => expect(targetNode(pod({ nodeName: 'a', ...pinnedTo('b') }))?.name).toBe('a'));
  it('reads a DaemonSet pin', () => expect(targetNode(pod(pinnedTo('b')))?.name).toBe('b'));
  it('says how the pod names its node: bound already, or pinned for the scheduler', () => {
    expect(targetNode(pod({ nodeName: 'a', ...pinnedTo('b') }))).toEqual({ name: 'a', by: 'nodeName' });
    expect(targetNode(pod(pinnedTo('b')))).toEqual({ name: 'b', by: 'affinity' });
    expect(targetNode(pod())).toBeUndefined();
  });
  it('requiresNodeLabel holds only when every term requires the label', () => {
    const p = pod(pinnedTo('a'));
    expect(requiresNodeLabel(p, 'k', 'v')).toBe(false);
    const terms = p.spec.affinity!.nodeAffinity!.requiredDuringSchedulingIgnoredDuringExecution!.nodeSelectorTerms!;
    terms[0].matchExpressions = [{ key: 'k', operator: 'In', values: ['v'] }];
    expect(requiresNodeLabel(p, 'k', 'v')).toBe(true);
    terms.push({ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['a'] }] });
    expect(requiresNodeLabel(p, 'k', 'v')).toBe(false);
    terms[1].matchExpressions = [{ key: 'k', operator: 'NotIn', values: ['v'] }];
    expect(requiresNodeLabel(p, 'k', 'v')).toBe(false);
    terms[1].matchExpressions = [{ key: 'k', operator: 'In', values: ['v', 'w'] }];
    expect(requiresNodeLabel(p, 'k', 'v')).toBe(false);
    expect(requiresNodeLabel(pod(), 'k', 'v')).toBe(false);
  });
  it('is unknown when terms pin different nodes', () => {
    const p = pod(pinnedTo('a'));
    p.spec.affinity!.nodeAffinity!.requiredDuringSchedulingIgnoredDuringExecution!.nodeSelectorTerms!.push({
      matchFields: [{ key: 'metadata.name', operator: 'In', values: ['b'] }],
    });
    expect(targetNode(p)).toBeUndefined();
  });
  it('is unknown for a term with several nodes or only label expressions', () => {
    const p = pod(pinnedTo('a'));
    p.spec.affinity!.nodeAffinity!.requiredDuringSchedulingIgnoredDuringExecution!.nodeSelectorTerms![0]
      .matchFields![0].values = ['a', 'b'];
    expect(targetNode(p)).toBeUndefined();
    expect(
      targetNode(
        pod({
          affinity: {
            nodeAffinity: {
              requiredDuringSchedulingIgnoredDuringExecution: {
                nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] }],
              },
            },
          },
        }),
      ),
    ).toBeUndefined();
  });
});
