/**
 * The repair controller's plain-HTTP endpoints (no TLS: nothing secret, scraped inside the cluster):
 * /healthz — alive: the election loop ran recently (a wedged process is restarted);
 * /readyz  — the pod cache is synced (leader or not: a standby replica is ready to take over);
 * /metrics — Prometheus text format.
 * Built apart from listening (tests call app.inject()).
 */
import Fastify, { type FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';

export interface HealthDeps {
  registry: Registry;
  alive: () => { ok: boolean; why?: string };
  ready: () => { ok: boolean; why?: string };
}

export function buildRepairApp(deps: HealthDeps): FastifyInstance {
  const app = Fastify({ logger: false, forceCloseConnections: true }) as unknown as FastifyInstance;
  const probe =
    (check: () => { ok: boolean; why?: string }) =>
    async (_req: unknown, reply: { code(n: number): { send(b: string): unknown } }) => {
      const r = check();
      return reply.code(r.ok ? 200 : 503).send(r.ok ? 'ok\n' : `not ok: ${r.why ?? ''}\n`);
    };
  app.get('/healthz', probe(deps.alive));
  app.get('/readyz', probe(deps.ready));
  app.get('/metrics', async (_req, reply) => {
    reply.header('Content-Type', deps.registry.contentType);
    return deps.registry.metrics();
  });
  return app;
}
