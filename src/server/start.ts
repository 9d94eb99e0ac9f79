/**
 * Assembles a running webhook server: certificate source, node facts, handlers, the fastify app, listening
 * and graceful shutdown. `cli/serve.ts` maps flags onto ServeOptions; tests and benchmarks call this directly.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Server as HttpsServer } from 'node:https';
import type { Logger } from 'pino';
import { createLogger } from '../log/logger.ts';
import type { KubeClient } from '../kube/api/client.ts';
import type { Compiled } from '../config/compile.ts';
import type { NodeFacts } from '../facts/node-facts.ts';
import { admissionRoutes } from '../admission/handlers.ts';
import { buildApp, type AppDeps } from './app.ts';
import { trackConnections } from './drain.ts';
import { resolveLimits, type TransportLimits } from './limits.ts';
import { secureContextOptions } from './tls-policy.ts';
import { createMetrics, registerCertificateMetrics, registerConfigMetrics, registerNodeMetrics } from './metrics.ts';
import { SelfSignedSource } from '../tls/self-signed.ts';
import { FileSource } from '../tls/file-source.ts';
import type { CertSource } from '../tls/source.ts';
import type { NamespaceLabels } from '../kube/namespace-labels.ts';
import type { PodNeeds } from '../kube/pod-mode-cache.ts';
import type { Cluster } from './cluster.ts';
import { MarkKeySource } from '../mark/key-source.ts';
import { keyRing } from '../mark/keys.ts';
import { errorFields } from '../log/fields.ts';

export interface ServeOptions {
  config: Compiled;
  port: number;
  host: string;
  certFile?: string;
  keyFile?: string;
  tlsSans: string[];
  /** Where to write the generated CA (ca.crt) for curl and webhook registration; never the key. */
  writeCaTo?: string;
  /** Static node facts (embedded default); ignored when kube is set. */
  nodeState?: NodeFacts;
  /** The cluster (src/kube/client.ts): node and pod caches, and the Secret and caBundle below. */
  kube?: KubeClient;
  /** Seconds between readiness going false and the listener closing, so endpoints stop routing here. */
  drainSeconds: number;
  logger?: Logger;
  /** Routes served beside /mutate and /validate: the benchmark's transport baselines (bench/server.ts). */
  extraRoutes?: AppDeps['routes'];
  /** Self-managed certificates shared by replicas through this Secret (needs kube); overrides self-signed. */
  certSecret?: { namespace: string; name: string };
  /** Keep the caBundle of these Mutating/ValidatingWebhookConfigurations (one name) equal to our CA. */
  webhookConfigName?: string;
  /** A certificate source built by the caller (tests drive a CA rotation with a fake clock); overrides the above. */
  certSource?: CertSource;
  onReview?: AppDeps['onReview'];
  /** Transport timeouts and caps over the defaults (server/limits.ts). */
  limits?: Partial<TransportLimits>;
  /**
   * The admission mark's keys (src/mark/): read from `dir`, the mounted Secret; with `createSecret` (needs kube), that
   * Secret is created with a fresh key when it does not exist. Given, readiness waits for a key. Without, no pod
   * is marked and any mark a pod brings is refused.
   */
  markKeys?: { dir: string; createSecret?: { namespace: string; name: string } };
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

function certSource(o: ServeOptions, cluster: Cluster | undefined, logger: Logger): CertSource {
  if (o.certFile && o.keyFile) {
    return new FileSource({
      certFile: o.certFile,
      keyFile: o.keyFile,
      onError: (err) => logger.error({ err }, 'certificate reload failed; serving the previous pair'),
    });
  }
  if (o.certSecret && cluster) return cluster.secretCertSource(o.certSecret, o.tlsSans, o.webhookConfigName);
  return new SelfSignedSource({
    sans: o.tlsSans,
    log: logger,
    onError: (err) => logger.error({ err }, 'certificate renewal failed'),
  });
}

/** Retry period of a failed creation of the mark's Secret (the apiserver unreachable at start, say). */
const MARK_SECRET_RETRY_MS = 10_000;

/**
 * The mark's keys from their directory; first, with `createSecret`, the Secret is made unless it exists — and a
 * key this replica just put there is used at once, before the kubelet mounts it.
 */
async function startMarkKeys(
  o: NonNullable<ServeOptions['markKeys']>,
  cluster: Cluster | undefined,
  logger: Logger,
): Promise<{ source: MarkKeySource; stop: () => void }> {
  const source = new MarkKeySource({ dir: o.dir, log: logger });
  source.start();
  let retry: NodeJS.Timeout | undefined;
  const stop = () => {
    clearTimeout(retry);
    source.stop();
  };
  const secret = o.createSecret;
  if (!secret || !cluster) return { source, stop };
  const where = `Secret ${secret.namespace}/${secret.name}`;
  const ensure = async (): Promise<void> => {
    try {
      const r = await cluster.ensureMarkKeySecret(secret);
      if (!r.created) return;
      source.seed(keyRing(r.key));
      logger.info({ secret: where }, 'admission mark Secret created with a fresh key');
    } catch (err) {
      logger.error({ err: errorFields(err), secret: where }, 'could not create the admission mark Secret; retrying');
      retry = setTimeout(() => void ensure(), MARK_SECRET_RETRY_MS);
      retry.unref();
    }
  };
  await ensure();
  return { source, stop };
}

export async function startServer(o: ServeOptions): Promise<RunningServer> {
  const logger = o.logger ?? createLogger();
  // Loaded only with cluster credentials: the embedded default never loads the caches and their client code.
  const cluster = o.kube ? (await import('./cluster.ts')).connect(o.kube, logger) : undefined;
  const certs = o.certSource ?? certSource(o, cluster, logger);
  await certs.start();
  if (cluster && o.webhookConfigName) cluster.keepCaBundle(o.webhookConfigName, certs);
  const caDir = o.writeCaTo;
  if (caDir && certs.current().ca) {
    mkdirSync(caDir, { recursive: true });
    const writeCa = () => {
      const ca = certs.current().ca;
      if (ca !== undefined) writeFileSync(join(caDir, 'ca.crt'), ca);
    };
    writeCa();
    certs.onChange(writeCa);
  }

  const stops: Array<() => void> = [() => certs.stop()];
  let nodes: NodeFacts;
  let podNeeds: PodNeeds | undefined;
  let namespaces: NamespaceLabels | undefined;
  let synced: Promise<void> = Promise.resolve();
  // The configuration the handlers read: as given, or with the images the mesh says it injects (learnImages).
  let config = () => o.config;
  if (cluster) {
    const caches = cluster.startCaches(o.config);
    config = caches.config;
    stops.push(() => caches.stop());
    ({ nodes, podNeeds, namespaces, synced } = caches);
  } else if (o.nodeState) {
    nodes = o.nodeState;
  } else {
    certs.stop();
    throw new Error('startServer: node facts come from kube or nodeState, and neither was given');
  }

  const keys = o.markKeys && (await startMarkKeys(o.markKeys, cluster, logger));
  const marks = keys?.source;
  if (keys) stops.push(keys.stop);

  const metrics = createMetrics({ defaultMetrics: true });
  registerCertificateMetrics(metrics.registry, certs);
  registerNodeMetrics(metrics.registry, nodes);
  registerConfigMetrics(metrics.registry, o.config.config.apps);
  // Each exec or attach into a mesh container, as an Event on its pod (posted after the answer).
  const access = o.kube ? (await import('./access-events.ts')).kubeAccessEvents(o.kube, logger) : undefined;
  const routes = admissionRoutes({
    get config() {
      return config();
    },
    nodes,
    podNeeds,
    namespaces,
    onLookup: (source) => metrics.podLookups.inc({ source }),
    marker: marks,
    onAccess: access && ((a) => access.record(a)),
  });
  let closing = false;
  const app = buildApp({
    logger,
    metrics,
    onReview: o.onReview,
    https: { cert: certs.current().cert, key: certs.current().key },
    limits: resolveLimits(o.limits),
    routes: { ...routes, ...o.extraRoutes },
    ready: () => {
      if (closing) return { ready: false, why: 'shutting down' };
      if (!certs.healthy()) return { ready: false, why: 'no valid serving certificate' };
      if (!nodes.synced()) return { ready: false, why: 'node cache not synced' };
      const keys = marks?.healthy();
      if (keys && !keys.ok) return { ready: false, why: keys.why };
      return { ready: true };
    },
  });
  let served = certs.current().cert;
  certs.onChange((pair) => {
    // A change of the CA bundle alone (a CA rotation's first and last step) leaves the served pair as it is.
    if (pair.cert === served) return;
    served = pair.cert;
    (app.server as HttpsServer).setSecureContext(secureContextOptions(pair));
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
      drainer.endKeepAlive();
      await new Promise((r) => setTimeout(r, o.drainSeconds * 1000));
      await drainer.close(() => app.close());
      for (const stop of stops) stop();
      logger.info('shut down');
    },
  };
}
