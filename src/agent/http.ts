/**
 * The node agent's plain-HTTP endpoints (no TLS: nothing secret; the chart binds them to the node's own address,
 * see charts/meshgate/templates/node-agent-daemonset.yaml):
 * /healthz — alive (src/agent/health.ts liveness): the loop runs and no check hangs;
 * /readyz  — ready (readiness): the Node carries the agent's current verdict;
 * /metrics — Prometheus text format (src/agent/metrics.ts).
 * Built apart from listening, so tests call app.inject().
 */
import Fastify, { type FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';
import type { Probe } from './health.ts';

export interface AgentHttpDeps {
  registry: Registry;
  alive: () => Probe;
  ready: () => Probe;
}

export function buildAgentApp(deps: AgentHttpDeps): FastifyInstance {
  const app = Fastify({ logger: false, forceCloseConnections: true }) as unknown as FastifyInstance;
  for (const [path, check] of [
    ['/healthz', deps.alive],
    ['/readyz', deps.ready],
  ] as const) {
    app.get(path, async (_req, reply) => {
      const r = check();
      const body = r.ok ? 'ok\n' : `not ok: ${r.why ?? ''}\n`;
      return reply
        .code(r.ok ? 200 : 503)
        .type('text/plain; charset=utf-8')
        .send(body);
    });
  }
  app.get('/metrics', async (_req, reply) => reply.type(deps.registry.contentType).send(await deps.registry.metrics()));
  return app;
}
