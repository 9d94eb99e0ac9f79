/**
 * API objects reduced to the plain facts of facts.ts, read by their shape: `meshgate check` reads them through
 * @kubernetes/client-node (src/check/kube-reader.ts) and the repair controller through meshgate's own client
 * (src/repair/unmeshed/api.ts), and both must see the same facts. Pure.
 */
import { istioOpenShiftProxyIds } from '../mesh/istio-openshift.ts';
import type { AgentPod, NamespaceFacts, Owner, PodRecord, WebhookEntry, WorkloadStatus } from './facts.ts';
import type { LabelSelector } from '../util/selector.ts';

interface OwnerRef {
  kind: string;
  name: string;
  controller?: boolean;
}

/** The controller ownerReference. */
export function controllerOf(refs: readonly OwnerRef[] | undefined): Owner | undefined {
  const c = refs?.find((r) => r.controller) ?? undefined;
  return c ? { kind: c.kind, name: c.name } : undefined;
}

export interface WebhookLike {
  name: string;
  clientConfig: {
    url?: string;
    service?: { namespace: string; name: string; port?: number; path?: string };
    caBundle?: string;
  };
  failurePolicy?: string;
  namespaceSelector?: object;
  objectSelector?: object;
}

export function webhookEntry(w: WebhookLike): WebhookEntry {
  const s = w.clientConfig.service;
  return {
    name: w.name,
    url: w.clientConfig.url,
    // The API defaults a Service's port to 443.
    service: s ? { namespace: s.namespace, name: s.name, port: s.port ?? 443, path: s.path } : undefined,
    caBundle: w.clientConfig.caBundle,
    failurePolicy: w.failurePolicy,
    namespaceSelector: w.namespaceSelector as LabelSelector | undefined,
    objectSelector: w.objectSelector as LabelSelector | undefined,
  };
}

export interface PodLike {
  metadata?: {
    name?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    deletionTimestamp?: unknown;
    ownerReferences?: readonly OwnerRef[];
  };
  spec?: { nodeName?: string };
  status?: { phase?: string };
}

export function podRecord(namespace: string, p: PodLike): PodRecord {
  return {
    namespace,
    name: p.metadata?.name ?? '',
    object: p,
    labels: p.metadata?.labels,
    annotations: p.metadata?.annotations,
    phase: p.status?.phase,
    deleting: p.metadata?.deletionTimestamp !== undefined,
    owner: controllerOf(p.metadata?.ownerReferences),
    nodeName: p.spec?.nodeName,
  };
}

/** A node agent's pod: where it runs and whether it is Ready. */
export function agentPod(p: PodLike & { status?: { conditions?: Array<{ type: string; status: string }> } }): AgentPod {
  const ready = p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
  return { name: p.metadata?.name ?? '', node: p.spec?.nodeName, ready, phase: p.status?.phase };
}

export interface NamespaceLike {
  metadata?: { name?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
}

export function namespaceFacts(ns: NamespaceLike): NamespaceFacts {
  return {
    name: ns.metadata?.name ?? '',
    labels: ns.metadata?.labels ?? {},
    proxyIds: istioOpenShiftProxyIds(ns.metadata?.annotations),
  };
}

interface WorkloadLike {
  spec?: { replicas?: number };
  status?: {
    desiredNumberScheduled?: number;
    numberReady?: number;
    numberAvailable?: number;
    updatedNumberScheduled?: number;
    readyReplicas?: number;
    availableReplicas?: number;
    updatedReplicas?: number;
  };
}

/** A DaemonSet's rollout numbers. */
export function daemonSetStatus(namespace: string, name: string, ds: Pick<WorkloadLike, 'status'>): WorkloadStatus {
  const st = ds.status;
  return {
    namespace,
    name,
    desired: st?.desiredNumberScheduled ?? 0,
    ready: st?.numberReady ?? 0,
    available: st?.numberAvailable ?? 0,
    updated: st?.updatedNumberScheduled ?? 0,
  };
}

/** A Deployment's rollout numbers (spec.replicas unset: 1). */
export function deploymentStatus(namespace: string, name: string, d: WorkloadLike): WorkloadStatus {
  const st = d.status;
  return {
    namespace,
    name,
    desired: d.spec?.replicas ?? 1,
    ready: st?.readyReplicas ?? 0,
    available: st?.availableReplicas ?? 0,
    updated: st?.updatedReplicas ?? 0,
  };
}

interface SliceLike {
  ports?: Array<{ name?: string }>;
  endpoints?: Array<{ conditions?: { ready?: boolean } }>;
}

/** The endpoints of a Service's EndpointSlices that serve its port named `portName`, ready or not. */
export function endpointCounts(slices: readonly SliceLike[], portName: string): { ready: number; notReady: number } {
  let ready = 0;
  let notReady = 0;
  for (const s of slices) {
    if (!(s.ports ?? []).some((p) => (p.name ?? '') === portName)) continue;
    // The API: a nil `ready` means ready.
    for (const e of s.endpoints ?? []) e.conditions?.ready === false ? notReady++ : ready++;
  }
  return { ready, notReady };
}
