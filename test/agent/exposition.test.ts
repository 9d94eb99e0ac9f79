// The node agent's hand-written Prometheus registry (src/agent/exposition.ts) against the references: its text is
// parsed by Prometheus' own parser (expfmt) and linted by promtool, and reads the same as prom-client's for the same
// operations, escaping included. Process metrics: the ones the dashboard reads are there, with prom-client's names.
import { Counter, Gauge, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { createAgentMetrics } from '../../src/agent/metrics.ts';
import { TextRegistry } from '../../src/agent/exposition.ts';
import { lintMetrics, metricValue, parseExposition } from '../monitoring/tools.ts';

const verdict = (verified: boolean, reason: string) =>
  ({ verified, reason, message: 'm', evidence: {} }) as unknown as Parameters<
    ReturnType<typeof createAgentMetrics>['observer']['checked']
  >[0];

describe('the agent registry', () => {
  it('writes what prom-client writes for the same counters and gauges, awkward label values included', async () => {
    const odd = 'a "quoted" back\\slash\nnewline';
    const ours = new TextRegistry();
    const g = ours.gauge('x_gauge', 'A gauge\nwith a newline and a \\ backslash', ['l']);
    const c = ours.counter('x_total', 'A counter');
    const l = ours.counter('y_total', 'A labelled counter', ['a', 'b']);
    g.set({ l: odd }, 1.5);
    g.set({ l: 'two' }, -3);
    c.inc();
    c.inc({}, 2);
    l.inc({ a: '1', b: '2' });
    l.inc({ b: 'only-b' }, 0);
    const ref = new Registry();
    const rg = new Gauge({
      name: 'x_gauge',
      help: 'A gauge\nwith a newline and a \\ backslash',
      labelNames: ['l'],
      registers: [ref],
    });
    const rc = new Counter({ name: 'x_total', help: 'A counter', registers: [ref] });
    const rl = new Counter({ name: 'y_total', help: 'A labelled counter', labelNames: ['a', 'b'], registers: [ref] });
    rg.set({ l: odd }, 1.5);
    rg.set({ l: 'two' }, -3);
    rc.inc();
    rc.inc(2);
    rl.inc({ a: '1', b: '2' });
    rl.inc({ b: 'only-b' }, 0);
    const text = await ours.metrics();
    expect(text).toBe(await ref.metrics());
    const families = parseExposition(text);
    expect(metricValue(families, 'x_gauge', { l: odd })).toBe(1.5);
    expect(metricValue(families, 'x_total')).toBe(3);
    expect(ours.contentType).toBe(ref.contentType);
  });

  it('refuses a label it was not declared with, and a name registered twice', () => {
    const r = new TextRegistry();
    const g = r.gauge('g', 'h', ['reason']);
    expect(() => g.set({ node: 'n' }, 1)).toThrow(/g has no label node/);
    expect(() => r.counter('g', 'again')).toThrow(/registered twice/);
  });
});

describe("the agent's /metrics", () => {
  it('parses with the reference parser, passes promtool, and carries the process metrics the dashboard reads', async () => {
    const { registry, observer } = createAgentMetrics({ processMetrics: true });
    observer.checked(verdict(false, 'mesh_plugin_missing'));
    observer.published(verdict(false, 'mesh_plugin_missing'));
    observer.heartbeat();
    observer.failed('publish', new Error('x'));
    const text = await registry.metrics();
    expect(lintMetrics(text)).toEqual([]);
    const f = parseExposition(text);
    expect(metricValue(f, 'meshgate_node_agent_verdict', { reason: 'mesh_plugin_missing' })).toBe(1);
    expect(metricValue(f, 'meshgate_node_agent_verdict', { reason: 'verified' })).toBe(0);
    expect(metricValue(f, 'meshgate_node_agent_publishes_total', { verified: 'false' })).toBe(1);
    expect(metricValue(f, 'meshgate_node_agent_publish_errors_total', { operation: 'publish' })).toBe(1);
    expect(metricValue(f, 'meshgate_node_agent_heartbeats_total')).toBe(1);
    expect(metricValue(f, 'process_resident_memory_bytes')).toBeGreaterThan(10 * 1024 * 1024);
    expect(metricValue(f, 'process_cpu_seconds_total')).toBeGreaterThan(0);
    expect(f.get('process_cpu_seconds_total')?.type).toBe('counter');
    expect(f.get('nodejs_eventloop_lag_p99_seconds')?.type).toBe('gauge');
    // Whole seconds, rounded by the exposition: at most the current second, rounded up.
    expect(metricValue(f, 'process_start_time_seconds')).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000));
  });
});
