// A running `meshgate serve` (startServer: real TLS on loopback, real handlers, node facts from a state file) is sent
// real reviews and refusals over HTTPS, then scraped like Prometheus would: the text is parsed by the reference
// parser (prometheus/common/expfmt, through monitoring-check) and linted by the real promtool. The families and labels
// docs/metrics.md promises must be there, with the values the requests made.
import { request } from 'node:https';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../../src/server/start.ts';
import { nodeFactsFromState } from '../../src/facts/node-state.ts';
import { testConfig } from '../support/config.ts';
import { podReview } from '../http/helpers.ts';
import { versionInfo } from '../../src/util/version.ts';
import { lintMetrics, parseExposition, metricValue, type Family } from './tools.ts';

let server: RunningServer;

function call(
  path: string,
  body?: string,
  contentType = 'application/json',
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${server.url}${path}`,
      {
        method: body === undefined ? 'GET' : 'POST',
        ca: server.ca,
        headers: body === undefined ? {} : { 'content-type': contentType, 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const review = (uid: string, nodeName: string) => JSON.stringify(podReview(uid, { nodeName }));

describe('scraping a running meshgate webhook', () => {
  let text: string;
  let families: Map<string, Family>;

  beforeAll(async () => {
    server = await startServer({
      config: testConfig('custom'),
      port: 0,
      host: '127.0.0.1',
      tlsSans: ['127.0.0.1'],
      nodeState: nodeFactsFromState(
        {
          nodes: {
            'node-ok': { verified: true },
            'node-bad': { verified: false, reason: 'mesh_plugin_missing' },
            'node-bad-2': { verified: false, reason: 'mesh_plugin_missing' },
          },
        },
        'test',
      ),
      drainSeconds: 0,
      logger: pino({ level: 'silent' }),
    });
    const answers = [
      await call('/mutate', review('a', 'node-ok')),
      await call('/mutate', review('b', 'node-ok')),
      await call('/mutate', review('c', 'node-bad')),
      await call('/validate', review('d', 'node-ok')),
      await call('/validate', '{"kind":"NotAReview"}'),
      await call('/mutate', 'x', 'text/plain'),
    ];
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 400, 415]);
    const scraped = await call('/metrics');
    expect(scraped.status).toBe(200);
    text = scraped.body;
    families = parseExposition(text);
  });

  afterAll(async () => {
    await server?.shutdown();
  });

  it('process and runtime metrics keep their standard, unprefixed names', () => {
    for (const name of [
      'process_cpu_seconds_total',
      'process_resident_memory_bytes',
      'process_start_time_seconds',
      'nodejs_heap_size_used_bytes',
      'nodejs_eventloop_lag_seconds',
    ]) {
      expect(families.has(name), name).toBe(true);
    }
    expect(
      [...families.keys()].filter((n) => n.startsWith('meshgate_process_') || n.startsWith('meshgate_nodejs_')),
    ).toEqual([]);
  });

  it('requests by route and HTTP code, refusals included; in flight by route', () => {
    expect(families.get('meshgate_webhook_requests_total')?.type).toBe('counter');
    expect(metricValue(families, 'meshgate_webhook_requests_total', { route: 'mutate', code: '200' })).toBe(3);
    expect(metricValue(families, 'meshgate_webhook_requests_total', { route: 'validate', code: '200' })).toBe(1);
    expect(metricValue(families, 'meshgate_webhook_requests_total', { route: 'validate', code: '400' })).toBe(1);
    expect(metricValue(families, 'meshgate_webhook_requests_total', { route: 'mutate', code: '415' })).toBe(1);
    expect(families.get('meshgate_webhook_requests_in_flight')?.type).toBe('gauge');
    expect(metricValue(families, 'meshgate_webhook_requests_in_flight', { route: 'mutate' })).toBe(0);
  });

  it('the duration histogram counts every answered review, bad ones included, per route', () => {
    const h = families.get('meshgate_admission_duration_seconds');
    expect(h?.type).toBe('histogram');
    expect(metricValue(families, 'meshgate_admission_duration_seconds', { route: 'mutate' })).toBe(3);
    expect(metricValue(families, 'meshgate_admission_duration_seconds', { route: 'validate' })).toBe(2);
    expect(h!.series[0].buckets?.slice(0, 2)).toEqual(['0.00025', '0.0005']);
    expect(h!.series[0].buckets?.at(-1)).toBe('+Inf');
  });

  it('decisions by route, outcome and reason code', () => {
    expect(
      metricValue(families, 'meshgate_admission_decisions_total', {
        route: 'mutate',
        decision: 'deny',
        reason: 'node_unverified',
      }),
    ).toBe(1);
    expect(
      metricValue(families, 'meshgate_admission_decisions_total', {
        route: 'validate',
        decision: 'bad_request',
        reason: 'bad_review',
      }),
    ).toBe(1);
    const mutatePatched = families
      .get('meshgate_admission_decisions_total')!
      .series.filter((s) => s.labels.route === 'mutate' && s.labels.decision === 'patch');
    expect(mutatePatched.reduce((n, s) => n + s.value, 0)).toBe(2);
  });

  it('refusals by namespace; allowed and patched decisions without one', () => {
    const series = families.get('meshgate_admission_decisions_total')!.series;
    const denied = series.filter((s) => s.labels.decision === 'deny');
    expect(denied.map((s) => s.labels)).toContainEqual({
      route: 'mutate',
      decision: 'deny',
      reason: 'node_unverified',
      namespace: 'demo',
    });
    for (const s of denied) expect(s.labels.namespace).toBe('demo');
    const others = series.filter((s) => s.labels.decision !== 'deny');
    expect(others.length).toBeGreaterThan(1);
    for (const s of others) expect(s.labels).not.toHaveProperty('namespace');
  });

  it('the build: meshgate_build_info{version,commit,node_version} 1', () => {
    const v = versionInfo();
    expect(
      metricValue(families, 'meshgate_build_info', {
        version: v.version,
        commit: v.commit ?? 'unknown',
        node_version: process.version,
      }),
    ).toBe(1);
    expect(families.get('meshgate_build_info')!.series).toHaveLength(1);
  });

  it('nodes by verdict and reason as admission sees them', () => {
    expect(metricValue(families, 'meshgate_nodes', { verified: 'true', reason: 'verified' })).toBe(1);
    expect(metricValue(families, 'meshgate_nodes', { verified: 'false', reason: 'mesh_plugin_missing' })).toBe(2);
    expect(metricValue(families, 'meshgate_node_cache_synced')).toBe(1);
  });

  it('certificate expiry of the serving certificate and its CA, in the future', () => {
    const now = Date.now() / 1000;
    expect(
      metricValue(families, 'meshgate_certificate_expiration_timestamp_seconds', { certificate: 'serving' }),
    ).toBeGreaterThan(now);
    expect(
      metricValue(families, 'meshgate_certificate_expiration_timestamp_seconds', { certificate: 'ca' }),
    ).toBeGreaterThan(now);
    expect(metricValue(families, 'meshgate_ca_bundle_certificates')).toBe(1);
  });

  it("promtool check metrics finds nothing to fix in meshgate's own families (prom-client's own names aside)", () => {
    const problems = lintMetrics(text);
    console.log(`promtool check metrics on the webhook's /metrics:\n  ${problems.join('\n  ') || '(no problems)'}`);
    expect(problems.filter((p) => p.startsWith('meshgate_'))).toEqual([]);
    // prom-client's gauges named *_total (nodejs_active_handles_total, …) are its names, not ours: listed, not fixed.
    for (const p of problems)
      expect(p).toMatch(/^nodejs_active_\w+_total non-counter metrics should not have "_total" suffix$/);
  });
});
