/**
 * The admission transport through `app.inject()`: content type, size cap, decode errors, uid/apiVersion echo,
 * handler failures, patches that apply, denials, dry runs, readiness and metrics. Real handlers, default config.
 */
import { describe, it, expect } from 'vitest';
import { BODY_LIMIT } from '../../src/server/app.ts';
import {
  BOOM,
  applyResponsePatch,
  buildTestApp,
  decodePatch,
  loadCorpus,
  podReview,
  post,
  type Review,
  type ReviewResponse,
} from './helpers.ts';

const corpus = loadCorpus();
const REVIEW = podReview('uid-1');

describe('content type and body', () => {
  it.each([
    'text/plain',
    'application/yaml',
    'application/x-www-form-urlencoded',
    'application/merge-patch+json',
    'application/jsonx',
  ])('%s is 415 Unsupported Media Type', async (contentType) => {
    const { app } = buildTestApp();
    const res = await post(app, '/mutate', JSON.stringify(REVIEW), contentType);
    expect(res.statusCode).toBe(415);
  });

  it('a body without a content type is 415', async () => {
    const { app } = buildTestApp();
    const res = await app.inject({ method: 'POST', url: '/mutate', payload: Buffer.from(JSON.stringify(REVIEW)) });
    expect(res.statusCode).toBe(415);
  });

  it('application/json with a charset parameter is accepted', async () => {
    const { app } = buildTestApp();
    const res = await post(app, '/mutate', REVIEW, 'application/json; charset=utf-8');
    expect(res.statusCode).toBe(200);
  });

  it.each([
    ['truncated', '{"apiVersion":"admission.k8s.io/v1","kind":'],
    ['trailing garbage', '{"a":1}}'],
    ['empty', ''],
    ['single quotes', "{'a':1}"],
  ])('invalid JSON (%s) is 400', async (_name, text) => {
    const { app } = buildTestApp();
    const res = await post(app, '/mutate', text);
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
  });

  const req = REVIEW.request;
  const { uid: _uid, ...noUid } = req;
  it.each<[string, unknown]>([
    ['missing uid', { ...REVIEW, request: noUid }],
    ['empty uid', { ...REVIEW, request: { ...req, uid: '' } }],
    ['numeric uid', { ...REVIEW, request: { ...req, uid: 42 } }],
    ['wrong kind', { ...REVIEW, kind: 'AdmissionResponse' }],
    ['missing kind', { apiVersion: REVIEW.apiVersion, request: req }],
    ['wrong apiVersion', { ...REVIEW, apiVersion: 'admission.k8s.io/v2' }],
    ['core apiVersion', { ...REVIEW, apiVersion: 'v1' }],
    ['array body', [REVIEW]],
    ['null body', null],
    ['number body', 7],
    ['string body', 'AdmissionReview'],
    ['missing request', { apiVersion: REVIEW.apiVersion, kind: 'AdmissionReview' }],
    ['request is an array', { ...REVIEW, request: [req] }],
    ['missing request.kind', { ...REVIEW, request: { ...req, kind: undefined } }],
    ['missing request.resource', { ...REVIEW, request: { ...req, resource: 'pods' } }],
    ['missing request.operation', { ...REVIEW, request: { ...req, operation: undefined } }],
    ['a bare AdmissionRequest (not wrapped)', req],
  ])('not an AdmissionReview (%s) is 400 bad_review', async (_name, body) => {
    const { app } = buildTestApp();
    for (const route of ['/mutate', '/validate']) {
      const res = await post(app, route, JSON.stringify(body));
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ error: 'bad_review' });
    }
  });

  it('a body over 7 MiB is 413; one just under is decided', async () => {
    const { app } = buildTestApp();
    const sized = (bytes: number): string => {
      const base = JSON.stringify(podReview('big', { padding: '' }));
      return base.replace('"padding":""', `"padding":"${'x'.repeat(bytes - base.length)}"`);
    };
    const over = sized(BODY_LIMIT + 1);
    expect(Buffer.byteLength(over)).toBe(BODY_LIMIT + 1);
    expect((await post(app, '/mutate', over)).statusCode).toBe(413);
    const under = sized(BODY_LIMIT - 1024);
    const res = await post(app, '/mutate', under);
    expect(res.statusCode).toBe(200);
    expect((res.json() as ReviewResponse).response.uid).toBe('big');
  });
});

describe('AdmissionReview responses', () => {
  it.each(['admission.k8s.io/v1', 'admission.k8s.io/v1beta1'])(
    'echo uid and apiVersion %s on both routes',
    async (apiVersion) => {
      const { app } = buildTestApp();
      for (const { review } of corpus) {
        for (const route of ['/mutate', '/validate']) {
          const res = await post(app, route, { ...review, apiVersion });
          expect(res.statusCode).toBe(200);
          const body = res.json() as ReviewResponse;
          expect(body.apiVersion).toBe(apiVersion);
          expect(body.kind).toBe('AdmissionReview');
          expect(body.response.uid).toBe(review.request.uid);
          expect(typeof body.response.allowed).toBe('boolean');
        }
      }
    },
  );

  it('a handler that throws costs one errored review: 200, allowed:false, code 500, same uid', async () => {
    const { app } = buildTestApp();
    const res = await post(app, '/boom', podReview('uid-boom', {}, 'admission.k8s.io/v1beta1'));
    expect(res.statusCode).toBe(200);
    const body = res.json() as ReviewResponse;
    expect(body.apiVersion).toBe('admission.k8s.io/v1beta1');
    expect(body.response.uid).toBe('uid-boom');
    expect(body.response.allowed).toBe(false);
    expect(body.response.status?.code).toBe(500);
    expect(body.response.status?.message).toContain(BOOM);
    expect(body.response.status?.message).toContain('[internal_error]');
    expect(body.response.patch).toBeUndefined();
    // And the app is none the worse for it.
    expect((await post(app, '/mutate', REVIEW)).statusCode).toBe(200);
  });

  it('every corpus pod gets a patch that applies cleanly and then passes /validate, or is refused for what it is', async () => {
    const { app } = buildTestApp();
    let patched = 0;
    let refused = 0;
    for (const { name, review } of corpus) {
      const body = (await post(app, '/mutate', review)).json() as ReviewResponse;
      const object = review.request.object as {
        metadata?: { annotations?: Record<string, unknown> };
        spec: {
          nodeName?: string;
          containers?: Array<{ securityContext?: { privileged?: boolean } }>;
          initContainers?: Array<{ securityContext?: { privileged?: boolean } }>;
        };
      };
      // Not a pod the apiserver would send (annotation values are strings), or one that could flush the redirect.
      const expected = Object.values(object.metadata?.annotations ?? {}).some((v) => typeof v !== 'string')
        ? 'invalid_object'
        : [...(object.spec.containers ?? []), ...(object.spec.initContainers ?? [])].some(
              (c) => c.securityContext?.privileged === true,
            )
          ? 'redirect_tamper'
          : object.spec.nodeName !== undefined && object.spec.nodeName !== 'n1'
            ? 'node_unverified'
            : undefined;
      if (expected) {
        expect(body.response, name).toMatchObject({ allowed: false });
        expect(body.response.status?.message, name).toContain(`[${expected}]`);
        refused++;
        continue;
      }
      expect(body.response.allowed, name).toBe(true);
      if (body.response.patch === undefined) continue;
      patched++;
      const ops = decodePatch(body);
      expect(ops.length, name).toBeGreaterThan(0);
      const pod = applyResponsePatch(review.request.object, body);
      // Patching twice must not be needed: the mutated pod passes the validating webhook as is.
      const v = (
        await post(app, '/validate', { ...review, request: { ...review.request, object: pod } })
      ).json() as ReviewResponse;
      expect(v.response, name).toMatchObject({ allowed: true });
    }
    expect(refused).toBeGreaterThan(0);
    expect(patched).toBe(corpus.length - refused);
  });

  it('a patch against a pod with no metadata and no initContainers still applies', async () => {
    const { app } = buildTestApp();
    const review = podReview('bare');
    delete (review.request.object as { metadata?: unknown }).metadata;
    const body = (await post(app, '/mutate', review)).json() as ReviewResponse;
    expect(body.response.allowed).toBe(true);
    expect(decodePatch(body).length).toBeGreaterThan(0);
    expect(() => applyResponsePatch(review.request.object, body)).not.toThrow();
  });

  it('a denial is allowed:false with code 403 and the reason code in the message', async () => {
    const { app } = buildTestApp();
    const body = (await post(app, '/mutate', podReview('deny-1', { nodeName: 'n2' }))).json() as ReviewResponse;
    expect(body.response.uid).toBe('deny-1');
    expect(body.response.allowed).toBe(false);
    expect(body.response.status?.code).toBe(403);
    expect(body.response.status?.message).toMatch(/\[node_unverified\]$/);
    expect(body.response.patch).toBeUndefined();

    const pepr = corpus.find((c) => c.name.startsWith('pepr__'))!.review;
    const v = (await post(app, '/validate', pepr)).json() as ReviewResponse;
    expect(v.response.status?.code).toBe(403);
    expect(v.response.status?.message).toMatch(/\[[a-z_]+\]$/);
  });

  // Only a broken client sends these (the apiserver sends typed pods), but a decision is a value: deny, never crash.
  const terms = (t: unknown) => ({
    affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: t } } },
  });
  it.each<[string, Record<string, unknown>]>([
    ['a null container', { containers: [null] }],
    ['initContainers not a list', { initContainers: { name: 'x' } }],
    ['volumes not a list', { volumes: 'v' }],
    ['affinity not a mapping', { affinity: [] }],
    ['nodeSelectorTerms holding null', terms([null])],
    ['a null matchFields requirement', terms([{ matchFields: [null] }])],
    ['a null matchExpressions requirement', terms([{ matchExpressions: [null] }])],
  ])('a malformed pod (%s) is denied invalid_object on both routes, not errored', async (_name, spec) => {
    const { app } = buildTestApp();
    for (const route of ['/mutate', '/validate']) {
      const body = (await post(app, route, podReview('shape', spec))).json() as ReviewResponse;
      expect(body.response.status, route).toMatchObject({ code: 403 });
      expect(body.response.status?.message, route).toMatch(/\[invalid_object\]$/);
    }
  });

  it('a dryRun request gets exactly the answer a real one gets', async () => {
    const { app } = buildTestApp();
    const cases: Review[] = [
      ...corpus.map((c) => c.review),
      podReview('d', { nodeName: 'n2' }),
      podReview('d', { nodeName: 'n1' }),
    ];
    for (const review of cases) {
      for (const route of ['/mutate', '/validate']) {
        const wet = await post(app, route, { ...review, request: { ...review.request, dryRun: false } });
        const dry = await post(app, route, { ...review, request: { ...review.request, dryRun: true } });
        expect(dry.statusCode).toBe(wet.statusCode);
        expect(dry.json()).toEqual(wet.json());
      }
    }
  });
});

describe('health, readiness and metrics', () => {
  it('/healthz is 200; /readyz follows readiness and says why it is not ready', async () => {
    const { app, setReady } = buildTestApp();
    expect((await app.inject('/healthz')).statusCode).toBe(200);
    const ready = await app.inject('/readyz');
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toEqual({ status: 'ready' });
    setReady({ ready: false, why: 'node cache not synced' });
    const notReady = await app.inject('/readyz');
    expect(notReady.statusCode).toBe(503);
    expect(notReady.json()).toEqual({ status: 'not ready', why: 'node cache not synced' });
    expect((await app.inject('/healthz')).statusCode).toBe(200);
    setReady({ ready: true });
    expect((await app.inject('/readyz')).statusCode).toBe(200);
  });

  it('/metrics exposes the latency histogram and decisions by route, decision and reason (refusals: namespace)', async () => {
    const { app } = buildTestApp();
    await post(app, '/mutate', podReview('m1', { nodeName: 'n1' }));
    await post(app, '/mutate', podReview('m2', { nodeName: 'n2' }));
    await post(app, '/validate', []);
    await post(app, '/boom', REVIEW);
    const res = await app.inject('/metrics');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    const text = res.body;
    expect(text).toContain('# TYPE meshgate_admission_duration_seconds histogram');
    expect(text).toMatch(/^meshgate_admission_duration_seconds_bucket\{le="0\.00025",route="mutate"\} \d+$/m);
    expect(text).toMatch(/^meshgate_admission_duration_seconds_count\{route="mutate"\} 2$/m);
    expect(text).toContain(
      'meshgate_admission_decisions_total{route="mutate",decision="patch",reason="node_verified"} 1',
    );
    expect(text).toContain(
      'meshgate_admission_decisions_total{route="mutate",decision="deny",reason="node_unverified",namespace="demo"} 1',
    );
    expect(text).toContain(
      'meshgate_admission_decisions_total{route="validate",decision="bad_request",reason="bad_review"} 1',
    );
    expect(text).toContain(
      'meshgate_admission_decisions_total{route="boom",decision="error",reason="internal_error",namespace="demo"} 1',
    );
  });
});
