// The repair controller's HTTP endpoints (src/repair/http.ts), driven with fastify's inject: probes follow the
// checks they are given, /metrics serves the registry in Prometheus' text format.
import { describe, expect, it } from 'vitest';
import { buildRepairApp } from '../../src/repair/http.ts';
import { createRepairMetrics } from '../../src/repair/metrics.ts';

describe('repair controller HTTP endpoints', () => {
  it('answers the probes from their checks and serves the metrics', async () => {
    const metrics = createRepairMetrics();
    let alive = true;
    let ready = false;
    const app = buildRepairApp({
      registry: metrics.registry,
      alive: () => (alive ? { ok: true } : { ok: false, why: 'leader election loop stalled' }),
      ready: () => (ready ? { ok: true } : { ok: false, why: 'pod cache not synced' }),
    });
    expect((await app.inject('/healthz')).statusCode).toBe(200);
    const notReady = await app.inject('/readyz');
    expect([notReady.statusCode, notReady.body]).toEqual([503, 'not ok: pod cache not synced\n']);
    ready = true;
    alive = false;
    expect((await app.inject('/readyz')).statusCode).toBe(200);
    expect((await app.inject('/healthz')).body).toBe('not ok: leader election loop stalled\n');
    metrics.leader.set(1);
    metrics.deleted.inc({ reason: 'timeout' });
    const m = await app.inject('/metrics');
    expect(m.headers['content-type']).toContain('text/plain');
    expect(m.body).toContain('meshgate_repair_leader 1');
    expect(m.body).toContain('meshgate_repair_pods_deleted_total{reason="timeout"} 1');
    await app.close();
  });
});
