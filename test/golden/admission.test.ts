/**
 * Golden tests over the real AdmissionReviews in shared/corpus/admission, through the HTTP app (transport and
 * policy together): wrapped reviews as they are, bare AdmissionRequests wrapped, a Binding object wrapped as a
 * pods/binding CREATE, anything else sent as is. The golden holds the status and the response with its patch
 * decoded; every patch must apply cleanly to the request's object. Regenerate with UPDATE_GOLDEN=1.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import jsonpatch from 'fast-json-patch';
import pino from 'pino';
import { buildApp } from '../../src/server/app.ts';
import { createMetrics } from '../../src/server/metrics.ts';
import { admissionRoutes } from '../../src/admission/handlers.ts';
import { testConfig } from '../support/config.ts';
import { nodeFactsFromState } from '../../src/facts/node-state.ts';
import { expectGolden, expectOnly } from './golden.ts';
import { bindingObjectReview } from '../http/reviews.ts';

const corpus = new URL('../../../shared/corpus/admission/', import.meta.url);
/** Reviews captured from the real apiserver by test/e2e/webhook.test.ts (CAPTURE=1). */
const captured = new URL('../e2e/fixtures/', import.meta.url);
const files = [
  ...readdirSync(corpus)
    .filter((f) => !f.endsWith('.tsv'))
    .sort()
    .map((f) => ({ name: f, url: new URL(f, corpus) })),
  ...readdirSync(captured)
    .filter((f) => f.endsWith('.review.json'))
    .sort()
    .map((f) => ({ name: `captured__${f}`, url: new URL(f, captured) })),
];

const nodes = nodeFactsFromState(
  {
    nodes: {
      'node-a': { verified: true, kubeletVersion: 'v1.34.1' },
      'my-test-node': { verified: false, reason: 'mesh_plugin_missing' },
    },
  },
  'golden',
);
const podNeeds = {
  get: (ns: string, name: string) =>
    `${ns}/${name}` === 'default/pod-to-get-aws-zone-id' ? ('cni' as const) : undefined,
  fetch: async () => 'unmeshed' as const,
};
const handlers = admissionRoutes({ config: testConfig('custom'), nodes, podNeeds });
const app = buildApp({
  logger: pino({ level: 'silent' }),
  metrics: createMetrics(),
  routes: { '/mutate': handlers['/mutate'], '/validate': handlers['/validate'] },
  ready: () => ({ ready: true }),
});
afterAll(() => app.close());

function asReview(raw: Record<string, unknown>): unknown {
  if (raw.kind === 'AdmissionReview') return raw;
  if (raw.kind === 'Binding') {
    return bindingObjectReview('binding-1', raw as { metadata: { name: string; namespace: string } });
  }
  if (typeof raw.uid === 'string' && raw.operation)
    return { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: raw };
  return raw;
}

const goldenDir = new URL('./testdata/admission/', import.meta.url);
const goldenOf = (name: string) => new URL(`${name}.golden.json`, goldenDir);

describe('golden: AdmissionReviews from shared/corpus/admission', () => {
  it('finds the corpus', () => expect(files.length).toBeGreaterThan(5));

  it('holds no golden file whose input is gone', () =>
    expectOnly(
      goldenDir,
      files.map((f) => goldenOf(f.name)),
    ));
  for (const { name, url } of files) {
    it(name, async () => {
      const text = readFileSync(url, 'utf8');
      const review = asReview(
        (name.endsWith('.json') ? JSON.parse(text) : parseYaml(text)) as Record<string, unknown>,
      ) as { request?: { object?: unknown } };
      const results: Record<string, unknown> = {};
      for (const route of ['mutate', 'validate']) {
        const res = await app.inject({ method: 'POST', url: `/${route}`, payload: review as object });
        const body = res.json();
        if (body.response?.patch) {
          const ops = JSON.parse(Buffer.from(body.response.patch, 'base64').toString());
          // Copies of the ops: an applied op's value becomes part of the document, which later ops change.
          jsonpatch.applyPatch(structuredClone(review.request!.object), structuredClone(ops), true, false);
          body.response.patch = ops;
        }
        results[route] = { status: res.statusCode, body };
        if (route === 'mutate' && body.response?.patch) {
          // The safety net must accept what the mutating webhook produced.
          const mutated = jsonpatch.applyPatch(
            structuredClone(review),
            structuredClone(body.response.patch).map((op: { path: string }) => ({
              ...op,
              path: `/request/object${op.path}`,
            })),
            true,
            false,
          ).newDocument;
          const after = (await app.inject({ method: 'POST', url: '/validate', payload: mutated as object })).json();
          expect(after.response.allowed).toBe(true);
          results['validate-after-mutate'] = { body: after };
          // Idempotent, as the apiserver's reinvocation needs: the mutated pod gets no patch.
          const again = (await app.inject({ method: 'POST', url: '/mutate', payload: mutated as object })).json();
          expect(again.response.patch).toBeUndefined();
        }
      }
      expectGolden(goldenOf(name), `${JSON.stringify(results, null, 2)}\n`);
    });
  }
});
