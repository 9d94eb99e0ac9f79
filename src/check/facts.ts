/**
 * The facts `meshgate check` reads from the cluster, as plain data: the reader (kube-reader.ts) fills them
 * through the API, the judges (judge-*.ts) turn them into results, and the unit tests write them by hand.
 * Only the fields a judge uses are kept, so 5,000 Nodes or 50,000 Pods never sit in memory as whole objects.
 */
import type { ProxyIds } from '../mesh/istio-openshift.ts';
import type { LabelSelector } from '../util/selector.ts';

/** A read that failed for a reason other than "not found" (403 forbidden, 500, …): the check says so. */
export interface ReadError {
  error: string;
}

export type Read<T> = T | ReadError | undefined;

export function isReadError(v: unknown): v is ReadError {
  return typeof v === 'object' && v !== null && typeof (v as ReadError).error === 'string';
}

export type WebhookKind = 'mutating' | 'validating';

export interface WebhookEntry {
  name: string;
  /** Exactly one of url or service (the API requires it). */
  url?: string;
  service?: { namespace: string; name: string; port: number; path?: string };
  /** Base64 of PEM, as in the API object; undefined or '' when empty. */
  caBundle?: string;
  failurePolicy?: string;
  namespaceSelector?: LabelSelector;
  objectSelector?: LabelSelector;
}

export interface WebhookConfig {
  kind: WebhookKind;
  name: string;
  webhooks: WebhookEntry[];
}

export interface ServicePort {
  name?: string;
  port: number;
}

/** A Service and the endpoints its EndpointSlices list for the port a webhook calls. */
export interface ServiceEndpoints {
  namespace: string;
  name: string;
  ports: ServicePort[];
  /** Endpoints (addresses) by readiness, for the port named like the called service port. */
  ready: number;
  notReady: number;
}

/** A TLS handshake with a webhook endpoint: the certificate it served, or why there was none. */
export interface TlsProbe {
  /** What was dialled, host:port. */
  target: string;
  /** The host the apiserver verifies the certificate for (URL host or the Service's DNS name). */
  host: string;
  /** PEM of the leaf and any intermediates the server sent, leaf first. */
  chain?: string[];
  error?: string;
}

export interface SecretCerts {
  namespace: string;
  name: string;
  /** tls.crt: the serving certificate, leaf first, then any intermediates. */
  tlsCrt?: string;
  /** ca.crt, when the Secret carries one (self-managed and cert-manager CA issuers do). */
  caCrt?: string;
}

export interface WorkloadStatus {
  namespace: string;
  name: string;
  desired: number;
  ready: number;
  available: number;
  updated: number;
}

/** A pod of the node agent DaemonSet. */
export interface AgentPod {
  name: string;
  node?: string;
  ready: boolean;
  phase?: string;
}

export interface NamespaceFacts {
  name: string;
  labels: Record<string, string>;
  /** The proxy's IDs Istio gives the namespace's pods on OpenShift (src/mesh/istio-openshift.ts). */
  proxyIds?: ProxyIds;
}

/** Who owns a pod, as its controller ownerReference says. */
export interface Owner {
  kind: string;
  name: string;
}

/** A pod as the check keeps it: what the judges read, not the whole object. */
export interface PodRecord {
  namespace: string;
  name: string;
  /** The pod as the API returned it (typed or plain JSON: parsePod checks the fields it reads). */
  object: unknown;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  phase?: string;
  deleting: boolean;
  /** The controller ownerReference. */
  owner?: Owner;
  nodeName?: string;
}
