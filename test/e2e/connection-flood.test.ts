/**
 * Issue 33 §7 on a real apiserver: one in-cluster client holding 1,024 idle TLS connections to the webhook (re-opened
 * as fast as the server closes them, its own process, from its own address) used to take every connection slot, so
 * every new connection — the apiserver's — was reset and pods were refused (failurePolicy Fail). With the connection
 * guard (src/server/connection-guard.ts) the apiserver's reviews are still answered: pods are created through both
 * webhooks before and during the flood. Figures (creation times, what the greedy client held, the server's
 * refusals by limit) are printed, not asserted.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import https from 'node:https';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { apiError, createNamespace, restrictedPod } from './meshgate.ts';
import { shared } from './harness/shared.ts';
import { startGuardedCluster } from './harness/clusters.ts';

const NODE = fileURLToPath(new URL('../../node_modules/.bin/node', import.meta.url));
const HOLDER = fileURLToPath(new URL('./fixtures/idle-holder.ts', import.meta.url));
const GREEDY_FROM = '127.0.0.9';
const GREEDY_CONNECTIONS = 1024;
const PODS = 30;

const holders: ChildProcess[] = [];

/** The cluster this file's tests share: a verified node and meshgate; the idle holders killed first at the end. */
const s = shared(async (stopLater) => {
  const cluster = await startGuardedCluster(stopLater, { 'node-verified': true });
  await createNamespace(cluster.cp, 'flood', { 'meshgate.io/inject': 'enabled' });
  stopLater(() => {
    for (const h of holders) h.kill('SIGKILL');
  });
  return cluster;
});

/**
 * Creates `n` pods, `parallel` at a time (a burst makes the apiserver dial new connections beyond its idle pool),
 * waiting `pauseMs` between bursts; the outcome of each and how long the apiserver took.
 */
async function createPods(
  prefix: string,
  n: number,
  parallel = 1,
  pauseMs = 0,
): Promise<{ created: number; errors: string[]; ms: number[] }> {
  const errors: string[] = [];
  const ms: number[] = [];
  let created = 0;
  for (let i = 0; i < n; i += parallel) {
    await Promise.all(
      Array.from({ length: Math.min(parallel, n - i) }, async (_, j) => {
        const t0 = performance.now();
        try {
          await s.core.createNamespacedPod({
            namespace: 'flood',
            body: restrictedPod(`${prefix}-${i + j}`, { nodeName: 'node-verified' }),
          });
          created++;
        } catch (err) {
          errors.push(apiError(err));
        }
        ms.push(performance.now() - t0);
      }),
    );
    if (pauseMs) await new Promise((r) => setTimeout(r, pauseMs));
  }
  return { created, errors, ms };
}

const quantiles = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const q = (p: number) => s[Math.min(s.length - 1, Math.floor(p * s.length))].toFixed(0);
  return `median ${q(0.5)} ms, p90 ${q(0.9)} ms, max ${q(1)} ms`;
};

/** Starts greedy clients, one per address, each after `connections`; resolves when what they hold stops growing. */
async function flood(from: readonly string[], connections: number): Promise<Array<() => Record<string, number>>> {
  const dir = mkdtempSync(join(tmpdir(), 'mg-flood-'));
  writeFileSync(join(dir, 'ca.crt'), s.mg.server.ca ?? '');
  const reads = from.map((address) => {
    let last: Record<string, number> = {};
    const child = spawn(NODE, [HOLDER, String(s.mg.server.port), join(dir, 'ca.crt'), String(connections), address], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    holders.push(child);
    child.stdout!.on('data', (d: Buffer) => {
      const line = d.toString().trim().split('\n').at(-1);
      if (line) last = JSON.parse(line) as Record<string, number>;
    });
    return () => last;
  });
  const held = () => reads.reduce((n, r) => n + (r().held ?? 0), 0);
  // Settled: every client has reported, and what they hold together stopped growing (at most 60 s).
  let seen = -1;
  for (let i = 0; i < 30; i++) {
    await new Promise((r) => setTimeout(r, 2_000));
    if (reads.every((r) => r().held !== undefined) && held() <= seen) break;
    seen = held();
  }
  return reads;
}

const show = (reads: Array<() => Record<string, number>>) => reads.map((r) => JSON.stringify(r())).join(' ');

async function stopFlood(): Promise<void> {
  for (const h of holders.splice(0)) h.kill('SIGKILL');
  await new Promise((r) => setTimeout(r, 1_000));
}

describe("the apiserver's reviews are answered while clients hold every connection they can", () => {
  it('pods are created before the flood', async () => {
    const before = await createPods('before', PODS);
    console.info(
      `[connection-flood] before the flood: ${before.created}/${PODS} pods created; ${quantiles(before.ms)}`,
    );
    expect(before.errors).toEqual([]);
  });

  it.each([
    ['one client', [GREEDY_FROM]],
    [
      'five clients at once (as many connections as this machine’s two cores handshake: figures printed)',
      ['127.0.0.9', '127.0.0.10', '127.0.0.11', '127.0.0.12', '127.0.0.13'],
    ],
  ])(
    `%s holding up to ${GREEDY_CONNECTIONS} idle TLS connections each: pods are still created`,
    async (label, from) => {
      const reads = await flood(from, GREEDY_CONNECTIONS);
      console.info(`[connection-flood] ${label}, settled: ${show(reads)}`);
      // Bursts of 10 at once, spread over ~20 s: past firstRequestTimeoutMs (10 s), so the greedy connections are
      // closed and re-opened while the apiserver dials new connections of its own.
      const during = await createPods(`during-${from.length}`, PODS, 10, 8_000);
      console.info(
        `[connection-flood] ${label}: ${during.created}/${PODS} pods created (bursts of 10); ${quantiles(during.ms)}; ` +
          `the greedy clients: ${show(reads)}`,
      );
      if (during.errors.length) console.info(`[connection-flood] first error: ${during.errors[0]}`);
      console.info(`[connection-flood] server refusals by limit so far:\n${await metricsText()}`);
      await stopFlood();
      expect(during.errors).toEqual([]);
      expect(during.created).toBe(PODS);
    },
    240_000,
  );
});
/** meshgate_overload_refusals_total lines of the server's /metrics (self-signed: read through its own CA). */
function metricsText(): Promise<string> {
  return new Promise((resolve) => {
    https
      .get({ host: '127.0.0.1', port: s.mg.server.port, path: '/metrics', ca: s.mg.server.ca }, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () =>
          resolve(
            body
              .split('\n')
              .filter((l) => l.startsWith('meshgate_overload_refusals_total'))
              .join('\n') || `(status ${res.statusCode}, ${body.length} bytes, no refusal counted)`,
          ),
        );
      })
      .on('error', (e) => resolve(`metrics unavailable: ${e.message}`));
  });
}
