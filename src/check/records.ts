/**
 * API objects reduced to the plain facts of facts.ts, read by their shape: `meshgate check` reads them through
 * @kubernetes/client-node (src/check/kube-reader.ts) and the repair controller through meshgate's own client
 * (src/repair/unmeshed/api.ts), and both must see the same facts. Pure.
 */
import type { Owner, WebhookEntry } from './facts.ts';
import type { PodRecord } from './facts.ts';
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
