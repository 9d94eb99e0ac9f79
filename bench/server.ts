/**
 * The server under test, run as a child process of bench/run.ts (never in the load generator's process):
 * the real `startServer` with the bench-only `/allow` echo route, self-signed TLS on 127.0.0.1, port 0, static
 * node facts (or, given a kubeconfig, the node and pod caches of that cluster) and a pino logger at the requested level writing to stdout (a pipe the parent drains, as a
 * container runtime would). Settings arrive as JSON in argv[2]. Over IPC it answers `cpu` with its own
 * process.cpuUsage() and memory, so the parent can charge CPU to each load phase; `level` switches the log
 * level (fastify's per-request child loggers take the root's level when created, so the next request obeys);
 * `exit` shuts down cleanly (which is also when `--cpu-prof` writes its profile).
 */
import pino from 'pino';
import { cpuMessage } from './server-cpu.ts';
import { startServer } from '../src/server/start.ts';
import { connectCluster } from '../src/kube/client.ts';
import { preEncode } from '../src/util/base64-json.ts';
import { testConfig } from '../test/support/config.ts';
import { benchNodeFacts } from './server-facts.ts';
import type { MeshName } from '../src/mesh/types.ts';

export interface ServerSettings {
  logLevel: 'silent' | 'warn' | 'info';
  /** Names of nodes the facts mark verified (kubelet v1.34.1); one extra node is present and unverified. */
  verifiedNodes: string[];
  /** The mesh profile of the test config (default custom: meshgate injects its own templates). */
  mesh?: MeshName;
  /** Node facts from this cluster's Nodes (watch-backed caches, as in production) instead of static ones. */
  kubeconfig?: string;
}

export type ServerMessage =
  | { type: 'ready'; url: string; port: number; ca: string }
  | { type: 'level'; level: string }
  | { type: 'cpu'; userUs: number; systemUs: number; rssBytes: number; heapUsedBytes: number; monoUs: number };

export type ParentMessage = { type: 'cpu' } | { type: 'level'; level: ServerSettings['logLevel'] } | { type: 'exit' };

/**
 * ~2.2 KB of JSON Patch, as large as meshgate's CNI-mode patch (validator, proxy, volume, affinity, label,
 * status). Its value is pre-encoded like meshgate's templates: the route costs what answering that much costs.
 */
const SIZED_ECHO_PATCH = [
  {
    op: 'add' as const,
    path: '/metadata/annotations',
    value: preEncode({ 'bench.meshgate.io/echo': 'x'.repeat(2170) }),
  },
];

/** The transport baselines: POST /allow (decode, allow) and /allow-sized (decode, a canned meshgate-sized patch). */
const ECHO_ROUTES = {
  '/allow': () => ({ kind: 'allow', reason: 'ok' }) as const,
  '/allow-sized': () => ({ kind: 'patch', reason: 'ok', ops: SIZED_ECHO_PATCH }) as const,
};

async function main(): Promise<void> {
  const settings = JSON.parse(process.argv[2] ?? '{}') as ServerSettings;
  const nodeState = benchNodeFacts(settings.verifiedNodes);
  const logger = pino({ level: settings.logLevel });
  // Only with a cluster, as in production: static facts never load the Kubernetes client (src/kube/client.ts).
  const kube = await connectCluster({ kubeconfig: settings.kubeconfig });
  const server = await startServer({
    config: testConfig(settings.mesh ?? 'custom'),
    port: 0,
    host: '127.0.0.1',
    tlsSans: ['localhost', '127.0.0.1'],
    ...(kube ? { kube } : { nodeState }),
    drainSeconds: 0,
    logger,
    extraRoutes: ECHO_ROUTES,
  });
  await server.synced;
  const send = (m: ServerMessage) => process.send!(m);
  process.on('message', (m: ParentMessage) => {
    if (m.type === 'cpu') send(cpuMessage());
    else if (m.type === 'level') {
      logger.level = m.level;
      send({ type: 'level', level: logger.level });
    } else if (m.type === 'exit') {
      void server.shutdown().then(() => process.exit(0));
    }
  });
  // The parent going away must not leave a server behind.
  process.on('disconnect', () => process.exit(0));
  send({ type: 'ready', url: server.url, port: server.port, ca: server.ca ?? '' });
}

await main();
