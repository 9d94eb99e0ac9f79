/**
 * The node agent's plain-HTTP endpoints (no TLS: nothing secret; the chart binds them to the node's own address,
 * see charts/meshgate/templates/node-agent-daemonset.yaml):
 * /healthz — alive (src/agent/health.ts liveness): the loop runs and no check hangs;
 * /readyz  — ready (readiness): the Node carries the agent's current verdict;
 * /metrics — Prometheus text format (src/agent/metrics.ts).
 * node:http, not fastify: three GET routes, and the agent runs on every node, where fastify's import alone was
 * 2.3 MiB of its RSS (`npm run bench -- --footprint`). `answer` is the routing, pure, so tests call it directly;
 * `serveAgent` only listens.
 * node:http is taken with `process.getBuiltinModule`, not an ESM import: an ESM import reads every export of the
 * module, and node:http's lazy `WebSocket`/`MessageEvent` getters then load Node's bundled undici: about 3 MiB of the
 * agent's RSS on every node (11 MiB in a bare process) for a client the agent never uses (docs/benchmarks.md §8;
 * test/kube/daemon-imports.test.ts keeps it so).
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Probe } from './health.ts';

const { createServer } = process.getBuiltinModule('node:http');

export interface AgentHttpDeps {
  registry: { contentType: string; metrics(): Promise<string> };
  alive: () => Probe;
  ready: () => Probe;
}

export interface Answer {
  status: number;
  contentType: string;
  body: string;
}

const TEXT = 'text/plain; charset=utf-8';

export async function answer(deps: AgentHttpDeps, method: string, url: string): Promise<Answer> {
  const path = url.split('?')[0];
  const probe = path === '/healthz' ? deps.alive : path === '/readyz' ? deps.ready : undefined;
  const route = probe !== undefined || path === '/metrics';
  if (!route) return { status: 404, contentType: TEXT, body: 'not found\n' };
  if (method !== 'GET' && method !== 'HEAD') return { status: 405, contentType: TEXT, body: 'GET only\n' };
  if (probe) {
    const r = probe();
    return { status: r.ok ? 200 : 503, contentType: TEXT, body: r.ok ? 'ok\n' : `not ok: ${r.why ?? ''}\n` };
  }
  return { status: 200, contentType: deps.registry.contentType, body: await deps.registry.metrics() };
}

export interface AgentServer {
  port: number;
  close(): Promise<void>;
}

/** Serves `answer` on host:port (0: any free port); rejects when it cannot listen. */
export async function serveAgent(deps: AgentHttpDeps, listen: { host: string; port: number }): Promise<AgentServer> {
  const server: Server = createServer((req, res) => {
    answer(deps, req.method ?? 'GET', req.url ?? '/').then(
      (a) => res.writeHead(a.status, { 'content-type': a.contentType }).end(req.method === 'HEAD' ? '' : a.body),
      (err: Error) => res.writeHead(500, { 'content-type': TEXT }).end(`error: ${err.message}\n`),
    );
  });
  // The probes and scrapes are short; a client that holds a connection open must not keep the agent from stopping.
  server.keepAliveTimeout = 5_000;
  server.headersTimeout = 10_000;
  server.requestTimeout = 10_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(listen.port, listen.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
