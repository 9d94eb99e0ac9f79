/**
 * The fastify app: routes and plugins only. Listening, certificates and signals belong to the caller
 * (cli/serve.ts), so tests drive the same app with `app.inject()`.
 */
import Fastify, { LogController, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { SecureContextOptions } from 'node:tls';
import { decodeReview, encodeResponse, serializeResponse, type AdmissionRequest, type Verdict } from '../admission/review.ts';
import type { Metrics } from './metrics.ts';

/** 7 MiB: the apiserver sends at most two objects (object and oldObject) of at most 3 MiB each, plus framing. */
export const BODY_LIMIT = 7 * 1024 * 1024;

export type AdmissionHandler = (request: AdmissionRequest) => Verdict | Promise<Verdict>;

export interface AppDeps {
  logger: Logger;
  metrics: Metrics;
  routes: Record<string, AdmissionHandler>;
  /** Ready to serve admission: certificates loaded, caches synced, not shutting down. */
  ready: () => { ready: boolean; why?: string };
  https?: SecureContextOptions | null;
  /** Sees every decoded review and its verdict (tests capture real apiserver bodies with it). */
  onReview?: (route: string, body: unknown, verdict: Verdict) => void;
}

export function buildApp(deps: AppDeps): FastifyInstance {
  const app = Fastify({
    loggerInstance: deps.logger,
    bodyLimit: BODY_LIMIT,
    // One structured line per review (with its uid) is logged by the route; fastify's own two are noise.
    logController: new LogController({ disableRequestLogging: true }),
    // The apiserver speaks HTTP/1.1 to webhooks; h2 is refused (and with it Rapid-Reset).
    http2: false,
    https: deps.https ? { ...deps.https, minVersion: 'TLSv1.2', ALPNProtocols: ['http/1.1'] } : null,
    // Close idle keep-alive sockets on close(); in-flight requests finish first.
    forceCloseConnections: 'idle',
    return503OnClosing: true,
  }) as unknown as FastifyInstance;

  // Only application/json is an AdmissionReview; fastify's default text/plain parser would turn a wrong
  // content type into a 400 instead of the 415 it is.
  app.removeContentTypeParser('text/plain');

  app.setErrorHandler((err: Error & { statusCode?: number; code?: string }, req, reply) => {
    const status = err.statusCode && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 500;
    if (status === 500) req.log.error({ err }, 'unhandled error');
    void reply.code(status).send({ error: err.code ?? 'error', message: err.message });
  });

  for (const [path, handler] of Object.entries(deps.routes)) {
    const route = path.replace(/^\//, '');
    app.post(path, async (req, reply) => {
      const decoded = decodeReview(req.body);
      if (!decoded.ok) {
        deps.metrics.decisions.inc({ route, decision: 'bad_request', reason: 'bad_review' });
        return reply.code(400).send({ error: 'bad_review', message: `not an AdmissionReview: ${decoded.error}` });
      }
      const { apiVersion, request } = decoded.review;
      const stop = deps.metrics.latency.startTimer({ route });
      let verdict: Verdict;
      try {
        verdict = await handler(request);
      } catch (err) {
        // A bug must cost one errored review, never the process; the apiserver applies failurePolicy.
        req.log.error({ err, uid: request.uid }, 'handler failed');
        verdict = { kind: 'error', reason: 'internal_error', message: `internal error: ${(err as Error).message}` };
      }
      stop();
      deps.onReview?.(route, req.body, verdict);
      deps.metrics.decisions.inc({ route, decision: verdict.kind, reason: verdict.reason });
      req.log.info({ uid: request.uid, route, namespace: request.namespace, name: request.name, operation: request.operation, decision: verdict.kind, reason: verdict.reason, dryRun: request.dryRun === true }, 'admission');
      return reply.type('application/json; charset=utf-8').send(serializeResponse(encodeResponse(apiVersion, request.uid, verdict)));
    });
  }

  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (_req, reply) => {
    const r = deps.ready();
    return reply.code(r.ready ? 200 : 503).send(r.ready ? { status: 'ready' } : { status: 'not ready', why: r.why });
  });
  app.get('/metrics', async (_req, reply) => {
    return reply.type(deps.metrics.registry.contentType).send(await deps.metrics.registry.metrics());
  });
  return app;
}
