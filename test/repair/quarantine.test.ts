/**
 * The node quarantine on a fake clock against a fake API (test/repair/fake-quarantine-api.ts): N distinct failures
 * within the window withdraw a node at once; the node comes back only after its hold, a node agent verdict later
 * than the failures and a passing probe; a burst while withdrawn extends the hold; failed probes and repeated
 * withdrawals raise it; the flap bound holds; only the leader acts, every replica counts.
 */
import { describe, expect, it } from 'vitest';
import { createRepairMetrics } from '../../src/repair/metrics.ts';
import { NodeQuarantine, type QuarantineOptions } from '../../src/repair/quarantine/quarantine.ts';
import { FakeQuarantineApi } from './fake-quarantine-api.ts';

const MIN = 60_000;
const T0 = Date.parse('2026-05-01T10:00:00Z');

/**
 * Node n1 withdrawn after its 4 failures, at hold level `level`, held for `minutes` from now, the last Event of
 * reason `reason`.
 */
function expectHeld(s: ReturnType<typeof setup>, level: number, minutes: number, reason: string): void {
  expect(s.api.mark('n1')).toMatchObject({
    failureCount: 4,
    level,
    holdUntil: new Date(s.clock.get() + minutes * MIN).toISOString(),
  });
  expect(s.api.reasons().at(-1)).toBe(reason);
}

function setup(over: Partial<QuarantineOptions> = {}) {
  let now = T0;
  const clock = { get: () => now, advance: (ms: number) => (now += ms) };
  const api = new FakeQuarantineApi(clock.get);
  api.addNode('n1', T0 - 10 * MIN);
  api.addNode('n2', T0 - 10 * MIN);
  const metrics = createRepairMetrics();
  let leader = true;
  const q = new NodeQuarantine(api, {
    threshold: 3,
    windowMs: 10 * MIN,
    holdOff: { baseMs: 5 * MIN, maxMs: 60 * MIN, maxPerHour: 3 },
    taint: false,
    probeTimeoutMs: 2 * MIN,
    dryRun: false,
    isLeader: () => leader,
    now: clock.get,
    metrics,
    ...over,
  });
  // What the node watch would deliver after each write.
  const sync = () => {
    for (const name of api.nodes.keys()) q.upsertNode(api.view(name));
  };
  let n = 0;
  const fail = async (node = 'n1', reason = 'not_redirected') => {
    n++;
    await q.recordFailure({ node, uid: `u${n}`, pod: `shop/web-${n}`, reason, at: clock.get() });
    sync();
  };
  const tick = async () => {
    sync();
    await q.tick();
    sync();
  };
  return { api, q, clock, metrics, fail, tick, setLeader: (v: boolean) => (leader = v) };
}

/** Walks a withdrawn node through hold, agent verdict and a passing probe. */
async function giveBack(s: ReturnType<typeof setup>, node = 'n1') {
  const hold = Date.parse(s.api.mark(node).holdUntil) - s.clock.get();
  s.clock.advance(hold + 1000);
  s.api.agentVerifies(node);
  await s.tick(); // creates the probe
  s.clock.advance(5_000);
  s.api.probeResult(node, { state: 'passed' });
  await s.tick(); // gives it back
  s.api.agentVerifies(node);
}

describe('node quarantine', () => {
  it('the third distinct failure within the window withdraws the node at once, with the evidence and an Event', async () => {
    const s = setup();
    await s.fail();
    await s.fail();
    s.clock.advance(30_000);
    await s.fail('n2'); // another node's failure does not count for n1
    expect(s.api.calls).toEqual([]);
    await s.fail();
    expect(s.api.calls).toEqual(['withdraw n1']);
    const mark = s.api.mark('n1');
    expect(mark).toMatchObject({
      since: new Date(T0 + 30_000).toISOString(),
      level: 0,
      hold: 'hold_off',
      holdUntil: new Date(T0 + 30_000 + 5 * MIN).toISOString(),
      failureCount: 3,
    });
    expect(mark.failures.map((f: { pod: string }) => f.pod)).toEqual(['shop/web-1', 'shop/web-2', 'shop/web-4']);
    expect(s.api.view('n1')).toMatchObject({
      label: 'false',
      condition: { status: 'False', reason: 'node_quarantined' },
    });
    expect(s.api.events).toEqual([
      {
        node: 'n1',
        type: 'Warning',
        reason: 'NodeVerdictWithdrawn',
        message: expect.stringContaining(
          'shop/web-1: not_redirected, shop/web-2: not_redirected, shop/web-4: not_redirected',
        ),
      },
    ]);
    expect(await s.metrics.registry.getSingleMetricAsString('meshgate_repair_node_withdrawals_total')).toContain(
      '{hold="hold_off"} 1',
    );
  });

  it('failures spread wider than the window, or repeats of one pod, withdraw nothing', async () => {
    const s = setup();
    await s.fail();
    s.clock.advance(6 * MIN);
    await s.fail();
    s.clock.advance(6 * MIN);
    await s.fail(); // the first is 12 min old now
    await s.q.recordFailure({ node: 'n1', uid: 'u3', pod: 'shop/web-3', reason: 'not_redirected', at: s.clock.get() });
    await s.tick();
    expect(s.api.calls).toEqual([]);
  });

  it('given back only after the hold, a node agent verdict after the failures, and a passing probe', async () => {
    const s = setup();
    for (let i = 0; i < 3; i++) await s.fail();
    s.clock.advance(MIN);
    s.api.agentVerifies('n1'); // the agent re-verifies within the hold: not enough on its own
    await s.tick();
    expect(s.api.calls).toEqual(['withdraw n1']);
    s.clock.advance(5 * MIN);
    await s.tick();
    expect(s.api.calls).toEqual(['withdraw n1', 'create probe n1']);
    await s.tick();
    s.clock.advance(30_000);
    await s.tick(); // still running: wait
    expect(s.api.calls).toHaveLength(2);
    s.api.probeResult('n1', { state: 'passed' });
    await s.tick();
    expect(s.api.calls).toEqual(['withdraw n1', 'create probe n1', 'delete probe n1', 'release n1']);
    expect(s.api.mark('n1')).toBeNull();
    expect(s.api.reasons()).toEqual(['NodeVerdictWithdrawn', 'NodeProbeStarted', 'NodeVerdictRestored']);
    // The failures the withdrawal answered never count again, though still inside the window.
    s.api.agentVerifies('n1');
    await s.tick();
    expect(s.api.calls.at(-1)).toBe('release n1');
    expect(await s.metrics.registry.getSingleMetricAsString('meshgate_repair_node_restorations_total')).toContain(' 1');
  });

  it('waits for the agent: no probe while its last verdict predates the failures or is not verified', async () => {
    const s = setup();
    for (let i = 0; i < 3; i++) await s.fail();
    s.clock.advance(6 * MIN);
    await s.tick();
    expect(s.api.calls).toEqual(['withdraw n1']); // heartbeat still from before the failures
    const n = s.api.nodes.get('n1')!;
    n.condition = {
      status: 'False',
      reason: 'mesh_plugin_missing',
      message: 'the plugin is gone',
      heartbeatAt: s.clock.get(),
    };
    await s.tick();
    expect(s.api.calls).toEqual(['withdraw n1']);
    s.api.agentVerifies('n1');
    await s.tick();
    expect(s.api.calls).toEqual(['withdraw n1', 'create probe n1']);
  });

  it('a second burst within the hold keeps it withdrawn: the hold starts over, a running probe is dropped', async () => {
    const s = setup();
    for (let i = 0; i < 3; i++) await s.fail();
    s.clock.advance(5 * MIN + 1000);
    s.api.agentVerifies('n1');
    await s.tick();
    expect(s.api.calls.at(-1)).toBe('create probe n1');
    s.clock.advance(10_000);
    await s.fail(); // a pod already on the node fails again
    expect(s.api.calls.slice(-1)).toEqual(['withdraw n1']);
    expectHeld(s, 0, 5, 'NodeQuarantineExtended');
    await s.tick();
    expect(s.api.calls.at(-1)).toBe('delete probe n1');
    // Even once the hold is over, the agent must re-verify after this failure.
    s.clock.advance(5 * MIN + 1000);
    await s.tick();
    expect(s.api.calls.at(-1)).toBe('delete probe n1');
    s.api.agentVerifies('n1');
    await s.tick();
    expect(s.api.calls.at(-1)).toBe('create probe n1');
  });

  it('a failing probe raises the hold (10 min, then 20 min); an inconclusive one only waits again', async () => {
    const s = setup();
    for (let i = 0; i < 3; i++) await s.fail();
    s.clock.advance(5 * MIN + 1000);
    s.api.agentVerifies('n1');
    await s.tick();
    s.clock.advance(5_000);
    s.api.probeResult('n1', { state: 'failed', reason: 'not_redirected', detail: 'the probe reached its destination' });
    await s.tick();
    expectHeld(s, 1, 10, 'NodeProbeFailed');
    s.clock.advance(10 * MIN + 1000);
    s.api.agentVerifies('n1');
    await s.tick();
    s.api.probeResult('n1', { state: 'inconclusive', detail: 'ImagePullBackOff' });
    await s.tick();
    expectHeld(s, 1, 10, 'NodeProbeInconclusive');
  });

  it('a probe that never finishes is given up after the probe timeout', async () => {
    const s = setup();
    for (let i = 0; i < 3; i++) await s.fail();
    s.clock.advance(5 * MIN + 1000);
    s.api.agentVerifies('n1');
    await s.tick();
    s.clock.advance(2 * MIN + 1000);
    await s.tick();
    expect(s.api.reasons().at(-1)).toBe('NodeProbeInconclusive');
    expect(s.api.events.at(-1)!.message).toContain('did not finish within 120 s');
  });

  it('flapping is bounded: withdrawals within the hour double the hold, the third holds until the first is an hour old', async () => {
    const s = setup();
    const holds: Array<[number, string]> = [];
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 3; i++) await s.fail();
      const mark = s.api.mark('n1');
      holds.push([(Date.parse(mark.holdUntil) - Date.parse(mark.since)) / MIN, mark.hold]);
      if (round < 2) await giveBack(s);
      s.clock.advance(MIN);
    }
    expect(holds.slice(0, 2)).toEqual([
      [5, 'hold_off'],
      [10, 'hold_off'],
    ]);
    expect(holds[2][1]).toBe('flap_limit');
    const firstWithdrawal = T0;
    expect(Date.parse(s.api.mark('n1').holdUntil)).toBe(firstWithdrawal + 60 * MIN);
    console.log(
      `holds of three withdrawals within the hour (min): ${holds.map(([m, h]) => `${m.toFixed(1)} (${h})`).join(', ')}`,
    );
  });

  it('every replica counts; only the leader acts — a new leader withdraws at its first tick', async () => {
    const s = setup();
    s.setLeader(false);
    for (let i = 0; i < 3; i++) await s.fail();
    await s.tick();
    expect(s.api.calls).toEqual([]);
    s.setLeader(true);
    await s.tick();
    expect(s.api.calls).toEqual(['withdraw n1']);
  });

  it('with the taint: the withdrawal adds meshgate’s NoSchedule taint and says so in the mark', async () => {
    const s = setup({ taint: true });
    for (let i = 0; i < 3; i++) await s.fail();
    expect(s.api.view('n1')).toMatchObject({ tainted: true, mark: { ok: true, mark: { taint: true } } });
  });

  it('dry run: one Event, no write', async () => {
    const s = setup({ dryRun: true });
    for (let i = 0; i < 5; i++) await s.fail();
    await s.tick();
    expect(s.api.calls).toEqual([]);
    expect(s.api.events.map((e) => e.message.slice(0, 30))).toEqual(['(dry run: not withdrawn) the m']);
  });

  it('dry run on a node another replica withdrew: no probe pod, no release', async () => {
    const live = setup();
    for (let i = 0; i < 3; i++) await live.fail();
    const s = setup({ dryRun: true });
    s.api.nodes.set('n1', live.api.nodes.get('n1')!);
    s.clock.advance(Date.parse(s.api.mark('n1').holdUntil) - s.clock.get() + 1000);
    s.api.agentVerifies('n1');
    await s.tick();
    await s.tick();
    expect(s.api.calls).toEqual([]);
    expect(s.api.mark('n1')).not.toBeNull();
  });

  it('a failed write is counted and retried at the next tick', async () => {
    const s = setup();
    s.api.failures = 1;
    for (let i = 0; i < 3; i++) await s.fail();
    expect(s.api.calls).toEqual([]);
    expect(await s.metrics.registry.getSingleMetricAsString('meshgate_repair_errors_total')).toContain(
      '{action="withdraw"} 1',
    );
    await s.tick();
    expect(s.api.calls).toEqual(['withdraw n1']);
  });
});
