/** The kubelet's and Prometheus' routes: liveness, readiness (certificates loaded, caches synced) and metrics. */
import type { FastifyInstance } from 'fastify';
import type { Metrics } from '../metrics.ts';

export interface ProbeOptions {
  metrics: Metrics;
  ready: () => { ready: boolean; why?: string };
}

export async function probesPlugin(app: FastifyInstance, o: ProbeOptions): Promise<void> {
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (_req, reply) => {
    const r = o.ready();
    return reply.code(r.ready ? 200 : 503).send(r.ready ? { status: 'ready' } : { status: 'not ready', why: r.why });
  });
  app.get('/metrics', async (_req, reply) => {
    return reply.type(o.metrics.registry.contentType).send(await o.metrics.registry.metrics());
  });
}
