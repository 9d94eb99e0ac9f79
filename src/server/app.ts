/**
 * The fastify app: routes and plugins only. Listening, certificates and signals belong to the caller
 * (cli/serve.ts), so tests drive the same app with `app.inject()`.
 */
import Fastify, { LogController, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { SecureContextOptions } from 'node:tls';
import { decodeReview, encodeResponse, serializeResponse, type Verdict } from '../admission/review.ts';
import type { AdmissionHandler } from '../admission/handlers.ts';
import type { Metrics } from './metrics.ts';
import { admissionLogFields } from './admission-log.ts';
import { BODY_LIMIT, DEFAULT_LIMITS, type TransportLimits } from './limits.ts';
import { TLS_POLICY } from './tls-policy.ts';
import { isOverloaded, overloadGuard } from './overload.ts';
import { checkShape } from './json-shape.ts';

export { BODY_LIMIT };

export interface AppDeps {
  logger: Logger;
  metrics: Metrics;
  routes: Record<string, AdmissionHandler>;
  /** Ready to serve admission: certificates loaded, caches synced, not shutting down. */
  ready: () => { ready: boolean; why?: string };
  /** Certificate and key; the TLS policy (tls-policy.ts) is applied over them. */
  https?: SecureContextOptions | null;
  /** Timeouts and caps (limits.ts); default DEFAULT_LIMITS. */
  limits?: Readonly<TransportLimits>;
  /** Sees every decoded review and its verdict (tests capture real apiserver bodies with it). */
  onReview?: (route: string, body: unknown, verdict: Verdict) => void;
}

export function buildApp(deps: AppDeps): FastifyInstance {
  const limits = deps.limits ?? DEFAULT_LIMITS;
  const app = Fastify({
    loggerInstance: deps.logger,
    bodyLimit: BODY_LIMIT,
    requestTimeout: limits.requestTimeoutMs,
    connectionTimeout: limits.connectionTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    maxRequestsPerSocket: limits.maxRequestsPerSocket,
    // One structured line per review (with its uid) is logged by the route; fastify's own two are noise.
    logController: new LogController({ disableRequestLogging: true }),
    // The apiserver speaks HTTP/1.1 to webhooks; h2 is refused (and with it Rapid-Reset).
    http2: false,
    // headersTimeout and connectionsCheckingInterval are http.Server options fastify does not know: node reads
    // them from the options the server is created with.
    https: deps.https
      ? {
          ...deps.https,
          ...TLS_POLICY,
          ALPNProtocols: ['http/1.1'],
          handshakeTimeout: limits.tlsHandshakeTimeoutMs,
          headersTimeout: limits.headersTimeoutMs,
          connectionsCheckingInterval: limits.connectionsCheckingIntervalMs,
        }
      : null,
    // Close idle keep-alive sockets on close(); in-flight requests finish first.
    forceCloseConnections: 'idle',
    return503OnClosing: true,
  }) as unknown as FastifyInstance;
  app.server.maxConnections = limits.maxConnections;
  const guard = overloadGuard(limits, deps.metrics.registry);
  app.server.on('drop', () => guard.connectionDropped());

  // Only application/json is an AdmissionReview; fastify's default text/plain parser would turn a wrong
  // content type into a 400 instead of the 415 it is.
  app.removeContentTypeParser('text/plain');
  // After a count of the objects and arrays in a large body (what a body parses to is bounded, not just its
  // bytes: json-shape.ts), fastify's own parser, which refuses __proto__ and constructor keys.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    const tooMany = checkShape(body as string);
    if (tooMany) return done(tooMany, undefined);
    parseJson(req, body as string, done);
  });

  app.setErrorHandler((err: Error & { statusCode?: number; code?: string }, req, reply) => {
    const status = err.statusCode && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 500;
    if (status === 500) req.log.error({ err }, 'unhandled error');
    // fastify closes the connection after any body error; for a refused body, overload.ts reads and discards
    // the rest instead, so the client is not reset while still sending and does read the 429.
    if (isOverloaded(err)) reply.removeHeader('connection');
    // Refusals before the route ran (413, 415, 429) count as requests of the route they were sent to.
    const path = req.routeOptions.url;
    if (path !== undefined && Object.hasOwn(deps.routes, path)) {
      deps.metrics.requests.inc({ route: path.slice(1), code: String(status) });
    }
    void reply.code(status).send({ error: err.code ?? 'error', message: err.message });
  });

  for (const [path, handler] of Object.entries(deps.routes)) {
    const route = path.replace(/^\//, '');
    const { latency, decisions, requests, inFlight } = deps.metrics;
    app.post(path, { preParsing: guard.meterBody }, async (req, reply) => {
      const refused = guard.admitReview(req, reply);
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
        deps.onReview?.(route, req.body, verdict);
        const fields = admissionLogFields(route, request, verdict);
        const namespace = deps.metrics.refusalNamespace(fields.decision, request.namespace);
        const labels = { route, decision: fields.decision, reason: verdict.reason };
        decisions.inc(namespace === undefined ? labels : { ...labels, namespace });
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
