/**
 * The webhook's cluster-backed parts: node and pod caches, certificates shared through a Secret, the caBundle kept
 * in step, the admission mark's Secret made when missing. start.ts loads this module only when it has cluster
 * credentials, so the embedded default (static node facts) loads none of it.
 */
import type { Logger } from 'pino';
import { withLearned } from '../config/learned.ts';
import { startLearnedImages } from '../kube/learned-images.ts';
import type { KubeClient } from '../kube/api/client.ts';
import type { Compiled } from '../config/compile.ts';
import { expectationsOf, type NodeFacts } from '../facts/node-facts.ts';
import { startNodeCache } from '../kube/node-cache.ts';
import { startNamespaceLabels, type NamespaceLabels } from '../kube/namespace-labels.ts';
import { startPodNeedCache, type PodNeeds } from '../kube/pod-mode-cache.ts';
import { configForNamespace } from '../config/per-namespace.ts';
import { kubeSecretStore } from '../kube/secret-store.ts';
import { caBundleHolds, syncCaBundle } from '../kube/ca-bundle.ts';
import { SecretSource } from '../tls/secret-source.ts';
import { ensureMarkKeySecret, type MarkSecretResult } from '../kube/mark-key-secret.ts';
import type { CertSource } from '../tls/source.ts';
import { errorFields } from '../log/fields.ts';

/** The cluster-backed parts, bound to one cluster's credentials and the server's logger. */
export interface Cluster {
  secretCertSource(secret: { namespace: string; name: string }, sans: string[], webhookConfigName?: string): CertSource;
  keepCaBundle(name: string, certs: CertSource): void;
  /** The caches the admission path reads, and the configuration with what the mesh says it injects (learnImages). */
  startCaches(config: Compiled): ClusterCaches;
  /**
   * Creates the admission mark's Secret with a fresh key unless it exists (src/kube/mark-key-secret.ts); a failure
   * is the client's error (src/kube/errors.ts).
   */
  ensureMarkKeySecret(secret: { namespace: string; name: string }): Promise<MarkSecretResult>;
}

export function connect(kube: KubeClient, logger: Logger): Cluster {
  return {
    secretCertSource: (secret, sans, webhookConfigName) =>
      secretCertSource(kube, secret, sans, webhookConfigName, logger),
    keepCaBundle: (name, certs) => keepCaBundle(kube, name, certs, logger),
    startCaches: (config) => startCaches(kube, config, logger),
    ensureMarkKeySecret: (secret) => ensureMarkKeySecret(kube, secret.namespace, secret.name),
  };
}

/** Self-managed certificates shared by replicas through a Secret; a new CA signs only once both configs trust it. */
function secretCertSource(
  kube: KubeClient,
  secret: { namespace: string; name: string },
  sans: string[],
  webhookConfigName: string | undefined,
  logger: Logger,
): CertSource {
  return new SecretSource({
    store: kubeSecretStore(kube, secret.namespace, secret.name),
    sans,
    where: `Secret ${secret.namespace}/${secret.name}`,
    log: logger,
    trustCheck: webhookConfigName ? (bundle) => caBundleHolds(kube, webhookConfigName, bundle) : undefined,
    onError: (err) => logger.error({ err: errorFields(err) }, 'certificate secret sync failed'),
  });
}

/** Patches our CA into the webhook configurations now and after every change, retrying every 10 s on failure. */
function keepCaBundle(kube: KubeClient, name: string, certs: CertSource, logger: Logger): void {
  let timer: NodeJS.Timeout | undefined;
  // A source without a CA (--cert-file without one) fails like an unreachable apiserver: logged, retried.
  const patch = async (): Promise<number> => {
    const ca = certs.current().ca;
    if (ca === undefined) throw new Error('the serving certificates carry no CA to put in the caBundle');
    return syncCaBundle(kube, name, ca);
  };
  const sync = () => {
    clearTimeout(timer);
    patch()
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
  /** The compiled configuration with the learned images (config.learnImages); the given one until then. */
  config(): Compiled;
  /** Istio ambient only (config ambient.enabled): the namespaces' labels its selectors read. */
  namespaces?: NamespaceLabels;
  /** Resolves once both caches have their first full list. */
  synced: Promise<void>;
  stop(): void;
}

/** Watch-backed node facts and pod needs: what the admission path reads instead of calling the API. */
function startCaches(kube: KubeClient, config: Compiled, logger: Logger): ClusterCaches {
  const cni = config.config.cni;
  // The agents' Leases live in meshgate's own namespace (src/contract/node.ts).
  const cache = startNodeCache(
    kube,
    expectationsOf(cni),
    (err) => logger.warn({ err: errorFields(err) }, 'node watch interrupted; resuming'),
    { leaseNamespace: config.config.meshNamespace },
  );
  cache.ready.catch((err) => logger.error({ err: errorFields(err) }, 'node list failed'));
  // The configuration the handlers read: as given, then with what the mesh says it injects, on each change.
  let current = config;
  const learnFrom = config.config.learnImages?.namespaces ?? [];
  const learned = learnFrom.length
    ? startLearnedImages(
        kube,
        config.profile,
        learnFrom,
        logger,
        (l) => {
          current = withLearned(config, l);
        },
        { ambient: config.config.ambient.enabled },
      )
    : undefined;
  // Namespaces are watched only for what needs them: ambient's selectors, Istio's OpenShift proxy IDs.
  const keep = { labels: config.config.ambient.enabled, proxyIds: config.config.proxy.idsFrom === 'openshift' };
  const namespaces =
    keep.labels || keep.proxyIds
      ? startNamespaceLabels(
          kube,
          (err) => logger.warn({ err: errorFields(err) }, 'namespace watch interrupted; resuming'),
          keep,
        )
      : undefined;
  namespaces?.ready.catch((err) => logger.error({ err: errorFields(err) }, 'namespace list failed'));
  // A pod is judged with its namespace's configuration (the OpenShift proxy IDs); one not known yet is judged with
  // the configured IDs, which refuses the binding of a pod whose proxy runs as others (the scheduler retries it).
  const configOf = (ns: string) => {
    const r = configForNamespace(current, ns, namespaces?.proxyIds);
    return r.ok ? r.cfg : current;
  };
  const pods = startPodNeedCache(
    kube,
    configOf,
    (err) => logger.warn({ err: errorFields(err) }, 'pod watch interrupted; resuming'),
    Promise.all([learned?.synced, namespaces?.ready]),
  );
  const synced = Promise.all([cache.ready, pods.ready, learned?.synced, namespaces?.ready]).then(() => undefined);
  // Each cache logs its own failure; a caller that never awaits synced must not crash on an unhandled rejection.
  synced.catch(() => undefined);
  return {
    nodes: cache.store,
    podNeeds: pods,
    config: () => current,
    namespaces,
    synced,
    stop() {
      cache.reflector.stop();
      pods.stop();
      learned?.stop();
      namespaces?.stop();
    },
  };
}
