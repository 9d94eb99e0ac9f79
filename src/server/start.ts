/**
 * Assembles a running webhook server: certificate source, node facts, handlers, the fastify app, listening
 * and graceful shutdown. `cli/serve.ts` maps flags onto ServeOptions; tests and benchmarks call this directly.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Server as HttpsServer } from 'node:https';
import pino, { type Logger } from 'pino';
import type { KubeConfig } from '@kubernetes/client-node';
import type { MeshgateConfig } from '../config/types.ts';
import type { NodeFacts } from '../facts/node-facts.ts';
import { buildHandlers } from '../admission/handlers.ts';
import { buildApp, type AppDeps } from './app.ts';
import { trackConnections } from './drain.ts';
import { createMetrics } from './metrics.ts';
import { SelfSignedSource } from '../tls/self-signed.ts';
import { FileSource } from '../tls/file-source.ts';
import type { CertSource } from '../tls/source.ts';
import { startNodeCache } from '../kube/node-cache.ts';
import { startPodModeCache, type PodModes } from '../kube/pod-mode-cache.ts';
import { SecretSource } from '../tls/secret-source.ts';
import { kubeSecretStore } from '../kube/secret-store.ts';
import { syncCaBundle } from '../kube/ca-bundle.ts';
import { describeKubeError } from '../kube/errors.ts';
import { deepFreeze } from '../util/json.ts';

export interface ServeOptions {
  config: MeshgateConfig;
  port: number;
  host: string;
  certFile?: string;
  keyFile?: string;
  tlsSans: string[];
  /** Where to write the generated CA (ca.crt) for curl and webhook registration; never the key. */
  writeCaTo?: string;
  /** Static node facts (embedded default); ignored when kc is set. */
  nodeState?: NodeFacts;
  kc?: KubeConfig;
  /** Seconds between readiness going false and the listener closing, so endpoints stop routing here. */
  drainSeconds: number;
  logger?: Logger;
  /** Adds the benchmark's transport baselines: POST /allow (decode, allow) and /allow-sized (a canned patch). */
  benchRoutes?: boolean;
  /** Self-managed certificates shared by replicas through this Secret (needs kc); overrides self-signed. */
  certSecret?: { namespace: string; name: string };
  /** Keep the caBundle of these Mutating/ValidatingWebhookConfigurations (one name) equal to our CA. */
  webhookConfigName?: string;
  onReview?: AppDeps['onReview'];
}

export interface RunningServer {
  url: string;
  port: number;
  ca?: string;
  certs: CertSource;
  /** Resolves once the node (and pod-mode) caches have their first full list. */
  synced: Promise<void>;
  shutdown(): Promise<void>;
}

function certSource(o: ServeOptions, logger: Logger): CertSource {
  if (o.certFile && o.keyFile) {
    return new FileSource({ certFile: o.certFile, keyFile: o.keyFile, onError: (err) => logger.error({ err }, 'certificate reload failed; serving the previous pair') });
  }
  if (o.certSecret && o.kc) {
    const store = kubeSecretStore(o.kc, o.certSecret.namespace, o.certSecret.name);
    return new SecretSource({ store, sans: o.tlsSans, onError: (err) => logger.error({ err: describeKubeError(err) }, 'certificate secret sync failed') });
  }
  return new SelfSignedSource({ sans: o.tlsSans });
}

/** Patches our CA into the webhook configurations now and after every change, retrying every 10 s on failure. */
function keepCaBundle(kc: KubeConfig, name: string, certs: CertSource, logger: Logger): void {
  let timer: NodeJS.Timeout | undefined;
  const sync = () => {
    clearTimeout(timer);
    syncCaBundle(kc, name, certs.current().ca!)
      .then((n) => n > 0 && logger.info({ webhookConfig: name, patched: n }, 'caBundle updated'))
      .catch((err) => {
        logger.warn({ err: describeKubeError(err), webhookConfig: name }, 'caBundle update failed; retrying in 10 s');
        timer = setTimeout(sync, 10_000);
        timer.unref();
      });
  };
  certs.onChange(sync);
  sync();
}

/**
 * ~2.2 KB of JSON Patch, as large as meshgate's CNI-mode patch (validator, proxy, volume, affinity, label,
 * status). Frozen, so its base64 is encoded once: the route costs what answering that much costs, no more.
 */
const SIZED_ECHO_PATCH = deepFreeze([{ op: 'add' as const, path: '/metadata/annotations', value: { 'bench.meshgate.io/echo': 'x'.repeat(2170) } }]);

export async function startServer(o: ServeOptions): Promise<RunningServer> {
  const logger = o.logger ?? pino({ level: 'info' });
  const certs = certSource(o, logger);
  await certs.start();
  if (o.kc && o.webhookConfigName) keepCaBundle(o.kc, o.webhookConfigName, certs, logger);
  if (o.writeCaTo && certs.current().ca) {
    mkdirSync(o.writeCaTo, { recursive: true });
    writeFileSync(join(o.writeCaTo, 'ca.crt'), certs.current().ca!);
  }

  const stops: Array<() => void> = [() => certs.stop()];
  let nodes: NodeFacts;
  let podModes: PodModes | undefined;
  let synced: Promise<void> = Promise.resolve();
  if (o.kc) {
    const cache = startNodeCache(o.kc, (err) => logger.warn({ err: describeKubeError(err) }, 'node watch interrupted; resuming'));
    stops.push(() => cache.reflector.stop());
    nodes = cache.store;
    cache.ready.catch((err) => logger.error({ err: describeKubeError(err) }, 'node list failed'));
    const pods = startPodModeCache(o.kc, (err) => logger.warn({ err: describeKubeError(err) }, 'pod watch interrupted; resuming'));
    stops.push(() => pods.stop());
    podModes = pods;
    synced = Promise.all([cache.ready, pods.ready]).then(() => undefined);
  } else {
    nodes = o.nodeState!;
  }

  const metrics = createMetrics({ defaultMetrics: true });
  const handlers = buildHandlers({ config: o.config, nodes, podModes, logger, onLookup: (source) => metrics.podLookups.inc({ source }) });
  let closing = false;
  const app = buildApp({
    logger,
    metrics,
    onReview: o.onReview,
    https: { cert: certs.current().cert, key: certs.current().key },
    routes: {
      '/mutate': handlers.mutate,
      '/validate': handlers.validate,
      ...(o.benchRoutes ? {
        '/allow': () => ({ kind: 'allow', reason: 'echo' }) as const,
        // Echo with a canned patch the size of a typical meshgate patch: the transport cost of the bigger answer.
        '/allow-sized': () => ({ kind: 'patch', reason: 'echo', ops: SIZED_ECHO_PATCH }) as const,
      } : {}),
    },
    ready: () => {
      if (closing) return { ready: false, why: 'shutting down' };
      if (!certs.healthy()) return { ready: false, why: 'no valid serving certificate' };
      if (!nodes.synced()) return { ready: false, why: 'node cache not synced' };
      return { ready: true };
    },
  });
  certs.onChange((pair) => {
    (app.server as HttpsServer).setSecureContext({ cert: pair.cert, key: pair.key });
    logger.info({ notAfter: pair.notAfter.toISOString() }, 'serving certificate swapped');
  });
  const drainer = trackConnections(app.server as HttpsServer);
  await app.listen({ port: o.port, host: o.host });
  const port = (app.server.address() as { port: number }).port;
  const url = `https://${o.host.includes(':') ? `[${o.host}]` : o.host}:${port}`;
  logger.info({ url, nodes: nodes.size() }, 'meshgate webhook listening');

  return {
    url,
    port,
    ca: certs.current().ca,
    certs,
    synced,
    async shutdown() {
      if (closing) return;
      closing = true;
      logger.info({ drainSeconds: o.drainSeconds }, 'shutting down: readiness off, draining');
      await new Promise((r) => setTimeout(r, o.drainSeconds * 1000));
      await drainer.close(() => app.close());
      for (const stop of stops) stop();
      logger.info('shut down');
    },
  };
}
