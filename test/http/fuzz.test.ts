/**
 * Fuzz-style robustness: thousands of seeded, malformed or mutated reviews derived from the corpus go through
 * /mutate and /validate. Every answer must be a well-formed HTTP response (200, 400, 413 or 415; never a 500
 * from a crash), every 200 an AdmissionReview echoing the uid, every patch must apply to the object it was
 * computed for, and the app must still answer afterwards. A handler exception is allowed to surface as an
 * errored review (200, allowed:false, code 500): that is the transport's job. Reproduce a failure by its index.
 */
import { describe, it, expect } from 'vitest';
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { SUPPORTED_VERSIONS } from '../../src/admission/review.ts';
import {
  CORPUS_DIR,
  applyResponsePatch,
  buildTestApp,
  loadCorpus,
  podReview,
  post,
  type Review,
  type ReviewResponse,
} from './helpers.ts';
import { fuzzCase, mulberry32, type FuzzCase } from './mutators.ts';
import { bindingObjectReview } from './reviews.ts';

const CASES = 3000;
const SEED = 0x6d657368;

/** Corpus reviews, v1beta1 copies, a Binding, pods on known nodes, and already-injected pods (mutate's output). */
async function baseReviews(app: FastifyInstance): Promise<Review[]> {
  const corpus = loadCorpus().map((c) => c.review);
  const binding = parseYaml(readFileSync(new URL('kyverno__pod-binding-resource.yaml', CORPUS_DIR), 'utf8'));
  const out: Review[] = [...corpus, ...corpus.map((r) => ({ ...r, apiVersion: 'admission.k8s.io/v1beta1' }))];
  out.push(bindingObjectReview('binding-1', binding));
  out.push(
    podReview('on-n1', { nodeName: 'n1' }),
    podReview('on-n2', { nodeName: 'n2' }),
    podReview('hostnet', { hostNetwork: true }),
  );
  // DaemonSet pods: pinned to one node by a matchFields term in each required node-affinity term.
  const pin = (node: string) => ({ matchFields: [{ key: 'metadata.name', operator: 'In', values: [node] }] });
  for (const node of ['n1', 'n2']) {
    out.push(
      podReview(`ds-${node}`, {
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [pin(node), pin(node)] },
          },
        },
      }),
    );
  }
  for (const review of corpus) {
    const res = (await post(app, '/mutate', review)).json() as ReviewResponse;
    if (res.response.patch)
      out.push({ ...review, request: { ...review.request, object: applyResponsePatch(review.request.object, res) } });
  }
  return out;
}

/** What the app must have parsed, when it answered 200: the payload as JSON (a leading BOM is tolerated). */
function parsedPayload(c: FuzzCase): Review {
  const text = typeof c.payload === 'string' ? c.payload : c.payload.toString('utf8');
  return JSON.parse(text.replace(/^\ufeff/, '')) as Review;
}

interface Tally {
  statuses: Map<number, number>;
  errored: Map<string, number>;
  patches: number;
}

function check(res: LightMyRequestResponse, c: FuzzCase, where: string, tally: Tally): void {
  tally.statuses.set(res.statusCode, (tally.statuses.get(res.statusCode) ?? 0) + 1);
  expect([200, 400, 413, 415], `${where}: status ${res.statusCode} ${res.body.slice(0, 300)}`).toContain(
    res.statusCode,
  );
  expect(res.headers['content-type'], where).toMatch(/^application\/json/);
  const body = res.json() as Record<string, unknown>;
  if (res.statusCode !== 200) {
    expect(typeof body.error, where).toBe('string');
    return;
  }
  let sent: Review;
  try {
    sent = parsedPayload(c);
  } catch {
    throw new Error(`${where}: answered 200 to a body that is not JSON`);
  }
  const review = body as unknown as ReviewResponse;
  expect(review.kind, where).toBe('AdmissionReview');
  expect(SUPPORTED_VERSIONS, where).toContain(review.apiVersion);
  expect(review.apiVersion, where).toBe(sent.apiVersion);
  expect(review.response.uid, where).toBe(sent.request.uid);
  expect(typeof review.response.allowed, where).toBe('boolean');
  if (!review.response.allowed) {
    expect([403, 500], where).toContain(review.response.status?.code);
    expect(review.response.status?.message, where).toMatch(/\[[a-z_]+\]$/);
    expect(review.response.patch, where).toBeUndefined();
    if (review.response.status?.code === 500) {
      const msg = review.response.status.message.replace(/\d+/g, 'N').slice(0, 160);
      tally.errored.set(msg, (tally.errored.get(msg) ?? 0) + 1);
    }
  }
  if (review.response.patch !== undefined) {
    tally.patches++;
    try {
      applyResponsePatch(sent.request.object, review);
    } catch (err) {
      const e = err as Error & { name?: string; index?: number; operation?: unknown };
      throw new Error(
        `${where}: the patch does not apply: ${e.name} at op ${e.index}: ${JSON.stringify(e.operation)?.slice(0, 300)}`,
      );
    }
  }
}

describe('fuzzed reviews', () => {
  it(`${CASES} seeded mutations of corpus reviews get well-formed answers and the app survives`, {
    timeout: 60_000,
  }, async () => {
    const { app } = buildTestApp();
    const bases = await baseReviews(app);
    const rng = mulberry32(SEED);
    const tally: Tally = { statuses: new Map(), errored: new Map(), patches: 0 };
    const failures = new Map<string, string>();
    for (let i = 0; i < CASES; i++) {
      const c = fuzzCase(rng, bases[Math.floor(rng() * bases.length)]);
      for (const route of ['/mutate', '/validate']) {
        const headers = c.contentType === undefined ? {} : { 'content-type': c.contentType };
        const res = await app.inject({ method: 'POST', url: route, headers, payload: c.payload });
        try {
          check(res, c, `case ${i} [${c.label}] on ${route}`, tally);
        } catch (err) {
          // Keep going: one run shows every kind of failure, each with its first reproducing case.
          const msg = (err as Error).message;
          const kind = msg
            .replace(/^case \d+ \[[^\]]*\] on /, '')
            .replace(/\d+/g, 'N')
            .slice(0, 200);
          if (!failures.has(kind)) failures.set(kind, msg.slice(0, 600));
        }
      }
    }
    if (process.env.FUZZ_REPORT)
      console.log({
        statuses: Object.fromEntries(tally.statuses),
        patches: tally.patches,
        errored: Object.fromEntries(tally.errored),
      });
    expect([...failures.values()]).toEqual([]);

    // The fuzzer must actually reach the handlers, the decoder and the transport limits, not only bounce off.
    expect(tally.statuses.get(200) ?? 0).toBeGreaterThan(CASES * 0.5);
    expect(tally.statuses.get(400) ?? 0).toBeGreaterThan(CASES * 0.1);
    expect(tally.statuses.get(413) ?? 0).toBeGreaterThan(0);
    expect(tally.statuses.get(415) ?? 0).toBeGreaterThan(0);
    expect(tally.patches).toBeGreaterThan(CASES * 0.1);

    expect((await app.inject('/healthz')).statusCode).toBe(200);
    const after = (await post(app, '/mutate', podReview('after', { nodeName: 'n1' }))).json() as ReviewResponse;
    expect(after.response).toMatchObject({ uid: 'after', allowed: true, patchType: 'JSONPatch' });
  });

  it('the generator is deterministic for a seed', () => {
    const base = podReview('det');
    const run = (seed: number) => {
      const rng = mulberry32(seed);
      return Array.from({ length: 50 }, () => fuzzCase(rng, base)).map((c) => `${c.label}|${c.payload.length}`);
    };
    expect(run(7)).toEqual(run(7));
    expect(run(7)).not.toEqual(run(8));
  });
});
