/**
 * The hard cap on an encoded answer (MAX_ANSWER_BYTES in src/admission/review.ts): an answer over it becomes an
 * errored review (HTTP 200, allowed:false, code 500, reason answer_too_large) that still echoes uid and
 * apiVersion and says how large the answer would have been; one just under the cap is sent as it is.
 */
import { describe, it, expect } from 'vitest';
import pino from 'pino';
import { buildApp } from '../../src/server/app.ts';
import type { AdmissionHandler } from '../../src/admission/handlers.ts';
import { createMetrics } from '../../src/server/metrics.ts';
import { MAX_ANSWER_BYTES, encodeResponse, serializeResponse } from '../../src/admission/review.ts';
import { podReview, post, type ReviewResponse } from './helpers.ts';

/** `n` fresh (unfrozen) add ops, each carrying `size` bytes of annotation value. */
function ops(n: number, size: number) {
  return Array.from({ length: n }, (_, i) => ({
    op: 'add' as const,
    path: `/metadata/annotations/a${i}`,
    value: 'v'.repeat(size),
  }));
}

function app(routes: Record<string, AdmissionHandler>) {
  return buildApp({
    logger: pino({ level: 'silent' }),
    metrics: createMetrics(),
    routes,
    ready: () => ({ ready: true }),
  });
}

describe('answer size cap', () => {
  it('is 1 MiB', () => {
    expect(MAX_ANSWER_BYTES).toBe(1024 * 1024);
  });

  it('a patch whose answer would exceed the cap is an errored review naming the size and the op count', async () => {
    // 120,000 ops like the issue's amplified review: one small op per term.
    const a = app({ '/mutate': () => ({ kind: 'patch', reason: 'node_verified', ops: ops(120_000, 8) }) });
    const res = await post(a, '/mutate', podReview('amp-1', {}, 'admission.k8s.io/v1beta1'));
    expect(res.statusCode).toBe(200);
    expect(res.body.length).toBeLessThan(2048);
    const body = res.json() as ReviewResponse;
    expect(body.apiVersion).toBe('admission.k8s.io/v1beta1');
    expect(body.response).toMatchObject({ uid: 'amp-1', allowed: false, status: { code: 500 } });
    expect(body.response.patch).toBeUndefined();
    expect(body.response.status?.message).toMatch(
      /^meshgate: the answer to this review would be \d+\.\d MiB \(a JSON Patch of 120000 operations\), over meshgate's 1 MiB cap on an answer; it was not sent \[answer_too_large\]$/,
    );
    console.log(`[answer-cap] ${body.response.status?.message}`);
  });

  it('warnings that push the answer over the cap are refused the same way', async () => {
    const a = app({
      '/validate': () => ({
        kind: 'allow',
        reason: 'ok',
        warnings: Array.from({ length: 300 }, () => 'w'.repeat(4096)),
      }),
    });
    const body = (await post(a, '/validate', podReview('warn-1'))).json() as ReviewResponse;
    expect(body.response).toMatchObject({ uid: 'warn-1', allowed: false, status: { code: 500 } });
    expect(body.response.warnings).toBeUndefined();
    expect(body.response.status?.message).toMatch(
      /would be 1\.2 MiB \(its messages and warnings\).*\[answer_too_large\]$/,
    );
  });

  it('multi-byte text is measured in bytes, not characters', () => {
    // 400,000 three-byte characters: 1.2 MB of UTF-8 in fewer than MAX_ANSWER_BYTES UTF-16 code units.
    const text = serializeResponse(
      encodeResponse('admission.k8s.io/v1', 'u', { kind: 'deny', reason: 'ok', message: '€'.repeat(400_000) }),
    );
    expect(JSON.parse(text)).toMatchObject({
      response: {
        uid: 'u',
        allowed: false,
        status: { code: 500, message: expect.stringContaining('[answer_too_large]') },
      },
    });
  });

  it('an answer just under the cap is sent whole, and its patch decodes', async () => {
    // Base64 of ~780 KB of JSON: just under 1 MiB of answer.
    const patch = ops(10, 78_000);
    const a = app({ '/mutate': () => ({ kind: 'patch', reason: 'node_verified', ops: patch }) });
    const res = await post(a, '/mutate', podReview('near'));
    expect(Buffer.byteLength(res.body)).toBeGreaterThan(MAX_ANSWER_BYTES - 16 * 1024);
    expect(Buffer.byteLength(res.body)).toBeLessThanOrEqual(MAX_ANSWER_BYTES);
    const body = res.json() as ReviewResponse;
    expect(body.response).toMatchObject({ uid: 'near', allowed: true, patchType: 'JSONPatch' });
    expect(JSON.parse(Buffer.from(body.response.patch!, 'base64').toString())).toEqual(patch);
  });
});
