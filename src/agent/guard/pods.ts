/**
 * Which pods on this node the proxy-identity guard watches, reduced to what it needs (the agent keeps this
 * projection, never the pods): a pod meshgate admitted as meshed — its `meshgate.io/status` annotation or its
 * admission mark `meshgate.io/admitted` — with the containers that may run as the proxy (the mesh's own, by the
 * profile's names and the names meshgate's status lists; the validating webhook judged each of those field by
 * field), the identity its redirect exempts, and its containers' runtime IDs from the kubelet's status.
 *
 * A pod author can write either annotation on a pod meshgate never saw: that only puts the pod under the guard.
 */
import { STATUS_ANNOTATION } from '../../contract/names.ts';
import { ADMITTED_ANNOTATION } from '../../mark/mark.ts';
import { readStatus } from '../../policy/status.ts';

/** The fields of a Pod the guard reads, as the API serves them. */
export interface GuardPodFields {
  metadata?: { name?: string; namespace?: string; uid?: string; annotations?: Record<string, string> };
  spec?: {
    nodeName?: string;
    containers?: SpecContainer[];
    initContainers?: SpecContainer[];
    ephemeralContainers?: SpecContainer[];
  };
  status?: {
    containerStatuses?: ContainerStatus[];
    initContainerStatuses?: ContainerStatus[];
    ephemeralContainerStatuses?: ContainerStatus[];
  };
}

interface SpecContainer {
  name?: string;
  securityContext?: { runAsUser?: number; runAsGroup?: number };
}

export interface ContainerStatus {
  name?: string;
  containerID?: string;
  /** KEP-3619: the identity the runtime gave the container's first process (kubelet ≥ 1.31 and a runtime that says). */
  user?: { linux?: { uid?: number; gid?: number } };
  state?: { waiting?: { reason?: string; message?: string } };
}

/** What the guard needs of the configuration: the mesh's container names and the identity its redirect exempts. */
export interface GuardView {
  /** The profile's names for the proxy, its init container and the validator. */
  meshNames: ReadonlySet<string>;
  proxyName: string;
  proxyUid: number;
  proxyGid?: number;
  /** GIDs a pod's own annotations add to the exemption (Linkerd's `config.linkerd.io/proxy-gid`). */
  exemptGids(annotations: Readonly<Record<string, string>>): readonly number[];
}

export interface GuardedPod {
  uid: string;
  namespace: string;
  name: string;
  /** Containers that may run as the proxy: the mesh's. */
  exempt: ReadonlySet<string>;
  /** The identity the pod's redirect exempts. */
  uids: ReadonlySet<number>;
  gids: ReadonlySet<number>;
  /** Runtime container ID → container name, from the kubelet's status. */
  containers: ReadonlyMap<string, string>;
  /** Container name → the identity the runtime reports it started with (KEP-3619), where it reports one. */
  users: ReadonlyMap<string, { uid?: number; gid?: number }>;
  /** Containers the runtime refused to create, with the kubelet's message (the NRI plugin's refusal among them). */
  waiting: ReadonlyMap<string, { reason: string; message: string }>;
}

/** `containerd://<id>`, `cri-o://<id>` → `<id>`. */
export function runtimeId(containerID: string | undefined): string | undefined {
  const at = containerID?.indexOf('://') ?? -1;
  return at < 0 ? undefined : containerID?.slice(at + 3) || undefined;
}

/** The guard's projection of a pod; undefined when meshgate did not admit it as meshed (not watched). */
export function guardOf(pod: GuardPodFields, view: GuardView): GuardedPod | undefined {
  const annotations = pod.metadata?.annotations ?? {};
  const uid = pod.metadata?.uid;
  if (!uid || (annotations[STATUS_ANNOTATION] === undefined && annotations[ADMITTED_ANNOTATION] === undefined))
    return undefined;
  const exempt = new Set(view.meshNames);
  const status = readStatus(annotations);
  if (status && !('error' in status)) for (const n of [...status.initContainers, ...status.containers]) exempt.add(n);
  const specs = [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])];
  const uids = new Set([view.proxyUid]);
  const gids = new Set(view.proxyGid === undefined ? [] : [view.proxyGid]);
  // The proxy's own runAsUser is the UID its redirect exempts (istio-cni and istio-init read it; OpenShift's
  // per-namespace UIDs land there): the validating webhook judged that container, so its value is the mesh's.
  for (const c of specs) {
    if (c.name !== view.proxyName) continue;
    if (c.securityContext?.runAsUser !== undefined) uids.add(c.securityContext.runAsUser);
    if (view.proxyGid !== undefined && c.securityContext?.runAsGroup !== undefined)
      gids.add(c.securityContext.runAsGroup);
  }
  for (const g of view.exemptGids(annotations)) gids.add(g);
  const containers = new Map<string, string>();
  const users = new Map<string, { uid?: number; gid?: number }>();
  const waiting = new Map<string, { reason: string; message: string }>();
  const statuses = [
    ...(pod.status?.initContainerStatuses ?? []),
    ...(pod.status?.containerStatuses ?? []),
    ...(pod.status?.ephemeralContainerStatuses ?? []),
  ];
  for (const s of statuses) {
    if (!s.name) continue;
    const id = runtimeId(s.containerID);
    if (id) containers.set(id, s.name);
    const linux = s.user?.linux;
    if (linux) users.set(s.name, { uid: linux.uid, gid: linux.gid });
    const w = s.state?.waiting;
    if (w?.reason) waiting.set(s.name, { reason: w.reason, message: w.message ?? '' });
  }
  return {
    uid,
    namespace: pod.metadata?.namespace ?? '',
    name: pod.metadata?.name ?? '',
    exempt,
    uids,
    gids,
    containers,
    users,
    waiting,
  };
}
