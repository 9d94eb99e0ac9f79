/**
 * UnmeshedApi on a real apiserver, as the repair controller's service account: its MutatingWebhookConfiguration
 * (get, by name), pods (list, paged), namespaces from a watch (labels only; a label change that opts a namespace
 * in asks for a sweep at once), evictions (pods/eviction create, narrowed by the chart's eviction policy) and Events.
 */
import { ApiException, CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { KubeReader } from '../check/kube-reader.ts';
import type { NamespaceFacts } from '../check/facts.ts';
import { Reflector, type ListPage } from '../kube/reflector.ts';
import type { UnmeshedApi } from './unmeshed-sweep.ts';
import { errorFields } from '../log/fields.ts';

const COMPONENT = 'meshgate-repair-controller';

export function kubeUnmeshedApi(
  kc: KubeConfig,
  webhookConfig: string,
  namespaces: () => NamespaceFacts[],
): UnmeshedApi {
  const reader = new KubeReader(kc);
  const api = kc.makeApiClient(CoreV1Api);
  return {
    webhookConfig: () => reader.webhookConfig('mutating', webhookConfig),
    namespaces: async () => namespaces(),
    pods: (namespace, each, labelSelector) => reader.pods(namespace, each, labelSelector),
    async evict(pod) {
      try {
        await api.createNamespacedPodEviction({
          name: pod.name,
          namespace: pod.namespace,
          body: {
            apiVersion: 'policy/v1',
            kind: 'Eviction',
            metadata: { name: pod.name, namespace: pod.namespace },
            deleteOptions: { preconditions: { uid: pod.uid } },
          },
        });
        return 'evicted';
      } catch (err) {
        if (err instanceof ApiException && err.code === 429) return 'blocked';
        // 404: gone; 409: the UID precondition failed (another pod of that name now).
        if (err instanceof ApiException && (err.code === 404 || err.code === 409)) return 'gone';
        throw err;
      }
    },
    async event(pod, type, reason, message) {
      const now = new Date();
      await api.createNamespacedEvent({
        namespace: pod.namespace,
        body: {
          metadata: { generateName: `${pod.name}.`, namespace: pod.namespace },
          involvedObject: { apiVersion: 'v1', kind: 'Pod', name: pod.name, namespace: pod.namespace, uid: pod.uid },
          reason,
          message,
          type,
          source: { component: COMPONENT },
          firstTimestamp: now,
          lastTimestamp: now,
          count: 1,
        },
      });
    },
  };
}

/** Every namespace's labels, kept by a watch; `onChange(name)` when a namespace appears or its labels change. */
export async function watchNamespaces(
  kc: KubeConfig,
  onChange: (name: string) => void,
  logger: Logger,
): Promise<{ list(): NamespaceFacts[]; stop(): void }> {
  const api = kc.makeApiClient(CoreV1Api);
  const labels = new Map<string, Record<string, string>>();
  type Ns = { metadata?: { name?: string; labels?: Record<string, string> } };
  const set = (n: Ns): boolean => {
    const name = n.metadata?.name ?? '';
    const next = n.metadata?.labels ?? {};
    const prev = labels.get(name);
    labels.set(name, next);
    return prev === undefined || JSON.stringify(prev) !== JSON.stringify(next);
  };
  const reflector = new Reflector({
    kc,
    path: '/api/v1/namespaces',
    list: (p) => api.listNamespace({ limit: p.limit, _continue: p._continue }) as unknown as Promise<ListPage>,
    replace: (items) => {
      labels.clear();
      for (const n of items) set(n as Ns);
    },
    upsert: (n) => {
      if (set(n as Ns)) onChange((n as Ns).metadata?.name ?? '');
    },
    remove: (n) => labels.delete((n as Ns).metadata?.name ?? ''),
    onError: (err) => logger.warn({ err: errorFields(err) }, 'namespace watch interrupted; resuming'),
  });
  await reflector.start();
  return { list: () => [...labels].map(([name, l]) => ({ name, labels: l })), stop: () => reflector.stop() };
}
