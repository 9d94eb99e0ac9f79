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

export function kubeUninstallApi(kc: KubeConfig): UninstallApi {
  const core = kc.makeApiClient(CoreV1Api);
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
  };
}
