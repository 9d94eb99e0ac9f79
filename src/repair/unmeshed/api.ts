/**
 * UnmeshedApi on a real apiserver, as the repair controller's service account: its MutatingWebhookConfiguration
 * (get, by name), pods (list, paged), namespaces from a watch (labels only; a label change that opts a namespace
 * in asks for a sweep at once), evictions (pods/eviction create, narrowed by the chart's eviction policy) and Events.
 */
import { istioOpenShiftProxyIds, type ProxyIds } from '../../mesh/istio-openshift.ts';
import type { Logger } from 'pino';
import type { NamespaceFacts, ReadError } from '../../check/facts.ts';
import { podRecord, webhookEntry, type PodLike, type WebhookLike } from '../../check/records.ts';
import type { KubeClient } from '../../kube/api/client.ts';
import { core, group } from '../../kube/api/paths.ts';
import { describeKubeError, KubeApiError, statusCode } from '../../kube/errors.ts';
import { createEvent } from '../../kube/events.ts';
import { LIST_PAGE, Reflector } from '../../kube/reflector.ts';
import type { UnmeshedApi } from './sweep.ts';
import { errorFields } from '../../log/fields.ts';

const COMPONENT = 'meshgate-repair-controller';

/** An API refusal (403 from RBAC, 500) is a ReadError the sweep reports; no answer at all is thrown. */
function readError(err: unknown): ReadError {
  if (err instanceof KubeApiError) return { error: describeKubeError(err) };
  throw err;
}

export function kubeUnmeshedApi(
  client: KubeClient,
  webhookConfig: string,
  namespaces: () => NamespaceFacts[],
): UnmeshedApi {
  return {
    async webhookConfig() {
      const path = group('admissionregistration.k8s.io/v1', 'mutatingwebhookconfigurations', { name: webhookConfig });
      try {
        const c = await client.get<{ webhooks?: WebhookLike[] }>(path);
        return { kind: 'mutating', name: webhookConfig, webhooks: (c.webhooks ?? []).map(webhookEntry) };
      } catch (err) {
        return statusCode(err) === 404 ? undefined : readError(err);
      }
    },
    namespaces: async () => namespaces(),
    async pods(namespace, each, labelSelector) {
      try {
        // Each pod parsed alone as it arrives and judged (a just opted-in namespace may hold thousands).
        await client.listItems<PodLike>(core('pods', { namespace }), LIST_PAGE, { labelSelector }, (p) =>
          each(podRecord(namespace, p)),
        );
        return undefined;
      } catch (err) {
        if (statusCode(err) === 404) return { error: `pods of ${namespace}: not found` };
        return readError(err);
      }
    },
    async evict(pod) {
      try {
        await client.create(
          core('pods', { namespace: pod.namespace, name: pod.name, sub: 'eviction' }),
          {
            apiVersion: 'policy/v1',
            kind: 'Eviction',
            metadata: { name: pod.name, namespace: pod.namespace },
            deleteOptions: { preconditions: { uid: pod.uid } },
          },
          // A PodDisruptionBudget's refusal is an answer, not overload: never retried here.
          { answers: [429] },
        );
        return 'evicted';
      } catch (err) {
        const code = statusCode(err);
        if (code === 429) return 'blocked';
        // 404: gone; 409: the UID precondition failed (another pod of that name now).
        if (code === 404 || code === 409) return 'gone';
        throw err;
      }
    },
    async event(pod, type, reason, message) {
      const involved = { kind: 'Pod' as const, name: pod.name, namespace: pod.namespace, uid: pod.uid };
      await createEvent(client, involved, { type, reason, message, component: COMPONENT });
    },
  };
}

/** Every namespace's labels, kept by a watch; `onChange(name)` when a namespace appears or its labels change. */
export async function watchNamespaces(
  client: KubeClient,
  onChange: (name: string) => void,
  logger: Logger,
): Promise<{ list(): NamespaceFacts[]; proxyIds(namespace: string): ProxyIds | undefined; stop(): void }> {
  let labels = new Map<string, Record<string, string>>();
  // Istio on OpenShift: the proxy's IDs each namespace's pods get (src/config/per-namespace.ts), two numbers.
  let ids = new Map<string, ProxyIds>();
  type Ns = { metadata?: { name?: string; labels?: Record<string, string>; annotations?: Record<string, string> } };
  const set = (n: Ns, into = labels, idsInto = ids): boolean => {
    const name = n.metadata?.name ?? '';
    const next = n.metadata?.labels ?? {};
    const prev = into.get(name);
    into.set(name, next);
    idsInto.set(name, istioOpenShiftProxyIds(n.metadata?.annotations));
    return prev === undefined || JSON.stringify(prev) !== JSON.stringify(next);
  };
  const reflector = new Reflector({
    client,
    path: core('namespaces'),
    list: () => {
      const next = new Map<string, Record<string, string>>();
      const nextIds = new Map<string, ProxyIds>();
      return {
        add: (n) => void set(n as Ns, next, nextIds),
        done: () => {
          labels = next;
          ids = nextIds;
        },
      };
    },
    upsert: (n) => {
      if (set(n as Ns)) onChange((n as Ns).metadata?.name ?? '');
    },
    remove: (n) => {
      labels.delete((n as Ns).metadata?.name ?? '');
      ids.delete((n as Ns).metadata?.name ?? '');
    },
    onError: (err) => logger.warn({ err: errorFields(err) }, 'namespace watch interrupted; resuming'),
  });
  await reflector.start();
  return {
    list: () => [...labels].map(([name, l]) => ({ name, labels: l, proxyIds: ids.get(name) })),
    proxyIds: (name) => ids.get(name),
    stop: () => reflector.stop(),
  };
}
