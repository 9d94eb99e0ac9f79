// When the daemons' client retries, table by table: statuses, transport failures, verbs, Retry-After, attempts.
import { describe, expect, it } from 'vitest';
import { KubeApiError, KubeTransportError } from '../../../src/kube/errors.ts';
import {
  BASE_MS,
  MAX_BACKOFF_MS,
  MAX_RETRY_AFTER_MS,
  parseRetryAfter,
  retryDelay,
  type Method,
} from '../../../src/kube/api/retry.ts';

const policy = { maxAttempts: 5 };
const half = () => 0.5;
const api = (code: number, retryAfter?: number) => new KubeApiError(code, 'R', 'm', retryAfter);
const transport = (sent: boolean, code?: string) =>
  new KubeTransportError('x', sent, code ? Object.assign(new Error(code), { code }) : undefined);

describe('retryDelay', () => {
  it.each<[string, Method, unknown, boolean]>([
    ['429 on a read', 'GET', api(429), true],
    ['429 on a write', 'POST', api(429), true],
    ['500 on a read', 'GET', api(500), true],
    ['503 on a read', 'GET', api(503), true],
    ['500 on a write without Retry-After: it may have been applied', 'PATCH', api(500), false],
    ['503 on a write with Retry-After: the apiserver says it did not act', 'PUT', api(503, 1), true],
    ['404', 'GET', api(404), false],
    ['409', 'PUT', api(409), false],
    ['410 Gone: the reflector relists instead', 'GET', api(410), false],
    ['401 (the client re-reads its token once, elsewhere)', 'GET', api(401), false],
    ['a reset on a read', 'GET', transport(true, 'ECONNRESET'), true],
    ['a reset after a write was sent', 'POST', transport(true, 'ECONNRESET'), false],
    ['a refused connection on a write (never sent)', 'DELETE', transport(false, 'ECONNREFUSED'), true],
    ['a certificate the CA did not sign', 'GET', transport(false, 'UNABLE_TO_VERIFY_LEAF_SIGNATURE'), false],
    ['a certificate for another name', 'GET', transport(false, 'ERR_TLS_CERT_ALTNAME_INVALID'), false],
    ['a self-signed certificate', 'GET', transport(false, 'DEPTH_ZERO_SELF_SIGNED_CERT'), false],
    ['an error that is neither (an answer too large)', 'GET', new Error('too large'), false],
  ])('%s: retried = %s', (_name, method, err, retried) => {
    expect(retryDelay(method, err, 1, policy, half) !== undefined).toBe(retried);
  });

  it('never retries a status the call declared an answer (an eviction a PodDisruptionBudget refuses)', () => {
    expect(retryDelay('POST', api(429), 1, { maxAttempts: 5, answers: [429] })).toBeUndefined();
    expect(retryDelay('POST', api(503, 1), 1, { maxAttempts: 5, answers: [429] })).toBe(1000);
  });

  it('obeys Retry-After, up to its cap', () => {
    expect(retryDelay('GET', api(429, 2), 1, policy, half)).toBe(2000);
    expect(retryDelay('GET', api(429, 0), 1, policy, half)).toBe(0);
    expect(retryDelay('GET', api(429, 3600), 1, policy, half)).toBe(MAX_RETRY_AFTER_MS);
  });

  it('backs off exponentially, half of each wait random, up to its cap', () => {
    const waits = [1, 2, 3, 4, 5, 6, 7].map((a) => retryDelay('GET', api(500), a, { maxAttempts: 99 }, () => 1));
    expect(waits).toEqual([1, 2, 4, 8, 16, 32, 64].map((f) => Math.min(MAX_BACKOFF_MS, BASE_MS * f)));
    expect(retryDelay('GET', api(500), 3, policy, () => 0)).toBe((BASE_MS * 4) / 2);
  });

  it('gives up after maxAttempts', () => {
    expect(retryDelay('GET', api(500), 4, policy, half)).toBeDefined();
    expect(retryDelay('GET', api(500), 5, policy, half)).toBeUndefined();
  });
});

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');
  it.each<[string | undefined, number | undefined]>([
    [undefined, undefined],
    ['', undefined],
    ['1', 1],
    [' 7 ', 7],
    ['Thu, 01 Jan 2026 00:00:05 GMT', 5],
    ['Wed, 31 Dec 2025 23:59:00 GMT', 0],
    ['soon', undefined],
  ])('%j → %j', (header, seconds) => {
    expect(parseRetryAfter(header, now)).toBe(seconds);
  });
});
