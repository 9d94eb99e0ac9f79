/**
 * The fastify app: the transport (TLS policy, timeouts, connection caps, the overload guard) and two plugins, the
 * admission routes (plugins/admission.ts) and the probes (plugins/probes.ts). Listening, certificates and signals
 * belong to the caller (cli/serve.ts), so tests drive the same app with `app.inject()`.
 */
import Fastify, { LogController, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { SecureContextOptions } from 'node:tls';
import type { Verdict } from '../admission/review.ts';
import type { AdmissionHandler } from '../admission/handlers.ts';
import type { Metrics } from './metrics.ts';
import { BODY_LIMIT, DEFAULT_LIMITS, type TransportLimits } from './limits.ts';
import { TLS_POLICY } from './tls-policy.ts';
import { overloadGuard } from './overload.ts';
import { admissionPlugin } from './plugins/admission.ts';
import { guardConnections } from './connection-guard.ts';
import type { Server as HttpsServer } from 'node:https';
import { probesPlugin } from './plugins/probes.ts';

export { BODY_LIMIT };

/** Accepts beyond maxConnections that node lets through for the connection guard to judge (a burst at the cap). */
const CONNECTION_HEADROOM = 64;

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
  // node's own cap is the hard ceiling, a little above ours: at maxConnections the connection guard frees the slot of
  // a connection that never sent a request for a new one (src/server/connection-guard.ts), and a burst of accepts
  // must reach it before node drops them.
  app.server.maxConnections = limits.maxConnections + CONNECTION_HEADROOM;
  const guard = overloadGuard(limits, deps.metrics.registry);
  app.server.on('drop', () => guard.connectionDropped());
  guardConnections(app.server as HttpsServer, limits, (limit) => guard.connectionRefused(limit));

  void app.register(admissionPlugin, { metrics: deps.metrics, routes: deps.routes, guard, onReview: deps.onReview });
  void app.register(probesPlugin, { metrics: deps.metrics, ready: deps.ready });
  return app;
}
