/**
 * The parts of Kubernetes objects the daemons read and write, as the apiserver's JSON has them (times are RFC 3339
 * strings, never Dates). Only the fields meshgate uses are declared; the rest travel along untyped.
 */

export interface KubeObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  deletionTimestamp?: string;
  creationTimestamp?: string;
  ownerReferences?: Array<{ apiVersion?: string; kind: string; name: string; uid?: string; controller?: boolean }>;
}

export interface Taint {
  key: string;
  value?: string;
  effect: string;
  timeAdded?: string;
}

export interface NodeCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastHeartbeatTime?: string;
  lastTransitionTime?: string;
}

export interface Node {
  apiVersion?: string;
  kind?: string;
  metadata?: KubeObjectMeta;
  spec?: { taints?: Taint[]; unschedulable?: boolean };
  status?: { conditions?: NodeCondition[]; nodeInfo?: { kubeletVersion?: string; containerRuntimeVersion?: string } };
}

export interface KubeContainerStatus {
  name: string;
  state?: {
    terminated?: { exitCode?: number; reason?: string; message?: string };
    waiting?: { reason?: string; message?: string };
    running?: { startedAt?: string };
  };
}

/** A Pod as sent or read; its spec is judged elsewhere from its own types (src/pod). */
export interface KubePod {
  apiVersion?: string;
  kind?: string;
  metadata?: KubeObjectMeta;
  spec?: Record<string, unknown> & { nodeName?: string };
  status?: {
    phase?: string;
    reason?: string;
    message?: string;
    conditions?: Array<{ type: string; status: string }>;
    initContainerStatuses?: KubeContainerStatus[];
    containerStatuses?: KubeContainerStatus[];
  };
}

export interface Lease {
  apiVersion?: string;
  kind?: string;
  metadata?: KubeObjectMeta;
  spec?: {
    holderIdentity?: string;
    leaseDurationSeconds?: number;
    /** MicroTime: RFC 3339 with microseconds. */
    acquireTime?: string;
    renewTime?: string;
    leaseTransitions?: number;
  };
}

export interface KubeSecret {
  apiVersion?: string;
  kind?: string;
  metadata?: KubeObjectMeta;
  type?: string;
  /** base64 values. */
  data?: Record<string, string>;
}
