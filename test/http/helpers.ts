/**
 * Shared fixtures for the HTTP tests: the real fastify app with the real handlers (no mocks), the corpus of
 * AdmissionReviews captured from other projects, and a JSON Patch checker that applies a response's patch to
 * the object it was computed for, with fast-json-patch validating every operation.
 */
import { readFileSync, readdirSync } from 'node:fs';
import pino, { type Logger } from 'pino';
import jsonpatch, { type Operation } from 'fast-json-patch';
import { expect } from 'vitest';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { buildApp } from '../../src/server/app.ts';
import type { AdmissionHandler } from '../../src/admission/handlers.ts';
import { createMetrics, type Metrics } from '../../src/server/metrics.ts';
import { admissionRoutes } from '../../src/admission/handlers.ts';
import { testConfig } from '../support/config.ts';
import { nodeFactsFromState } from '../../src/facts/node-state.ts';

import { podCreateReview, type Review } from './reviews.ts';

export { bindingReview, podCreateReview, type Review } from './reviews.ts';

export const CORPUS_DIR = new URL('../../../shared/corpus/admission/', import.meta.url);

export interface ReviewResponse {
  apiVersion: string;
  kind: string;
  response: {
    uid: string;
    allowed: boolean;
    status?: { code: number; message: string; reason?: string };
    patchType?: string;
    patch?: string;
    warnings?: string[];
    auditAnnotations?: Record<string, string>;
  };
}

/**
 * Every JSON AdmissionReview in the corpus; bare AdmissionRequests (pepr, kubewarden policy inputs) are
 * wrapped in a v1 review, since that is what the apiserver would send.
 */
export function loadCorpus(): Array<{ name: string; review: Review }> {
  const out: Array<{ name: string; review: Review }> = [];
  for (const name of readdirSync(CORPUS_DIR)
    .filter((f) => f.endsWith('.json'))
    .sort()) {
    const raw = JSON.parse(readFileSync(new URL(name, CORPUS_DIR), 'utf8')) as Record<string, unknown>;
    const review =
      raw.kind === 'AdmissionReview'
        ? (raw as unknown as Review)
        : { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: raw as Review['request'] };
    out.push({ name, review });
  }
  if (out.length === 0) throw new Error(`no corpus reviews in ${CORPUS_DIR.pathname}`);
  return out;
}

/** A minimal pod CREATE review; `spec` is merged over a one-container spec. */
export function podReview(uid: string, spec: Record<string, unknown> = {}, apiVersion = 'admission.k8s.io/v1'): Review {
  const object = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web', namespace: 'demo' },
    spec: { containers: [{ name: 'app', image: 'nginx' }], ...spec },
  };
  return podCreateReview(uid, object, {}, apiVersion);
}

export const BOOM = 'boom: the handler fell over';

export interface TestApp {
  app: FastifyInstance;
  metrics: Metrics;
  setReady(r: { ready: boolean; why?: string }): void;
}

/**
 * The app as the server builds it: default config, node n1 verified and n2 not, every admission route (/mutate,
 * /validate, /mutate/audit, …) from admissionRoutes, and /boom whose handler throws (the transport must turn that into an errored review). Silent
 * unless given a logger.
 */
export function buildTestApp(opts: { logger?: Logger } = {}): TestApp {
  const metrics = createMetrics();
  const nodes = nodeFactsFromState({ nodes: { n1: { verified: true }, n2: { verified: false } } }, 'test');
  const handlers = admissionRoutes({ config: testConfig('custom'), nodes });
  let readiness: { ready: boolean; why?: string } = { ready: true };
  const boom: AdmissionHandler = () => {
    throw new Error(BOOM);
  };
  const app = buildApp({
    logger: opts.logger ?? pino({ level: 'silent' }),
    metrics,
    routes: { ...handlers, '/boom': boom },
    ready: () => readiness,
  });
  return { app, metrics, setReady: (r) => (readiness = r) };
}

export function post(
  app: FastifyInstance,
  url: string,
  body: unknown,
  contentType = 'application/json',
): Promise<LightMyRequestResponse> {
  const payload = typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body);
  return app.inject({ method: 'POST', url, headers: { 'content-type': contentType }, payload });
}

/** The JSON Patch of a response, decoded from base64; [] when it carries none. */
export function decodePatch(res: ReviewResponse): Operation[] {
  if (res.response.patch === undefined) return [];
  expect(res.response.patchType).toBe('JSONPatch');
  const ops = JSON.parse(Buffer.from(res.response.patch, 'base64').toString('utf8')) as unknown;
  expect(Array.isArray(ops)).toBe(true);
  return ops as Operation[];
}

/**
 * Applies the response's patch to a copy of `object` with validation on: fast-json-patch throws on a bad
 * operation, a missing parent or a failed test. Returns the patched object.
 */
export function applyResponsePatch(object: unknown, res: ReviewResponse): unknown {
  const ops = decodePatch(res);
  return jsonpatch.applyPatch(structuredClone(object), ops, true, true).newDocument;
}
