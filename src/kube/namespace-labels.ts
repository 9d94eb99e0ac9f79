/**
 * What the admission path needs to know of namespaces, fed by a watch on Namespaces (the admission path reads the map,
 * never the API), projected to the least each user needs:
 * - labels, for Istio ambient's namespace selectors (src/policy/ambient/enrolment.ts): kept when ambient is enabled;
 * - the proxy's UID/GID istiod gives the namespace's pods on OpenShift (src/mesh/istio-openshift.ts), two numbers
 *   derived from its openshift.io/sa.scc.* annotations: kept with `proxy.idsFrom: openshift`.
 * A namespace not seen yet is `undefined` for both, which their users treat as unknown (the pod is refused with a
 * retryable message), never as unlabelled or as the default IDs.
 */
import { istioOpenShiftProxyIds, type ProxyIds } from '../mesh/istio-openshift.ts';
import type { KubeClient } from './api/client.ts';
import { core } from './api/paths.ts';
import { Reflector } from './reflector.ts';

export interface NamespaceLabels {
  get(namespace: string): Readonly<Record<string, string>> | undefined;
  /** The proxy's IDs on OpenShift; undefined when not kept, or the namespace is not known yet. */
  proxyIds?(namespace: string): ProxyIds | undefined;
}

interface NamespaceItem {
  metadata?: { name?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
}

/** What to keep per namespace. */
export interface NamespaceProjection {
  labels: boolean;
  proxyIds: boolean;
}

interface Kept {
  readonly labels?: Readonly<Record<string, string>>;
  readonly proxyIds?: ProxyIds;
}

const NONE: Readonly<Record<string, string>> = Object.freeze({});

export function startNamespaceLabels(
  client: KubeClient,
  onError?: (err: unknown) => void,
  keep: NamespaceProjection = { labels: true, proxyIds: false },
): NamespaceLabels & { ready: Promise<void>; stop(): void } {
  let kept = new Map<string, Kept>();
  const put = (item: unknown, into = kept) => {
    const m = (item as NamespaceItem).metadata;
    if (!m?.name) return;
    into.set(m.name, {
      ...(keep.labels ? { labels: m.labels ? Object.freeze({ ...m.labels }) : NONE } : {}),
      ...(keep.proxyIds ? { proxyIds: Object.freeze(istioOpenShiftProxyIds(m.annotations)) } : {}),
    });
  };
  const reflector = new Reflector({
    client,
    path: core('namespaces'),
    list: () => {
      const next = new Map<string, Kept>();
      return { add: (item) => put(item, next), done: () => (kept = next) };
    },
    upsert: (item) => put(item),
    remove: (item) => kept.delete((item as NamespaceItem).metadata?.name ?? ''),
    onError,
  });
  return {
    get: (ns) => kept.get(ns)?.labels,
    proxyIds: (ns) => kept.get(ns)?.proxyIds,
    ready: reflector.start(),
    stop: () => reflector.stop(),
  };
}
