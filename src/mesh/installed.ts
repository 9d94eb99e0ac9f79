/**
 * Which of the mesh's ConfigMaps belong to an installed injector (issue 33 §8). A ConfigMap named like
 * istio-sidecar-injector-<revision> says what a revision's injector injects only if that injector exists: anyone who
 * may create ConfigMaps in the mesh's namespace could otherwise name another image, control plane or root, and the
 * webhook would trust it although no injector ever reads it. An injector exists when the apiserver calls it, so the
 * tie is its MutatingWebhookConfiguration (cluster-scoped, created by cluster admins and the mesh's installer):
 * - Istio (manifests/charts/istio-control/istio-discovery: mutatingwebhook.yaml, revision-tags): each webhook of a
 *   revision calls Service istiod[-<revision>] in istiod's namespace, and that revision's istiod reads
 *   istio-sidecar-injector[-<revision>] and its mesh config istio[-<revision>] there. A webhook that calls a URL (an
 *   external or remote istiod) names its revision by the configuration's label istio.io/rev (`default`: none), in any
 *   of the namespaces meshgate learns from.
 * - Linkerd (charts/linkerd-control-plane proxy-injector-rbac.yaml): the webhook calls Service
 *   linkerd-proxy-injector in the control plane's namespace, whose injector mounts linkerd-config and
 *   linkerd-identity-trust-roots of that namespace; one that calls a URL names that namespace by its label
 *   linkerd.io/control-plane-ns (and linkerd.io/control-plane-component: proxy-injector).
 * Pure: the configurations' relevant fields in, the trusted ConfigMaps out (as `namespace/name`; `*` for any of the
 * learned namespaces).
 */
import type { MeshName } from './types.ts';

/** What meshgate reads of a MutatingWebhookConfiguration. */
export interface WebhookConfigView {
  name: string;
  labels: Readonly<Record<string, string>>;
  /** Each webhook's clientConfig: the Service it calls, or a URL. */
  clients: ReadonlyArray<{ service?: { namespace: string; name: string }; url?: string }>;
}

/** The trusted ConfigMap keys (`namespace/name`, or `*\/name` for any learned namespace). */
export function installedConfigMaps(mesh: MeshName, configs: Iterable<WebhookConfigView>): Set<string> {
  const out = new Set<string>();
  const istioRevision = (ns: string, rev: string) => {
    const suffix = rev && rev !== 'default' ? `-${rev}` : '';
    out.add(`${ns}/istio-sidecar-injector${suffix}`);
    out.add(`${ns}/istio${suffix}`);
  };
  for (const c of configs) {
    for (const client of c.clients) {
      const svc = client.service;
      if (mesh === 'istio') {
        const m = svc ? /^istiod(?:-(.+))?$/.exec(svc.name) : undefined;
        if (svc && m) istioRevision(svc.namespace, m[1] ?? '');
        else if (client.url !== undefined && c.labels['istio.io/rev'] !== undefined)
          istioRevision('*', c.labels['istio.io/rev']);
      } else if (mesh === 'linkerd') {
        // The Service it calls, or for a URL the chart's label naming the control plane's namespace.
        const ns =
          svc?.name === 'linkerd-proxy-injector'
            ? svc.namespace
            : client.url !== undefined && c.labels['linkerd.io/control-plane-component'] === 'proxy-injector'
              ? c.labels['linkerd.io/control-plane-ns']
              : undefined;
        if (ns) {
          out.add(`${ns}/linkerd-config`);
          out.add(`${ns}/linkerd-identity-trust-roots`);
        }
      }
    }
  }
  return out;
}

/** Whether the ConfigMap `namespace/name` is one of `installed`'s. */
export function isInstalled(installed: ReadonlySet<string>, namespace: string, name: string): boolean {
  return installed.has(`${namespace}/${name}`) || installed.has(`*/${name}`);
}

/** A MutatingWebhookConfiguration as the API returns it, reduced to what installedConfigMaps reads. */
export function webhookConfigView(o: unknown): WebhookConfigView | undefined {
  const obj = o as {
    metadata?: { name?: string; labels?: Record<string, string> };
    webhooks?: Array<{ clientConfig?: { service?: { namespace?: string; name?: string }; url?: string } }>;
  };
  const name = obj?.metadata?.name;
  if (typeof name !== 'string') return undefined;
  const clients = (Array.isArray(obj.webhooks) ? obj.webhooks : []).map((w) => {
    const s = w?.clientConfig?.service;
    return {
      ...(s && typeof s.namespace === 'string' && typeof s.name === 'string'
        ? { service: { namespace: s.namespace, name: s.name } }
        : {}),
      ...(typeof w?.clientConfig?.url === 'string' ? { url: w.clientConfig.url } : {}),
    };
  });
  return { name, labels: obj.metadata?.labels ?? {}, clients };
}
