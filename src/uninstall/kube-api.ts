/**
 * The Kubernetes calls `meshgate uninstall` makes, behind a small interface so src/uninstall/run.ts can be driven by
 * a fake in tests and by the real API here. Absent objects read as undefined; deletes carry a UID precondition, so
 * an object recreated meanwhile (by its controller, another release) is never the one deleted.
 */
import {
  AdmissionregistrationV1Api,
  ApiException,
  AppsV1Api,
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  type KubeConfig,
  PatchStrategy,
  setHeaderOptions,
  type V1Node,
  type V1ObjectMeta,
  type V1Pod,
  type V1Secret,
} from '@kubernetes/client-node';

export interface UninstallApi {
  /** Which of the two webhook configurations named `name` exist ("MutatingWebhookConfiguration", …). */
  webhookConfigurations(name: string): Promise<string[]>;
  /** The workload, or undefined when it is gone; `deleting` while it waits for garbage collection. */
  workload(
    kind: 'Deployment' | 'DaemonSet',
    namespace: string,
    name: string,
  ): Promise<{ deleting: boolean } | undefined>;
  pods(namespace: string): Promise<V1Pod[]>;
  /** Pending pods no node is bound to, in every namespace. */
  unboundPendingPods(): Promise<V1Pod[]>;
  deletePod(pod: V1Pod): Promise<void>;
  nodes(): Promise<V1Node[]>;
  node(name: string): Promise<V1Node | undefined>;
  /** JSON merge patch of the Node. */
  patchNode(name: string, patch: Record<string, unknown>): Promise<void>;
  /** Strategic merge patch of nodes/status. */
  patchNodeStatus(name: string, patch: Record<string, unknown>): Promise<void>;
  secret(namespace: string, name: string): Promise<V1Secret | undefined>;
  /** `uid`: of the Secret read, the delete's precondition. */
  deleteSecret(namespace: string, name: string, uid: string | undefined): Promise<void>;
  lease(namespace: string, name: string): Promise<{ metadata?: V1ObjectMeta } | undefined>;
  deleteLease(namespace: string, name: string, uid: string | undefined): Promise<void>;
  /** The namespaces carrying `label`, with its value. */
  labelledNamespaces(label: string): Promise<Array<{ name: string; value: string }>>;
  /** JSON merge patch removing one label of a namespace. */
  removeNamespaceLabel(name: string, label: string): Promise<void>;
  /** How many pods, in every namespace, carry `label`. */
  countPods(label: string): Promise<number>;
  /** The PolicyReports (wgpolicyk8s.io/v1alpha2) matching `selector`; [] when the apiserver serves none. */
  policyReports(selector: string): Promise<Array<{ metadata?: V1ObjectMeta }>>;
  deletePolicyReport(namespace: string, name: string, uid: string | undefined): Promise<void>;
}

const absent = (err: unknown) => err instanceof ApiException && err.code === 404;

async function orUndefined<T>(read: () => Promise<T>): Promise<T | undefined> {
  try {
    return await read();
  } catch (err) {
    if (absent(err)) return undefined;
    throw err;
  }
}

/** A delete of something already gone is done. */
async function deleted(del: () => Promise<unknown>): Promise<void> {
  try {
    await del();
  } catch (err) {
    if (!absent(err)) throw err;
  }
}

/** Lists page by page: a cluster's pods can be many. */
async function allPages<T>(list: (cont?: string) => Promise<{ items: T[]; metadata?: { _continue?: string } }>) {
  const items: T[] = [];
  let cont: string | undefined;
  do {
    const page = await list(cont);
    items.push(...page.items);
    cont = page.metadata?._continue || undefined;
  } while (cont);
  return items;
}

const PAGE = 500;

const REPORTS = { group: 'wgpolicyk8s.io', version: 'v1alpha2', plural: 'policyreports' } as const;

export function kubeUninstallApi(kc: KubeConfig): UninstallApi {
  const core = kc.makeApiClient(CoreV1Api);
  const custom = kc.makeApiClient(CustomObjectsApi);
  const apps = kc.makeApiClient(AppsV1Api);
  const coordination = kc.makeApiClient(CoordinationV1Api);
  const admission = kc.makeApiClient(AdmissionregistrationV1Api);
  const precondition = (uid: string | undefined) => ({ body: { preconditions: { uid } } });
  return {
    async webhookConfigurations(name) {
      const found: string[] = [];
      if (await orUndefined(() => admission.readMutatingWebhookConfiguration({ name })))
        found.push('MutatingWebhookConfiguration');
      if (await orUndefined(() => admission.readValidatingWebhookConfiguration({ name })))
        found.push('ValidatingWebhookConfiguration');
      return found;
    },
    async workload(kind, namespace, name) {
      const read =
        kind === 'Deployment'
          ? () => apps.readNamespacedDeployment({ name, namespace })
          : () => apps.readNamespacedDaemonSet({ name, namespace });
      const w = await orUndefined(read);
      return w && { deleting: w.metadata?.deletionTimestamp !== undefined };
    },
    pods: (namespace) => allPages((cont) => core.listNamespacedPod({ namespace, limit: PAGE, _continue: cont })),
    unboundPendingPods: () =>
      allPages((cont) =>
        core.listPodForAllNamespaces({
          fieldSelector: 'spec.nodeName=,status.phase=Pending',
          limit: PAGE,
          _continue: cont,
        }),
      ),
    async deletePod(pod) {
      // Pods come from a list of the apiserver, which names every one.
      const { name, namespace, uid } = pod.metadata ?? {};
      if (!name || !namespace) throw new Error('cannot delete a pod without metadata.name and metadata.namespace');
      await deleted(() => core.deleteNamespacedPod({ name, namespace, ...precondition(uid) }));
    },
    nodes: () => allPages((cont) => core.listNode({ limit: PAGE, _continue: cont })),
    node: (name) => orUndefined(() => core.readNode({ name })),
    async patchNode(name, body) {
      await core.patchNode({ name, body }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
    },
    async patchNodeStatus(name, body) {
      await core.patchNodeStatus({ name, body }, setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch));
    },
    secret: (namespace, name) => orUndefined(() => core.readNamespacedSecret({ name, namespace })),
    deleteSecret: (namespace, name, uid) =>
      deleted(() => core.deleteNamespacedSecret({ name, namespace, ...precondition(uid) })),
    lease: (namespace, name) => orUndefined(() => coordination.readNamespacedLease({ name, namespace })),
    deleteLease: (namespace, name, uid) =>
      deleted(() => coordination.deleteNamespacedLease({ name, namespace, ...precondition(uid) })),
    async labelledNamespaces(label) {
      const list = await allPages((cont) => core.listNamespace({ labelSelector: label, limit: PAGE, _continue: cont }));
      return list.map((n) => ({ name: n.metadata?.name ?? '', value: n.metadata?.labels?.[label] ?? '' }));
    },
    async removeNamespaceLabel(name, label) {
      await core.patchNamespace(
        { name, body: { metadata: { labels: { [label]: null } } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
    },
    async countPods(label) {
      const pods = await allPages((cont) =>
        core.listPodForAllNamespaces({ labelSelector: label, limit: PAGE, _continue: cont }),
      );
      return pods.length;
    },
    async policyReports(selector) {
      try {
        const list = (await custom.listClusterCustomObject({ ...REPORTS, labelSelector: selector })) as {
          items?: Array<{ metadata?: V1ObjectMeta }>;
        };
        return list.items ?? [];
      } catch (err) {
        // No PolicyReport CRD: nothing of meshgate's can be there.
        if (absent(err)) return [];
        throw err;
      }
    },
    deletePolicyReport: (namespace, name, uid) =>
      deleted(() =>
        custom.deleteNamespacedCustomObject({ ...REPORTS, namespace, name, body: { preconditions: { uid } } }),
      ),
  };
}
