// The `helm test` script (charts/meshgate/files/webhook-test.mjs, mounted into the test pod by
// templates/tests/webhook-test.yaml) run by node against a real meshgate webhook on loopback: it passes when the
// webhook is ready and answers its review over TLS trusting only meshgate's CA, and fails (exit 1, FAIL: why) when
// the certificate is not meshgate's, the webhook is not ready, or nothing listens.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../../src/server/start.ts';
import { nodeFactsFromState } from '../../src/facts/node-state.ts';
import { buildApp } from '../../src/server/app.ts';
import { createMetrics } from '../../src/server/metrics.ts';
import { issueSelfSigned } from '../../src/tls/self-signed.ts';
import { testConfig } from '../support/config.ts';
import { freePort } from '../e2e/harness/index.ts';
import { chartDir } from './helm.ts';

const SCRIPT = join(chartDir, 'files', 'webhook-test.mjs');
let server: RunningServer;
let dir: string;

/** Runs the script as the test pod would (asynchronously: the webhook under test lives in this process). */
function runScript(url: string, caPem: string): Promise<{ code: number | null; out: string }> {
  const caFile = join(dir, `ca-${Math.random().toString(36).slice(2)}.crt`);
  writeFileSync(caFile, caPem);
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [SCRIPT],
      { env: { WEBHOOK_URL: url, CA_FILE: caFile, TIMEOUT_MS: '5000' }, timeout: 20_000 },
      (err, stdout, stderr) => {
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : null) : 0, out: `${stdout}${stderr}`.trim() });
      },
    );
  });
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'meshgate-helm-test-'));
  server = await startServer({
    config: testConfig('istio'),
    port: 0,
    host: '127.0.0.1',
    tlsSans: ['127.0.0.1'],
    drainSeconds: 0,
    nodeState: nodeFactsFromState({ nodes: {} }, 'test'),
    logger: pino({ level: 'silent' }),
  });
});
afterAll(async () => {
  await server?.shutdown();
  rmSync(dir, { recursive: true, force: true });
});

describe('helm test script', () => {
  it('passes against a ready webhook that answers its review', async () => {
    const r = await runScript(server.url, server.ca!);
    expect(r.code, r.out).toBe(0);
    expect(r.out).toMatch(
      /^OK: https:\/\/127\.0\.0\.1:\d+ is ready and answered review [0-9a-f-]{36}: allowed=(true|false)/,
    );
  });

  it("fails when the webhook's certificate is not signed by the CA it was given", async () => {
    const other = issueSelfSigned(['127.0.0.1'], 3600_000, Date.now());
    const r = await runScript(server.url, other.ca!);
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/^FAIL: https:\/\/127\.0\.0\.1:\d+: .*certificate/);
  });

  it('fails when the webhook is not ready', async () => {
    const pair = issueSelfSigned(['127.0.0.1'], 3600_000, Date.now());
    const app = buildApp({
      logger: pino({ level: 'silent' }),
      metrics: createMetrics(),
      routes: {},
      ready: () => ({ ready: false, why: 'node cache not synced' }),
      https: { cert: pair.cert, key: pair.key },
    });
    await app.listen({ host: '127.0.0.1', port: 0 });
    try {
      const r = await runScript(`https://127.0.0.1:${(app.server.address() as { port: number }).port}`, pair.ca!);
      expect(r.code).toBe(1);
      expect(r.out).toContain('/readyz answered 503');
      expect(r.out).toContain('node cache not synced');
    } finally {
      await app.close();
    }
  });

  it('fails when nothing listens', async () => {
    const r = await runScript(`https://127.0.0.1:${await freePort()}`, server.ca!);
    expect(r.code).toBe(1);
    expect(r.out).toContain('ECONNREFUSED');
  });
});
