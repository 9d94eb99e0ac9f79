/**
 * The webhook's cluster-backed parts: node and pod caches, certificates shared through a Secret, the caBundle kept
 * in step, the admission mark's Secret made when missing. start.ts loads this module only when it has cluster credentials, so the embedded default (static node
 * facts) never loads @kubernetes/client-node, the largest thing in the process (~80 MiB resident).
 */
import type { Logger } from 'pino';
import type { KubeConfig } from '@kubernetes/client-node';
import type { Compiled } from '../config/compile.ts';
import type { NodeFacts } from '../facts/node-facts.ts';
import { startNodeCache } from '../kube/node-cache.ts';
import { startPodNeedCache, type PodNeeds } from '../kube/pod-mode-cache.ts';
import { kubeSecretStore } from '../kube/secret-store.ts';
import { caBundleHolds, syncCaBundle } from '../kube/ca-bundle.ts';
import { describeKubeError } from '../kube/errors.ts';
import { SecretSource } from '../tls/secret-source.ts';
import { ensureMarkKeySecret, type MarkSecretResult } from '../kube/mark-key-secret.ts';
import type { CertSource } from '../tls/source.ts';
import { errorFields } from '../log/fields.ts';

/** The cluster-backed parts, bound to one cluster's credentials and the server's logger. */
export interface Cluster {
  secretCertSource(secret: { namespace: string; name: string }, sans: string[], webhookConfigName?: string): CertSource;
  keepCaBundle(name: string, certs: CertSource): void;
  startCaches(config: Compiled): ClusterCaches;
  /**
   * Creates the admission mark's Secret with a fresh key unless it exists (src/kube/mark-key-secret.ts); a failure
   * is an Error whose message describes the API's answer in one line.
   */
  ensureMarkKeySecret(secret: { namespace: string; name: string }): Promise<MarkSecretResult>;
}

export function connect(kc: KubeConfig, logger: Logger): Cluster {
  return {
    secretCertSource: (secret, sans, webhookConfigName) =>
      secretCertSource(kc, secret, sans, webhookConfigName, logger),
    keepCaBundle: (name, certs) => keepCaBundle(kc, name, certs, logger),
    startCaches: (config) => startCaches(kc, config, logger),
    ensureMarkKeySecret: (secret) =>
      ensureMarkKeySecret(kc, secret.namespace, secret.name).catch((err: unknown) => {
        throw new Error(describeKubeError(err));
      }),
  };
}

/** Self-managed certificates shared by replicas through a Secret; a new CA signs only once both configs trust it. */
function secretCertSource(
  kc: KubeConfig,
  secret: { namespace: string; name: string },
  sans: string[],
  webhookConfigName: string | undefined,
  logger: Logger,
): CertSource {
  return new SecretSource({
    store: kubeSecretStore(kc, secret.namespace, secret.name),
    sans,
    where: `Secret ${secret.namespace}/${secret.name}`,
    log: logger,
    trustCheck: webhookConfigName ? (bundle) => caBundleHolds(kc, webhookConfigName, bundle) : undefined,
    onError: (err) => logger.error({ err: errorFields(err) }, 'certificate secret sync failed'),
  });
}

/** Patches our CA into the webhook configurations now and after every change, retrying every 10 s on failure. */
function keepCaBundle(kc: KubeConfig, name: string, certs: CertSource, logger: Logger): void {
  let timer: NodeJS.Timeout | undefined;
  const sync = () => {
    clearTimeout(timer);
    syncCaBundle(kc, name, certs.current().ca!)
      .then((n) => n > 0 && logger.info({ webhookConfig: name, patched: n }, 'caBundle updated'))
      .catch((err) => {
        logger.warn({ err: errorFields(err), webhookConfig: name }, 'caBundle update failed; retrying in 10 s');
        timer = setTimeout(sync, 10_000);
        timer.unref();
      });
  };
  certs.onChange(sync);
  sync();
}

export interface ClusterCaches {
  nodes: NodeFacts;
  podNeeds: PodNeeds;
  /** Resolves once both caches have their first full list. */
  synced: Promise<void>;
  stop(): void;
}

/** Watch-backed node facts and pod needs: what the admission path reads instead of calling the API. */
function startCaches(kc: KubeConfig, config: Compiled, logger: Logger): ClusterCaches {
  const cni = config.config.cni;
  const cache = startNodeCache(
    kc,
    { pluginType: cni.pluginType, maxVerdictAgeMs: cni.maxVerdictAgeSeconds * 1000 },
    (err) => logger.warn({ err: errorFields(err) }, 'node watch interrupted; resuming'),
  );
  cache.ready.catch((err) => logger.error({ err: errorFields(err) }, 'node list failed'));
  const pods = startPodNeedCache(kc, config, (err) =>
    logger.warn({ err: errorFields(err) }, 'pod watch interrupted; resuming'),
  );
  const synced = Promise.all([cache.ready, pods.ready]).then(() => undefined);
  // Each cache logs its own failure; a caller that never awaits synced must not crash on an unhandled rejection.
  synced.catch(() => undefined);
  return {
    nodes: cache.store,
    podNeeds: pods,
    synced,
    stop() {
      cache.reflector.stop();
      pods.stop();
    },
  };
}
