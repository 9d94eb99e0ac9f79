/**
 * `meshgate check`'s judging of the node agent and the Nodes' verdicts, from hand-written Nodes shaped as the node
 * agent publishes them (label, MeshCNIVerified condition, evidence annotation) and hand-written DaemonSet facts.
 */
import { describe, expect, it } from 'vitest';
import type { AgentPod, WorkloadStatus } from '../../src/check/facts.ts';
import {
  judgeAgentCoverage,
  judgeDaemonSet,
  judgeFreshness,
  judgePluginConsistency,
  judgeVerdicts,
  summarizeNode,
} from '../../src/check/judge-nodes.ts';
import { CONDITION_TYPE, EVIDENCE_ANNOTATION, VERIFIED_LABEL } from '../../src/contract/node.ts';

const NOW = Date.parse('2026-01-10T12:00:00Z');
const MIN = 60_000;
const expect20 = { pluginType: 'istio-cni', maxVerdictAgeMs: 20 * MIN };
const MESH_PLUGINS = ['istio-cni', 'linkerd-cni', ''];

/** A Node as the agent leaves it: verified or not, checked for `plugin`, heartbeat `ageMin` minutes ago. */
type NodeLike = Parameters<typeof summarizeNode>[0];
function node(
  name: string,
  o: {
    verified?: boolean;
    plugin?: string;
    chain?: string[];
    ageMin?: number;
    reason?: string;
    published?: boolean;
    label?: string;
  } = {},
): NodeLike {
  const verified = o.verified ?? true;
  if (o.published === false) {
    const labels: Record<string, string> = o.label ? { [VERIFIED_LABEL]: o.label } : {};
    return { metadata: { name, labels }, status: { conditions: [] } };
  }
  const plugin = o.plugin ?? 'istio-cni';
  return {
    metadata: {
      name,
      labels: { [VERIFIED_LABEL]: String(verified) },
      annotations: {
        [EVIDENCE_ANNOTATION]: JSON.stringify({
          pluginType: plugin,
          plugins: o.chain ?? (verified ? ['calico', plugin] : ['calico']),
        }),
      },
    },
    status: {
      conditions: [
        {
          type: CONDITION_TYPE,
          status: verified ? 'True' : 'False',
          reason: o.reason ?? (verified ? 'verified' : 'mesh_plugin_missing'),
          message: verified ? 'verified' : 'the mesh plugin is missing',
          lastHeartbeatTime: new Date(NOW - (o.ageMin ?? 1) * MIN).toISOString(),
        },
      ],
    },
  };
}
const summaries = (...nodes: NodeLike[]) => nodes.map((n) => summarizeNode(n, expect20, NOW));

describe('node agent', () => {
  const ds = (over: Partial<WorkloadStatus>): WorkloadStatus => ({
    namespace: 'meshgate',
    name: 'meshgate-node-agent',
    desired: 3,
    ready: 3,
    available: 3,
    updated: 3,
    ...over,
  });
  const cases: Array<[string, Parameters<typeof judgeDaemonSet>[0], string, RegExp]> = [
    ['missing', undefined, 'fail', /does not exist: no node is ever verified/],
    ['unreadable', { error: '403 Forbidden' }, 'warn', /could not be read: 403/],
    ['scheduling nothing', ds({ desired: 0, ready: 0 }), 'fail', /schedules no pod/],
    ['some pods not ready', ds({ ready: 2 }), 'fail', /2 of 3 pods ready/],
    ['mid-rollout', ds({ updated: 1 }), 'warn', /1 updated \(a rollout is in progress\)/],
    ['healthy', ds({}), 'ok', /3 of 3 pods ready and up to date/],
  ];
  it.each(cases)('DaemonSet %s', (_, facts, status, message) => {
    const r = judgeDaemonSet(facts, 'meshgate/meshgate-node-agent');
    expect(r.status).toBe(status);
    expect(r.message).toMatch(message);
  });

  it('lists the Nodes without a ready agent pod', () => {
    const nodes = summaries(node('a'), node('b'), node('c'));
    const pods: AgentPod[] = [
      { name: 'agent-a', node: 'a', ready: true },
      { name: 'agent-b-old', node: 'b', ready: false, phase: 'Pending' },
      { name: 'agent-b', node: 'b', ready: true },
      { name: 'agent-x', node: 'gone', ready: true },
    ];
    const r = judgeAgentCoverage(ds({}), pods, nodes);
    expect(r).toMatchObject({ status: 'fail', message: '1 of 3 nodes have no ready node agent' });
    expect(r.items).toEqual([
      expect.objectContaining({ name: 'c', message: expect.stringContaining('runs no node agent pod') }),
    ]);
    const notReady = judgeAgentCoverage(
      ds({}),
      [{ name: 'agent-a', node: 'a', ready: false, phase: 'CrashLoopBackOff' }],
      summaries(node('a')),
    );
    expect(notReady.items![0].message).toBe('node agent pod agent-a is not ready (CrashLoopBackOff)');
    expect(judgeAgentCoverage(ds({}), pods.slice(0, 1), summaries(node('a'))).status).toBe('ok');
    expect(judgeAgentCoverage(undefined, [], nodes).status).toBe('skip');
    expect(judgeAgentCoverage(ds({}), { error: '403' }, nodes).status).toBe('warn');
  });
});

describe('Node verdicts', () => {
  it('flags heartbeats older than cni.maxVerdictAgeSeconds, verified or not', () => {
    const r = judgeFreshness(
      summaries(
        node('fresh', { ageMin: 19 }),
        node('stale', { ageMin: 21 }),
        node('stale-unverified', { verified: false, ageMin: 90 }),
        node('none', { published: false }),
      ),
      20 * MIN,
    );
    expect(r).toMatchObject({ status: 'fail', message: '2 of 3 verdicts are stale' });
    expect(r.items!.map((i) => [i.name, i.reason, i.message])).toEqual([
      ['stale', 'stale_verdict', 'last heartbeat 21 min ago (bound: cni.maxVerdictAgeSeconds = 20 min)'],
      ['stale-unverified', 'stale_verdict', 'last heartbeat 90 min ago (bound: cni.maxVerdictAgeSeconds = 20 min)'],
    ]);
    expect(judgeFreshness(summaries(node('none', { published: false })), 20 * MIN).status).toBe('skip');
  });

  it('reads each verdict as the webhook does, with its reason code', () => {
    const r = judgeVerdicts(
      summaries(
        node('ok'),
        node('missing', { verified: false }),
        node('stale', { ageMin: 30 }),
        node('other-plugin', { plugin: 'linkerd-cni' }),
        node('unpublished', { published: false }),
        node('label-only', { published: false, label: 'true' }),
      ),
    );
    expect(r).toMatchObject({ status: 'fail', message: '1 of 6 nodes verified' });
    expect(r.items!.map((i) => [i.name, i.reason])).toEqual([
      ['missing', 'mesh_plugin_missing'],
      ['stale', 'stale_verdict'],
      ['other-plugin', 'plugin_mismatch'],
      ['unpublished', 'not_published'],
      ['label-only', 'condition_missing'],
    ]);
    expect(judgeVerdicts(summaries(node('a'), node('b')))).toMatchObject({
      status: 'ok',
      message: 'all 2 nodes verified',
    });
    expect(judgeVerdicts(summaries(node('a', { verified: false }))).message).toBe(
      '0 of 1 nodes verified: no pod can use CNI mode',
    );
    expect(judgeVerdicts([]).status).toBe('warn');
  });

  it("fails nodes checked for another plugin, or whose chain runs another mesh's plugin instead of ours", () => {
    const r = judgePluginConsistency(
      summaries(
        node('ok'),
        node('agent-for-linkerd', { plugin: 'linkerd-cni' }),
        node('linkerd-chain', { verified: false, chain: ['calico', 'linkerd-cni'] }),
        node('plain-unverified', { verified: false }),
      ),
      'istio-cni',
      MESH_PLUGINS,
    );
    expect(r.status).toBe('fail');
    expect(r.items!.map((i) => [i.name, i.reason])).toEqual([
      ['agent-for-linkerd', 'plugin_mismatch'],
      ['linkerd-chain', 'other_mesh_plugin'],
    ]);
    expect(r.items![1].message).toBe(
      'its CNI chain runs linkerd-cni, not istio-cni: is meshgate configured for the right mesh?',
    );
    expect(judgePluginConsistency(summaries(node('ok')), 'istio-cni', MESH_PLUGINS).status).toBe('ok');
    expect(judgePluginConsistency(summaries(node('x', { published: false })), 'istio-cni', MESH_PLUGINS).status).toBe(
      'skip',
    );
  });

  it('keeps a few fields per Node, not the Node', () => {
    const s = summarizeNode(node('a', { ageMin: 5 }), expect20, NOW);
    expect(s).toEqual({
      name: 'a',
      fact: expect.objectContaining({ verified: true }),
      hasCondition: true,
      heartbeatAgeMs: 5 * MIN,
      checkedPlugin: 'istio-cni',
      chain: ['calico', 'istio-cni'],
    });
  });
});
