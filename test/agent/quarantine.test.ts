/**
 * The node agent under a quarantine mark (src/node/quarantine.ts): its publish cannot undo the repair controller's
 * withdrawal — the patches it plans say label "false" and condition False (`node_quarantined`) while the mark is
 * on the Node, keep the taint the withdrawal added, and carry a resourceVersion whenever they make a node verified —
 * and once the mark is gone, the agent notices within its quarantine recheck and publishes its own verdict again.
 */
import type { Node as V1Node } from '../../src/kube/api/objects.ts';
import { describe, expect, it } from 'vitest';
import { type AgentConfig, NodeAgent } from '../../src/agent/agent.ts';
import { planPatches } from '../../src/agent/node-patch.ts';
import type { ChainVerdict } from '../../src/cni/types.ts';
import { QUARANTINE_ANNOTATION, writeMark, type QuarantineMark } from '../../src/node/quarantine.ts';
import { corpus, nodeDirs } from '../cni/helpers.ts';
import { FakePublisher, memoryLog, sleep } from './fake-publisher.ts';
import { agentConfig, perTest } from './config.ts';

const MARK: QuarantineMark = {
  since: '2026-05-01T10:00:00.000Z',
  lastFailureAt: '2026-05-01T09:59:50.000Z',
  holdUntil: '2026-05-01T10:05:00.000Z',
  hold: 'hold_off',
  level: 0,
  taint: false,
  failureCount: 3,
  failures: [{ pod: 'shop/web-1', reason: 'not_redirected', at: '2026-05-01T09:59:30.000Z' }],
};
const evidence = {
  runtime: 'containerd' as const,
  libcni: '1.1' as const,
  pluginType: 'istio-cni',
  file: '10-calico.conflist',
  plugins: ['calico', 'istio-cni'],
  candidates: [],
  checkedAt: '2026-05-01T10:01:00Z',
};
const verified: ChainVerdict = { verified: true, reason: 'verified', message: 'istio-cni is chained', evidence };
const missing: ChainVerdict = {
  verified: false,
  reason: 'mesh_plugin_missing',
  message: 'istio-cni is not in the chain',
  evidence: { ...evidence, plugins: ['calico'] },
};
const NOW = new Date('2026-05-01T10:01:00Z');

function node(
  mark?: QuarantineMark,
  taints: V1Node['spec'] extends infer S ? (S extends { taints?: infer T } ? T : never) : never = [],
): V1Node {
  return {
    metadata: {
      name: 'n1',
      resourceVersion: '42',
      labels: { 'meshgate.io/cni-verified': 'false' },
      annotations: mark ? { [QUARANTINE_ANNOTATION]: writeMark(mark) } : {},
    },
    spec: { taints },
    status: {
      conditions: [
        {
          type: 'MeshCNIVerified',
          status: 'False',
          reason: 'node_quarantined',
          message: 'withdrawn',
          lastTransitionTime: '2026-05-01T10:00:00Z',
        },
      ],
    },
  } as V1Node;
}

const condition = (p: ReturnType<typeof planPatches>) =>
  (p.status as { status: { conditions: Array<Record<string, unknown>> } }).status.conditions[0];
const labels = (p: ReturnType<typeof planPatches>) =>
  (p.node as { metadata: { labels: Record<string, string> } }).metadata.labels;

describe('planPatches under a quarantine mark', () => {
  it('a verified verdict is published withdrawn: label false, condition False node_quarantined with the agent’s own words, no precondition needed', () => {
    const p = planPatches(node(MARK), verified, false, NOW);
    expect(labels(p)['meshgate.io/cni-verified']).toBe('false');
    expect(condition(p)).toMatchObject({ status: 'False', reason: 'node_quarantined' });
    expect(String(condition(p).message)).toMatch(
      /withdrew this node's verification at 2026-05-01T10:00:00.000Z.*shop\/web-1: not_redirected.*the node agent's own verdict: istio-cni is chained/,
    );
    expect(p.guarded).toBe(false);
    expect(p.state).toMatchObject({ label: 'false', quarantine: writeMark(MARK) });
  });

  it('an unverified verdict keeps its own reason (it says more)', () => {
    expect(condition(planPatches(node(MARK), missing, false, NOW))).toMatchObject({
      status: 'False',
      reason: 'mesh_plugin_missing',
    });
  });

  it('the taint the withdrawal added stays while the mark does, and goes with it', () => {
    const taint = { key: 'meshgate.io/cni-unverified', effect: 'NoSchedule' };
    const withTaint = planPatches(node({ ...MARK, taint: true }, [taint]), verified, false, NOW);
    expect((withTaint.node as { spec?: unknown }).spec).toBeUndefined();
    const added = planPatches(node({ ...MARK, taint: true }), verified, false, NOW);
    expect(added.node).toMatchObject({ spec: { taints: [taint] }, metadata: { resourceVersion: '42' } });
    const released = planPatches(node(undefined, [taint]), verified, false, NOW);
    expect(released.node).toMatchObject({ spec: { taints: [] } });
  });

  it('without a mark, a verified verdict is published verified, guarded by the resourceVersion it was planned on', () => {
    const p = planPatches(node(), verified, false, NOW);
    expect(labels(p)['meshgate.io/cni-verified']).toBe('true');
    expect(condition(p)).toMatchObject({ status: 'True', reason: 'verified' });
    expect(p.node).toMatchObject({ metadata: { resourceVersion: '42' } });
    expect(p.guarded).toBe(true);
  });

  it('an unreadable mark still withdraws', () => {
    const n = node();
    n.metadata!.annotations![QUARANTINE_ANNOTATION] = 'not json';
    expect(condition(planPatches(n, verified, false, NOW))).toMatchObject({
      status: 'False',
      reason: 'node_quarantined',
      message: expect.stringContaining('is not JSON'),
    });
  });
});

describe('NodeAgent on a quarantined node', () => {
  /** This test's node dirs and agent, cleaned up after it. */
  const t = perTest();

  /**
   * An agent started on node n1 whose chain is verified, as the repair controller left the Node: label false,
   * condition False, the quarantine mark; `overrides` to its config.
   */
  async function startWithdrawn(prefix: string, overrides: Partial<AgentConfig>) {
    const dirs = nodeDirs(prefix);
    t.dirs = dirs;
    dirs.conf('10-calico.conflist', corpus('istio__10-calico.conflist-istioconfig'));
    for (const b of ['calico', 'portmap', 'istio-cni']) dirs.bin(b);
    const config = agentConfig(dirs, { nodeName: 'n1', debounceMs: 10, ...overrides });
    const pub = new FakePublisher({
      label: 'false',
      condition: { status: 'False', reason: 'node_quarantined', message: 'withdrawn by the repair controller' },
      evidence: '{}',
      tainted: false,
      quarantine: writeMark(MARK),
    });
    const agent = new NodeAgent(config, {
      publisher: pub,
      log: memoryLog(),
      watch: () => ({ ensure() {}, close() {} }),
    });
    t.agent = agent;
    await agent.start();
    return { pub, agent };
  }

  it('keeps the node withdrawn while the mark stands, and publishes its verdict again soon after the mark goes', async () => {
    const { pub, agent } = await startWithdrawn('meshgate-agent-q-', { quarantineRecheckMs: 50 });
    expect(agent.lastVerdict?.verified).toBe(true);
    expect(pub.state).toMatchObject({
      label: 'false',
      condition: {
        status: 'False',
        reason: 'node_quarantined',
        message: expect.stringContaining("the node agent's own verdict"),
      },
    });
    // Several rechecks (waited for, not timed: a loaded machine delays timers): each re-reads the Node, none undoes
    // the withdrawal.
    const t1 = Date.now();
    while (pub.reads <= 3 && Date.now() - t1 < 10_000) await sleep(10);
    expect(pub.reads).toBeGreaterThan(3);
    expect(pub.state?.label).toBe('false');
    pub.state = { ...pub.state!, quarantine: undefined }; // the repair controller gives the node back
    const t0 = Date.now();
    while (pub.state?.label !== 'true' && Date.now() - t0 < 5_000) await sleep(10);
    console.log(`mark removed → verified again after ${Date.now() - t0} ms (recheck every 50 ms)`);
    expect(pub.state).toMatchObject({ label: 'true', condition: { status: 'True', reason: 'verified' } });
    const reads = pub.reads;
    await sleep(200);
    expect(pub.reads).toBe(reads); // no more rechecks once the mark is gone: back to one read per resync
  });

  it('heartbeats on the condition while withdrawn (the repair controller reads it there), on the Lease once given back', async () => {
    const { pub } = await startWithdrawn('meshgate-agent-qb-', { resyncMs: 100, quarantineRecheckMs: 60_000 });
    const waitBeats = async (n: number) => {
      for (const t0 = Date.now(); pub.beatsTo.length < n && Date.now() - t0 < 10_000; ) await sleep(10);
    };
    await waitBeats(2);
    expect(pub.beatsTo.length).toBeGreaterThanOrEqual(2);
    expect(pub.beatsTo.every((b) => b.to === 'node')).toBe(true);
    pub.state = { ...pub.state!, quarantine: undefined }; // given back
    for (const t0 = Date.now(); pub.state?.label !== 'true' && Date.now() - t0 < 10_000; ) await sleep(10);
    const before = pub.beatsTo.length;
    await waitBeats(before + 2);
    expect(pub.beatsTo.slice(before).map((b) => b.to)).toEqual(['lease', 'lease']);
  });
});
