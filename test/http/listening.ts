/**
 * The fastify app (buildApp) listening on loopback with a self-signed certificate and routes of the test's
 * choosing: what the transport limits need (real sockets, bodies that arrive in pieces), without the rest of
 * startServer.
 */
import pino from 'pino';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/server/app.ts';
import type { AdmissionHandler } from '../../src/admission/handlers.ts';
import { createMetrics } from '../../src/server/metrics.ts';
import { resolveLimits, type TransportLimits } from '../../src/server/limits.ts';
import { issueSelfSigned } from '../../src/tls/self-signed.ts';
import { podCreateReview } from './reviews.ts';

export interface Listening {
  app: FastifyInstance;
  port: number;
  ca: string;
  close(): Promise<void>;
}

const pair = issueSelfSigned(['127.0.0.1'], 24 * 3600_000, Date.now());

export async function listening(
  routes: Record<string, AdmissionHandler>,
  limits: Partial<TransportLimits> = {},
): Promise<Listening> {
  const app = buildApp({
    logger: pino({ level: 'silent' }),
    metrics: createMetrics(),
    routes,
    ready: () => ({ ready: true }),
    https: { cert: pair.cert, key: pair.key },
    limits: resolveLimits(limits),
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const port = (app.server.address() as { port: number }).port;
  return { app, port, ca: pair.ca!, close: () => app.close() };
}

/** A review of exactly `bytes` bytes (padded in an annotation), JSON text. */
export function reviewOfSize(uid: string, bytes: number): string {
  const review = (pad: string) =>
    JSON.stringify(
      podCreateReview(uid, {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'p', annotations: { pad } },
        spec: { containers: [{ name: 'app', image: 'nginx' }] },
      }),
    );
  const base = review('').length;
  if (bytes < base) throw new Error(`a review is at least ${base} bytes`);
  return review('x'.repeat(bytes - base));
}
