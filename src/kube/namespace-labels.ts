/**
 * Namespace labels fed by a watch on Namespaces, for Istio ambient's namespace selectors (src/ambient/enrolment.ts):
 * the admission path reads the map, never the API. Only the labels are kept (a name and a small map per namespace).
 * Started only when ambient is enabled; a namespace not seen yet is `undefined`, which the enrolment treats as
 * unknown (the pod is refused with a retryable message), never as unlabelled.
 */
import type { KubeClient } from './api/client.ts';
import { core } from './api/paths.ts';
import { Reflector } from './reflector.ts';

export interface NamespaceLabels {
  get(namespace: string): Readonly<Record<string, string>> | undefined;
}

interface NamespaceItem {
  metadata?: { name?: string; labels?: Record<string, string> };
}

export function startNamespaceLabels(
  client: KubeClient,
  onError?: (err: unknown) => void,
): NamespaceLabels & { ready: Promise<void>; stop(): void } {
  let labels = new Map<string, Readonly<Record<string, string>>>();
  const put = (item: unknown, into = labels) => {
    const m = (item as NamespaceItem).metadata;
    if (m?.name) into.set(m.name, Object.freeze({ ...(m.labels ?? {}) }));
  };
  const reflector = new Reflector({
    client,
    path: core('namespaces'),
    list: () => {
      const next = new Map<string, Readonly<Record<string, string>>>();
      return { add: (item) => put(item, next), done: () => (labels = next) };
    },
    upsert: (item) => put(item),
    remove: (item) => labels.delete((item as NamespaceItem).metadata?.name ?? ''),
    onError,
  });
  return { get: (ns) => labels.get(ns), ready: reflector.start(), stop: () => reflector.stop() };
}
