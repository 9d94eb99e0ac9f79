/**
 * The agent loop against a fake publisher and real directories: restarts write nothing new, the first verdict
 * comes from the files (never "unknown"), failures are retried, the resync alone catches changes, and the
 * Node is re-read on resync.
 */
import { ApiException } from '@kubernetes/client-node';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { NodeAgent, type AgentConfig } from '../../src/agent/agent.ts';
import { desiredState } from '../../src/agent/node-state.ts';
import { writeMark, type QuarantineMark } from '../../src/node/quarantine.ts';
import { readSnapshot } from '../../src/cni/snapshot.ts';
import { judgeSnapshot } from '../../src/agent/judge.ts';
import { corpus, nodeDirs } from '../cni/helpers.ts';
import { FakePublisher, memoryLog, sleep } from './fake-publisher.ts';
import { agentConfig, perTest } from './config.ts';

const MESHED = 'corpus:istio__10-calico.conflist-istioconfig';
const PRIMARY = 'corpus:istio__calico.conflist';

/** This test's node dirs and agent, cleaned up after it. */
const t = perTest();

/** A withdrawal by the repair controller (src/node/quarantine.ts). */
const MARK: QuarantineMark = {
  since: '2026-01-01T00:00:00.000Z',
  lastFailureAt: '2026-01-01T00:00:00.000Z',
  holdUntil: '2026-01-01T01:00:00.000Z',
  hold: 'hold_off',
  level: 0,
  taint: false,
  failureCount: 3,
  failures: [{ pod: 'shop/web-1', reason: 'not_redirected', at: '2026-01-01T00:00:00.000Z' }],
};

function setup(files: Record<string, string> = {}, overrides: Partial<AgentConfig> = {}) {
  t.dirs = nodeDirs('meshgate-agent-');
  for (const [n, c] of Object.entries(files)) t.dirs.conf(n, c);
  for (const b of ['calico', 'portmap', 'istio-cni']) t.dirs.bin(b);
  const config = agentConfig(t.dirs, overrides);
  return config;
}

const noWatch = () => ({ ensure() {}, close() {} });

describe('NodeAgent', () => {
  it('publishes the verdict computed from the files on first start', async () => {
    const config = setup({ '10-calico.conflist': MESHED });
    const pub = new FakePublisher();
    t.agent = new NodeAgent(config, { publisher: pub, log: memoryLog() });
    await t.agent.start();
    expect(pub.publishes).toHaveLength(1);
    expect(pub.last).toMatchObject({ verified: true, reason: 'verified', evidence: { file: '10-calico.conflist' } });
  });

  it('an empty conf dir is published as no_config, never as "unknown"', async () => {
    const config = setup();
    const pub = new FakePublisher();
    t.agent = new NodeAgent(config, { publisher: pub, log: memoryLog() });
    await t.agent.start();
    expect(pub.last?.reason).toBe('no_config');
  });

  it('a restart on an unchanged node publishes nothing new, only a heartbeat (the Node already says it)', async () => {
    const config = setup({ '10-calico.conflist': MESHED });
    const before = judgeSnapshot(
      await readSnapshot(config.confDir, config.binDirs),
      config,
      undefined,
      () => new Date('2020-01-01T00:00:00Z'),
    );
    const pub = new FakePublisher({ ...desiredState(before, false), uid: 'uid-1' });
    t.agent = new NodeAgent(config, { publisher: pub, log: memoryLog() });
    await t.agent.start();
    expect(pub.reads).toBe(1);
    expect(pub.publishes).toHaveLength(0);
    expect(pub.heartbeats).toHaveLength(1);
    // Not a write of the Node: the Lease, owned by the Node as read (issue 32).
    expect(pub.beatsTo).toEqual([{ to: 'lease', nodeUid: 'uid-1' }]);
    expect(t.agent.lastVerdict?.verified).toBe(true);
  });

  it("an unchanged node is re-stamped on every resync (heartbeat), so a dead agent's verdict goes stale", async () => {
    const config = setup({ '10-calico.conflist': MESHED }, { resyncMs: 150 });
    const pub = new FakePublisher();
    t.agent = new NodeAgent(config, { publisher: pub, log: memoryLog(), watch: noWatch });
    await t.agent.start();
    expect(pub.publishes).toHaveLength(1);
    const start = pub.heartbeats.length;
    await sleep(1000);
    await t.agent.stop();
    const beats = pub.heartbeats.length - start;
    console.log(`heartbeats in 1 s with a 150 ms resync: ${beats}`);
    expect(beats).toBeGreaterThanOrEqual(2);
    expect(pub.publishes).toHaveLength(1); // the verdict itself never changed
    const after = pub.heartbeats.length;
    await sleep(400);
    expect(pub.heartbeats.length).toBe(after); // a stopped agent says nothing more
  });

  it('rewriting a file with identical content publishes nothing', async () => {
    const config = setup({ '10-calico.conflist': MESHED });
    const pub = new FakePublisher();
    t.agent = new NodeAgent(config, { publisher: pub, log: memoryLog() });
    await t.agent.start();
    writeFileSync(join(config.confDir, '10-calico.conflist'), corpus('istio__10-calico.conflist-istioconfig'));
    await sleep(300);
    expect(pub.publishes).toHaveLength(1);
  });

  it('a heartbeat due when a file changes re-reads the Node first: it never re-stamps a condition it has not seen', async () => {
    const config = setup({ '10-calico.conflist': MESHED });
    let now = Date.parse('2026-01-01T00:00:00Z');
    const pub = new FakePublisher();
    t.agent = new NodeAgent(config, { publisher: pub, log: memoryLog(), now: () => new Date(now) });
    await t.agent.start();
    expect(pub.state?.label).toBe('true');
    const reads = pub.reads;
    // Behind the agent's back, the repair controller withdraws the node; then a file event comes when a heartbeat
    // is due (past 90 % of the resync period, before the resync itself).
    pub.state = { ...pub.state!, quarantine: writeMark(MARK) };
    now += config.resyncMs * 0.95;
    const published = pub.next((v) => v.verified, 4_000);
    writeFileSync(join(config.confDir, '10-calico.conflist'), corpus('istio__10-calico.conflist-istioconfig'));
    await published;
    expect(pub.reads).toBe(reads + 1);
    expect(pub.heartbeats).toHaveLength(0);
    expect(pub.state).toMatchObject({ label: 'false', condition: { status: 'False', reason: 'node_quarantined' } });
  });

  it('retries after the apiserver failed, and publishes then; the error is logged as fields', async () => {
    const config = setup({ '10-calico.conflist': PRIMARY });
    const pub = new FakePublisher();
    pub.failures = 1;
    const status = { kind: 'Status', reason: 'ServiceUnavailable', message: 'etcd leader changed', code: 503 };
    pub.failWith = () => new ApiException(503, 'Unknown API Status Code!', JSON.stringify(status), {});
    const log = memoryLog();
    t.agent = new NodeAgent(config, { publisher: pub, log });
    const published = pub.next((v) => v.reason === 'mesh_plugin_missing', 4_000);
    await t.agent.start();
    expect(pub.publishes).toHaveLength(0);
    // The Status as fields, not client-node's message (the body and headers as escaped JSON).
    expect(log.lines.find((l) => l.level === 'error')?.obj).toMatchObject({
      err: { type: 'ApiException', code: 503, reason: 'ServiceUnavailable', message: 'etcd leader changed' },
    });
    expect(t.agent.status().lastError?.message).toBe('503 ServiceUnavailable: etcd leader changed');
    await published;
    expect(pub.publishes).toHaveLength(1);
  });

  it('catches a change through the resync alone when no watch event arrives', async () => {
    const config = setup({ '10-calico.conflist': PRIMARY }, { resyncMs: 150 });
    const pub = new FakePublisher();
    t.agent = new NodeAgent(config, { publisher: pub, log: memoryLog(), watch: noWatch });
    await t.agent.start();
    expect(pub.last?.reason).toBe('mesh_plugin_missing');
    const next = pub.next((v) => v.verified, 2_000);
    t.dirs.conf('10-calico.conflist', MESHED);
    await next;
  });

  it('re-reads the Node on resync and restores marks someone removed', async () => {
    const config = setup({ '10-calico.conflist': MESHED }, { resyncMs: 150 });
    const pub = new FakePublisher();
    t.agent = new NodeAgent(config, { publisher: pub, log: memoryLog(), watch: noWatch });
    await t.agent.start();
    pub.state = { ...pub.state!, label: undefined };
    const restored = pub.next((v) => v.verified, 2_000);
    await restored;
    expect(pub.state?.label).toBe('true');
  });

  it('asks for the taint while unverified when --taint-unverified is set', async () => {
    const config = setup({ '10-calico.conflist': PRIMARY }, { taintUnverified: true });
    const pub = new FakePublisher();
    t.agent = new NodeAgent(config, { publisher: pub, log: memoryLog() });
    await t.agent.start();
    expect(pub.publishes[0]).toMatchObject({ taint: true, verdict: { verified: false } });
    expect(pub.state?.tainted).toBe(true);
  });

  it('publishes nothing after stop, even when files change', async () => {
    const config = setup({ '10-calico.conflist': MESHED });
    const pub = new FakePublisher();
    t.agent = new NodeAgent(config, { publisher: pub, log: memoryLog() });
    await t.agent.start();
    await t.agent.stop();
    rmSync(join(config.confDir, '10-calico.conflist'));
    await sleep(200);
    expect(pub.publishes).toHaveLength(1);
  });
});
