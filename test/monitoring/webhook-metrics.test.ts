// Where the webhook's request metrics are taken (src/server/app.ts): the duration histogram stops only after the
// answer is encoded; refusals that never reach the route (413, 415, 429) are counted under the route they were sent
// to; the in-flight gauge is up while a review is being decided and back to 0 after.
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildApp, BODY_LIMIT } from '../../src/server/app.ts';
import type { AdmissionHandler } from '../../src/admission/handlers.ts';
import { createMetrics, type Metrics } from '../../src/server/metrics.ts';
import { resolveLimits } from '../../src/server/limits.ts';
import type { Verdict } from '../../src/admission/review.ts';
import { podReview } from '../http/helpers.ts';

const apps: FastifyInstance[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((a) => a.close()));
});

function app(routes: Record<string, AdmissionHandler>, metrics: Metrics, limits = {}): FastifyInstance {
  const a = buildApp({
    logger: pino({ level: 'silent' }),
    metrics,
    routes,
    ready: () => ({ ready: true }),
    limits: resolveLimits(limits),
  });
  apps.push(a);
  return a;
}

const post = (a: FastifyInstance, url: string, payload: string, contentType = 'application/json') =>
  a.inject({ method: 'POST', url, payload, headers: { 'content-type': contentType } });

async function value(m: Metrics, name: string, labels: Record<string, string>): Promise<number | undefined> {
  const metric = (await m.registry.getMetricsAsJSON()).find((x) => x.name === name);
  const hit = metric?.values.find(
    (v) =>
      Object.entries(labels).every(([k, val]) => String(v.labels[k]) === val) &&
      !('le' in v.labels) &&
      (v as { metricName?: string }).metricName !== `${name}_sum`,
  );
  return hit?.value;
}

describe('webhook request metrics', () => {
  it('the duration histogram stops after the answer is encoded (it used to stop before)', async () => {
    const events: string[] = [];
    const metrics = createMetrics();
    const startTimer = metrics.latency.startTimer.bind(metrics.latency);
    metrics.latency.startTimer = (labels) => {
      const end = startTimer(labels);
      return () => {
        events.push('stop');
        return end();
      };
    };
    // encodeResponse reads a denial's message to write the status: the getter marks the moment of encoding.
    const verdict = {
      kind: 'deny',
      reason: 'node_unverified',
      get message() {
        events.push('encode');
        return 'no';
      },
    } as Verdict;
    const a = app({ '/validate': () => verdict }, metrics);
    const res = await post(a, '/validate', JSON.stringify(podReview('u1')));
    expect(res.statusCode).toBe(200);
    expect(JSON.parse(res.body).response.status.message).toBe('meshgate: no [node_unverified]');
    expect(events).toEqual(['encode', 'stop']);
  });

  it('refusals before the route ran are counted under their route: 415, 413, 429', async () => {
    const metrics = createMetrics();
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const a = app(
      {
        '/mutate': async () => {
          await held;
          return { kind: 'allow', reason: 'ok' };
        },
      },
      metrics,
      { maxInflightReviews: 1 },
    );
    expect((await post(a, '/mutate', 'x', 'text/plain')).statusCode).toBe(415);
    expect((await post(a, '/mutate', `"${'x'.repeat(BODY_LIMIT)}"`)).statusCode).toBe(413);
    const first = post(a, '/mutate', JSON.stringify(podReview('u1')));
    await new Promise((r) => setTimeout(r, 50));
    expect(await value(metrics, 'meshgate_webhook_requests_in_flight', { route: 'mutate' })).toBe(1);
    expect((await post(a, '/mutate', JSON.stringify(podReview('u2')))).statusCode).toBe(429);
    release();
    expect((await first).statusCode).toBe(200);
    expect(await value(metrics, 'meshgate_webhook_requests_in_flight', { route: 'mutate' })).toBe(0);
    for (const [code, n] of [
      ['415', 1],
      ['413', 1],
      ['429', 1],
      ['200', 1],
    ] as const) {
      expect(await value(metrics, 'meshgate_webhook_requests_total', { route: 'mutate', code }), code).toBe(n);
    }
    // Probes and unknown paths are no webhook's requests.
    await a.inject('/healthz');
    await post(a, '/nowhere', '{}');
    const routes = new Set(
      (await metrics.registry.getSingleMetric('meshgate_webhook_requests_total')!.get()).values.map(
        (v) => v.labels.route,
      ),
    );
    expect([...routes]).toEqual(['mutate']);
  });

  it('a handler that throws is still answered and timed, counted 200 with decision error', async () => {
    const metrics = createMetrics();
    const a = app(
      {
        '/mutate': () => {
          throw new Error('bug');
        },
      },
      metrics,
    );
    expect((await post(a, '/mutate', JSON.stringify(podReview('u1')))).statusCode).toBe(200);
    expect(await value(metrics, 'meshgate_webhook_requests_total', { route: 'mutate', code: '200' })).toBe(1);
    expect(
      await value(metrics, 'meshgate_admission_decisions_total', {
        route: 'mutate',
        decision: 'error',
        reason: 'internal_error',
      }),
    ).toBe(1);
    const count = (await metrics.registry.getSingleMetric('meshgate_admission_duration_seconds')!.get()).values.find(
      (v) => (v as { metricName?: string }).metricName === 'meshgate_admission_duration_seconds_count',
    );
    expect(count?.value).toBe(1);
  });
});
