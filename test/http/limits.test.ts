/**
 * Transport limits (src/server/limits.ts): the defaults pinned, overrides checked, and the values the listening
 * server really carries; keep-alive reuse still works and maxRequestsPerSocket hands over cleanly
 * (Connection: close on the last answer, never a dropped request).
 */
import { describe, it, expect, afterEach } from 'vitest';
import https from 'node:https';
import type { TLSSocket } from 'node:tls';
import { DEFAULT_LIMITS, LimitsError, resolveLimits, BODY_LIMIT } from '../../src/server/limits.ts';
import { listening, type Listening } from './listening.ts';
import { podReview } from './helpers.ts';

const servers: Listening[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

describe('defaults', () => {
  it('are pinned (each is derived in limits.ts; change them there, with the reason)', () => {
    expect(DEFAULT_LIMITS).toEqual({
      tlsHandshakeTimeoutMs: 10_000,
      headersTimeoutMs: 10_000,
      requestTimeoutMs: 30_000,
      connectionTimeoutMs: 35_000,
      keepAliveTimeoutMs: 95_000,
      connectionsCheckingIntervalMs: 1_000,
      maxConnections: 1024,
      maxConnectionsPerClient: 256,
      firstRequestTimeoutMs: 10_000,
      maxRequestsPerSocket: 100_000,
      maxInflightReviews: 64,
      maxInflightBodyBytes: 14 * 1024 * 1024,
    });
    expect(Object.isFrozen(DEFAULT_LIMITS)).toBe(true);
    expect(BODY_LIMIT).toBe(7 * 1024 * 1024);
  });

  it('keep idle connections longer than the apiserver (90 s) and requests no longer than its longest timeout (30 s)', () => {
    expect(DEFAULT_LIMITS.keepAliveTimeoutMs).toBeGreaterThan(90_000);
    expect(DEFAULT_LIMITS.requestTimeoutMs).toBeLessThanOrEqual(30_000);
    expect(DEFAULT_LIMITS.headersTimeoutMs).toBeLessThanOrEqual(DEFAULT_LIMITS.requestTimeoutMs);
  });
});

describe('resolveLimits', () => {
  it('applies overrides and freezes the result', () => {
    const l = resolveLimits({ maxConnections: 10, headersTimeoutMs: 500 });
    expect(l).toMatchObject({ maxConnections: 10, headersTimeoutMs: 500, requestTimeoutMs: 30_000 });
    expect(Object.isFrozen(l)).toBe(true);
  });

  it.each<[string, Record<string, unknown>, RegExp]>([
    ['zero', { maxConnections: 0 }, /maxConnections: 0 is not a positive whole number/],
    ['negative', { requestTimeoutMs: -1 }, /requestTimeoutMs: -1 is not a positive whole number/],
    ['fraction', { maxInflightReviews: 1.5 }, /maxInflightReviews: 1.5 is not/],
    ['string', { headersTimeoutMs: '10' }, /headersTimeoutMs: "10" is not/],
    ['unknown key', { maxSockets: 3 }, /unknown transport limit "maxSockets"/],
    [
      'headers slower than the request',
      { headersTimeoutMs: 40_000 },
      /headersTimeoutMs \(40000\) exceeds requestTimeoutMs \(30000\)/,
    ],
    [
      'budget below one body',
      { maxInflightBodyBytes: 1024 },
      /maxInflightBodyBytes \(1024\) is below the 7340032-byte body cap/,
    ],
  ])('refuses %s with a message naming the limit', (_name, overrides, message) => {
    expect(() => resolveLimits(overrides as never)).toThrow(LimitsError);
    expect(() => resolveLimits(overrides as never)).toThrow(message);
  });
});

describe('the listening server', () => {
  it('carries the limits', async () => {
    const s = await listening({});
    servers.push(s);
    const server = s.app.server as https.Server & { maxRequestsPerSocket: number };
    expect({
      headersTimeout: server.headersTimeout,
      requestTimeout: server.requestTimeout,
      keepAliveTimeout: server.keepAliveTimeout,
      timeout: server.timeout,
      maxConnections: server.maxConnections,
      maxRequestsPerSocket: server.maxRequestsPerSocket,
    }).toEqual({
      headersTimeout: 10_000,
      requestTimeout: 30_000,
      keepAliveTimeout: 95_000,
      timeout: 35_000,
      // node's hard ceiling, above which the connection guard's eviction has no say (src/server/app.ts).
      maxConnections: 1024 + 64,
      maxRequestsPerSocket: 100_000,
    });
  });

  it('reuses a keep-alive connection after an idle pause, and hands over after maxRequestsPerSocket without losing a request', async () => {
    const s = await listening({ '/mutate': () => ({ kind: 'allow', reason: 'ok' }) }, { maxRequestsPerSocket: 3 });
    servers.push(s);
    const agent = new https.Agent({ keepAlive: true, maxSockets: 1, ca: s.ca });
    const body = JSON.stringify(podReview('ka'));
    const one = () =>
      new Promise<{ status: number; socket: TLSSocket; connection?: string }>((resolve, reject) => {
        const req = https.request(
          {
            host: '127.0.0.1',
            port: s.port,
            path: '/mutate',
            method: 'POST',
            agent,
            headers: { 'content-type': 'application/json' },
          },
          (res) => {
            // Taken now: a keep-alive socket is detached from the response once it goes back to the agent.
            const socket = res.socket as TLSSocket;
            res.resume();
            res.on('end', () => resolve({ status: res.statusCode!, socket, connection: res.headers.connection }));
          },
        );
        req.on('error', reject);
        req.end(body);
      });
    const seen: Array<{ status: number; socket: TLSSocket; connection?: string }> = [];
    for (let i = 0; i < 5; i++) {
      seen.push(await one());
      if (i === 0) await new Promise((r) => setTimeout(r, 1500));
    }
    agent.destroy();
    expect(seen.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    expect(seen[1].socket).toBe(seen[0].socket);
    expect(seen[2].socket).toBe(seen[0].socket);
    expect(seen[2].connection).toBe('close');
    expect(seen[3].socket).not.toBe(seen[0].socket);
    expect(seen[4].socket).toBe(seen[3].socket);
  });
});
