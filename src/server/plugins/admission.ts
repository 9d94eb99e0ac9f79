/**
 * The admission routes as one encapsulated fastify plugin: their body parser (json-shape.ts's count, then fastify's
 * own parser), their error handler (413, 415 and 429 counted as requests of the route they were sent to) and one
 * POST route per handler. Nothing here applies to the probe routes (probes.ts).
 */
import type { FastifyInstance } from 'fastify';
import { decodeReview, encodeResponse, serializeResponse, type Verdict } from '../../admission/review.ts';
import type { AdmissionHandler } from '../../admission/handlers.ts';
import type { Metrics } from '../metrics.ts';
import { admissionLogFields } from '../admission-log.ts';
import { isOverloaded, type OverloadGuard } from '../overload.ts';
import { checkShape } from '../json-shape.ts';

export interface AdmissionOptions {
  metrics: Metrics;
  routes: Readonly<Record<string, AdmissionHandler>>;
  guard: OverloadGuard;
  /** Sees every decoded review and its verdict (tests capture real apiserver bodies with it). */
  onReview?: (route: string, body: unknown, verdict: Verdict) => void;
}

/** Only application/json is an AdmissionReview, and what it parses to is bounded, not just its bytes. */
function bodyParser(app: FastifyInstance): void {
  // fastify's default text/plain parser would turn a wrong content type into a 400 instead of the 415 it is.
  app.removeContentTypeParser('text/plain');
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    const tooMany = checkShape(body as string);
    if (tooMany) return done(tooMany, undefined);
    parseJson(req, body as string, done);
  });
}

function errorHandler(app: FastifyInstance, o: AdmissionOptions): void {
  app.setErrorHandler((err: Error & { statusCode?: number; code?: string }, req, reply) => {
    const status = err.statusCode && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 500;
    if (status === 500) req.log.error({ err }, 'unhandled error');
    // fastify closes the connection after any body error; for a refused body, overload.ts reads and discards
    // the rest instead, so the client is not reset while still sending and does read the 429.
    if (isOverloaded(err)) reply.removeHeader('connection');
    // Refusals before the route ran (413, 415, 429) count as requests of the route they were sent to.
    const path = req.routeOptions.url;
    if (path !== undefined && Object.hasOwn(o.routes, path)) {
      o.metrics.requests.inc({ route: path.slice(1), code: String(status) });
    }
    void reply.code(status).send({ error: err.code ?? 'error', message: err.message });
  });
}

function reviewRoute(app: FastifyInstance, path: string, handler: AdmissionHandler, o: AdmissionOptions): void {
  const route = path.replace(/^\//, '');
  const { latency, decisions, requests, inFlight } = o.metrics;
  app.post(path, { preParsing: o.guard.meterBody }, async (req, reply) => {
    const refused = o.guard.admitReview(req, reply);
    if (refused) throw refused;
    // The answer is serialized and handed to the socket before the handler returns: in flight and timed until then.
    inFlight.inc({ route });
    const stop = latency.startTimer({ route });
    try {
      const decoded = decodeReview(req.body);
      if (!decoded.ok) {
        decisions.inc({ route, decision: 'bad_request', reason: 'bad_review' });
        requests.inc({ route, code: '400' });
        return reply.code(400).send({ error: 'bad_review', message: `not an AdmissionReview: ${decoded.error}` });
      }
      const { apiVersion, request } = decoded.review;
      let verdict: Verdict;
      try {
        verdict = await handler(request);
      } catch (err) {
        // A bug must cost one errored review, never the process; the apiserver applies failurePolicy.
        req.log.error({ err, uid: request.uid }, 'handler failed');
        verdict = { kind: 'error', reason: 'internal_error', message: `internal error: ${(err as Error).message}` };
      }
      o.onReview?.(route, req.body, verdict);
      const fields = admissionLogFields(route, request, verdict);
      const namespace = o.metrics.refusalNamespace(fields.decision, request.namespace);
      const labels = { route, decision: fields.decision, reason: verdict.reason };
      decisions.inc(namespace === undefined ? labels : { ...labels, namespace });
      if ((verdict.kind === 'allow' || verdict.kind === 'patch') && verdict.audited?.pod)
        o.metrics.auditedPods.inc({ level: verdict.audited.level, reason: verdict.reason });
      req.log.info(fields, 'admission');
      const answer = serializeResponse(encodeResponse(apiVersion, request.uid, verdict));
      requests.inc({ route, code: '200' });
      return reply.type('application/json; charset=utf-8').send(answer);
    } finally {
      stop();
      inFlight.dec({ route });
    }
  });
}

export async function admissionPlugin(app: FastifyInstance, o: AdmissionOptions): Promise<void> {
  bodyParser(app);
  errorHandler(app, o);
  for (const [path, handler] of Object.entries(o.routes)) reviewRoute(app, path, handler, o);
}
