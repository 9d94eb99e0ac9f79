// The node agent's /healthz, /readyz and /metrics (src/agent/http.ts, health.ts, metrics.ts) on a real agent loop:
// real CNI dirs, a hand-written publisher that can fail like an unreachable apiserver; the routing called directly,
// and once over a real socket.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { NodeAgent, type AgentDeps } from '../../src/agent/agent.ts';
import { answer, serveAgent } from '../../src/agent/http.ts';
import { liveness, readiness } from '../../src/agent/health.ts';
import { createAgentMetrics } from '../../src/agent/metrics.ts';
import { corpus, nodeDirs } from '../cni/helpers.ts';
import { FakePublisher, memoryLog, sleep } from './fake-publisher.ts';
import { agentConfig, perTest } from './config.ts';

const MESHED = corpus('istio__10-calico.conflist-istioconfig');
const PRIMARY = corpus('istio__calico.conflist');
const noWatch = () => ({ ensure() {}, close() {} });

/** This test's node dirs and agent, cleaned up after it. */
const t = perTest();

function setup(conflist: string, resyncMs = 300_000, deps: Partial<AgentDeps> = {}) {
  t.dirs = nodeDirs('meshgate-agent-http-');
  t.dirs.conf('10-calico.conflist', conflist);
  for (const b of ['calico', 'portmap', 'istio-cni']) t.dirs.bin(b);
  const config = agentConfig(t.dirs, { resyncMs });
  const pub = new FakePublisher();
  const metrics = createAgentMetrics();
  t.agent = new NodeAgent(config, {
    publisher: pub,
    log: memoryLog(),
    observer: metrics.observer,
    watch: noWatch,
    ...deps,
  });
  const a = t.agent;
  const endpoints = {
    registry: metrics.registry,
    alive: () => liveness(a.status(), Date.now(), Date.now()),
    ready: () => readiness(a.status(), Date.now()),
  };
  const app = { inject: (path: string) => answer(endpoints, 'GET', path) };
  const scrape = async () => (await app.inject('/metrics')).body;
  return { config, pub, app, endpoints, scrape, agent: a };
}

/** The value of one sample in the text format, or undefined when the series is absent. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('node agent endpoints', () => {
  it('not ready before the first check, ready once the Node carries the verdict; the verdict gauge names its reason', async () => {
    const { app, scrape, agent: a } = setup(MESHED);
    const before = await app.inject('/readyz');
    expect([before.status, before.body]).toEqual([503, 'not ok: the first check has not finished\n']);
    expect((await app.inject('/healthz')).status).toBe(200);
    const t0 = Date.now() / 1000;
    await a.start();
    expect((await app.inject('/readyz')).status).toBe(200);
    const text = await scrape();
    expect(sample(text, 'meshgate_node_agent_verdict{reason="verified"}')).toBe(1);
    expect(sample(text, 'meshgate_node_agent_verdict{reason="mesh_plugin_missing"}')).toBe(0);
    expect(sample(text, 'meshgate_node_agent_publishes_total{verified="true"}')).toBe(1);
    expect(sample(text, 'meshgate_node_agent_publish_errors_total{operation="publish"}')).toBe(0);
    expect(sample(text, 'meshgate_node_agent_last_check_timestamp_seconds')).toBeGreaterThanOrEqual(Math.floor(t0));
    expect(sample(text, 'meshgate_node_agent_last_write_timestamp_seconds')).toBeGreaterThanOrEqual(Math.floor(t0));
  });

  it('a change of the chain moves the verdict gauge to the new reason', async () => {
    const { scrape, pub, config, agent: a } = setup(MESHED);
    await a.start();
    const unverified = pub.next((v) => v.reason === 'mesh_plugin_missing');
    writeFileSync(join(config.confDir, '10-calico.conflist'), PRIMARY);
    a.trigger('test');
    await unverified;
    // The fake publisher resolves its waiters inside publish(); the agent counts the publish once publish() returned.
    await new Promise((r) => setImmediate(r));
    const text = await scrape();
    expect(sample(text, 'meshgate_node_agent_verdict{reason="verified"}')).toBe(0);
    expect(sample(text, 'meshgate_node_agent_verdict{reason="mesh_plugin_missing"}')).toBe(1);
    expect(sample(text, 'meshgate_node_agent_publishes_total{verified="false"}')).toBe(1);
  });

  it('an unreachable apiserver: publish errors counted by operation, not ready, still alive; ready again after the retry', async () => {
    const { app, scrape, pub, agent: a } = setup(MESHED);
    pub.failures = 1;
    const published = pub.next((v) => v.verified, 5_000);
    await a.start();
    const notReady = await app.inject('/readyz');
    expect([notReady.status, notReady.body]).toEqual([
      503,
      'not ok: the last check failed at read_node: apiserver unavailable\n',
    ]);
    expect((await app.inject('/healthz')).status).toBe(200);
    expect(sample(await scrape(), 'meshgate_node_agent_publish_errors_total{operation="read_node"}')).toBe(1);
    // The check itself ran: the verdict is known even though the Node was not told.
    expect(sample(await scrape(), 'meshgate_node_agent_verdict{reason="verified"}')).toBe(1);
    await published;
    await sleep(20);
    expect((await app.inject('/readyz')).status).toBe(200);
  });

  it('counts heartbeats on an unchanged node', async () => {
    const { scrape, pub, agent: a } = setup(MESHED, 100);
    await a.start();
    await sleep(600);
    const text = await scrape();
    expect(sample(text, 'meshgate_node_agent_heartbeats_total')).toBe(pub.heartbeats.length);
    expect(pub.heartbeats.length).toBeGreaterThanOrEqual(2);
    expect(sample(text, 'meshgate_node_agent_publishes_total{verified="true"}')).toBe(1);
  });

  it('a CNI dir read that throws counts as a check error, not a publish error', async () => {
    const readSnapshot = async () => {
      throw new Error('EIO: i/o error, scandir');
    };
    const { app, scrape, pub, agent: a } = setup(MESHED, 300_000, { readSnapshot });
    await a.start();
    const text = await scrape();
    expect(sample(text, 'meshgate_node_agent_check_errors_total')).toBe(1);
    expect(sample(text, 'meshgate_node_agent_publish_errors_total{operation="read_node"}')).toBe(0);
    expect((await app.inject('/readyz')).body).toBe(
      'not ok: the last check failed at read_files: EIO: i/o error, scandir\n',
    );
    expect(pub.reads).toBe(0);
  });
});

describe('node agent HTTP server', () => {
  it('answers over a real socket: probes, metrics, 404 elsewhere, 405 for other methods', async () => {
    const { endpoints, agent: a } = setup(MESHED);
    await a.start();
    const server = await serveAgent(endpoints, { host: '127.0.0.1', port: 0 });
    try {
      const at = (path: string, method = 'GET') =>
        fetch(`http://127.0.0.1:${server.port}${path}`, { method }).then(async (r) => [r.status, await r.text()]);
      expect(await at('/healthz')).toEqual([200, 'ok\n']);
      expect(await at('/readyz?verbose')).toEqual([200, 'ok\n']);
      const [status, text] = await at('/metrics');
      expect(status).toBe(200);
      expect(sample(String(text), 'meshgate_node_agent_verdict{reason="verified"}')).toBe(1);
      expect((await at('/nope'))[0]).toBe(404);
      expect((await at('/metrics', 'POST'))[0]).toBe(405);
    } finally {
      await server.close();
    }
  });

  it('refuses to start on a port already taken', async () => {
    const { endpoints } = setup(MESHED);
    const first = await serveAgent(endpoints, { host: '127.0.0.1', port: 0 });
    try {
      await expect(serveAgent(endpoints, { host: '127.0.0.1', port: first.port })).rejects.toThrow(/EADDRINUSE/);
    } finally {
      await first.close();
    }
  });
});
