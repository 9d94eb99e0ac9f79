/**
 * The level at which meshgate guards a namespace now, for the capture repair (src/repair/capture/controller.ts): read
 * as `meshgate check` and the unmeshed-pod sweep read it — meshgate's own MutatingWebhookConfiguration's entries
 * evaluated on the namespace's labels (src/check/judge-namespaces.ts), the level from the route of the entry that
 * selects it — never from anything on the pod. Undefined: no entry selects the whole namespace (a cluster admin took
 * it out, or only pod-label entries select it). Each read is two GETs, kept for TTL_MS: pods losing their capture
 * come in bursts of a namespace, which then costs two requests, not two per pod.
 */
import type { Level } from '../../admission/level.ts';
import { optedInNamespaces, wholeNamespace } from '../../check/judge-namespaces.ts';
import { type WebhookLike, webhookEntry } from '../../check/records.ts';
import type { KubeClient } from '../../kube/api/client.ts';
import { core, group } from '../../kube/api/paths.ts';
import { statusCode } from '../../kube/errors.ts';

/** Fresh enough for a decision to delete: a label change that takes a namespace out is seen within this. */
export const TTL_MS = 5_000;

type Cached<T> = { at: number; value: Promise<T> };

export function kubeLevelOf(
  client: KubeClient,
  webhookConfig: string,
  now: () => number = Date.now,
): (namespace: string) => Promise<Level | undefined> {
  let config: Cached<WebhookLike[] | undefined> | undefined;
  const labels = new Map<string, Cached<Record<string, string> | undefined>>();
  const fresh = <T>(c: Cached<T> | undefined): c is Cached<T> => c !== undefined && now() - c.at < TTL_MS;
  const notFound = (err: unknown) => {
    if (statusCode(err) === 404) return undefined;
    throw err;
  };
  const readConfig = () =>
    client
      .get<{ webhooks?: WebhookLike[] }>(
        group('admissionregistration.k8s.io/v1', 'mutatingwebhookconfigurations', { name: webhookConfig }),
      )
      .then((c) => c.webhooks ?? [], notFound);
  const readLabels = (name: string) =>
    client
      .get<{ metadata?: { labels?: Record<string, string> } }>(core('namespaces', { name }))
      .then((n) => n.metadata?.labels ?? {}, notFound);
  return async (namespace) => {
    if (!fresh(config)) config = { at: now(), value: readConfig() };
    let l = labels.get(namespace);
    if (!fresh(l)) {
      // Expired entries go once there are many (a burst across namespaces): the map stays as small as a burst.
      if (labels.size >= 256) for (const [k, v] of labels) if (!fresh(v)) labels.delete(k);
      l = { at: now(), value: readLabels(namespace) };
      labels.set(namespace, l);
    }
    const [webhooks, nsLabels] = await Promise.all([config.value, l.value]).catch((err) => {
      // A failed read is not kept: the next decision asks again.
      config = undefined;
      labels.delete(namespace);
      throw err;
    });
    if (webhooks === undefined || nsLabels === undefined) return undefined;
    const mutating = { kind: 'mutating' as const, name: webhookConfig, webhooks: webhooks.map(webhookEntry) };
    const [o] = optedInNamespaces([{ name: namespace, labels: nsLabels }], mutating, undefined);
    return o && wholeNamespace(o) ? o.level : undefined;
  };
}
