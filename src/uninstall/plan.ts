/**
 * What `meshgate uninstall` removes, decided from objects as read (pure; src/uninstall/run.ts does the I/O). Only
 * what meshgate made at run time, which helm never knew: its keys on Nodes (src/contract/node.ts,
 * src/node/quarantine.ts), the Secrets and the Lease its components created, its own bare pods (quarantine probes,
 * a failed `helm test` pod), and app pods it pinned to verified nodes that no node will ever be again.
 */
import type { V1Node, V1OwnerReference, V1Pod, V1Secret, V1Taint } from '@kubernetes/client-node';
import { CONDITION_TYPE, EVIDENCE_ANNOTATION, UNVERIFIED_TAINT, VERIFIED_LABEL } from '../contract/node.ts';
import { QUARANTINE_ANNOTATION, QUARANTINE_HISTORY_ANNOTATION } from '../node/quarantine.ts';
import { PROBE_LABEL } from '../repair/quarantine/probe-pod.ts';

/** What meshgate's components put on the objects they create (src/kube/secret-store.ts, lease-store.ts, …). */
export const MADE_BY_MESHGATE = { key: 'app.kubernetes.io/managed-by', value: 'meshgate' } as const;
/** cert-manager's record of the Certificate a Secret was issued for. */
const CERT_MANAGER_CERTIFICATE = 'cert-manager.io/certificate-name';

/** The chart's names for one release (charts/meshgate/templates/_helpers.tpl), from its full name. */
export interface Names {
  namespace: string;
  /** The chart's full name: the webhook Deployment, its Service and both webhook configurations. */
  name: string;
  nodeAgent: string;
  repairController: string;
  tlsSecret: string;
  markSecret: string;
  /** The repair controller's leader-election Lease. */
  lease: string;
  /** cert-manager's Certificate (certs.mode=cert-manager), whose Secret is tlsSecret. */
  certificate: string;
  /** The `helm test` pod. */
  testPod: string;
}

export function chartNames(namespace: string, name: string, markSecret?: string): Names {
  return {
    namespace,
    name,
    nodeAgent: `${name}-node-agent`,
    repairController: `${name}-repair-controller`,
    tlsSecret: `${name}-tls`,
    markSecret: markSecret ?? `${name}-admission-mark`,
    lease: `${name}-repair-controller`,
    certificate: `${name}-serving`,
    testPod: `${name}-test`,
  };
}

const NODE_ANNOTATIONS = [EVIDENCE_ANNOTATION, QUARANTINE_ANNOTATION, QUARANTINE_HISTORY_ANNOTATION] as const;

export interface NodeCleanup {
  /** What the Node carries of meshgate's, as the output names it ("label meshgate.io/cni-verified", …). */
  removes: string[];
  /**
   * JSON merge patch of labels, annotations and, when the taint is there, spec.taints. Merge patch replaces a list
   * whole, so a taints change carries the resourceVersion it was computed from: another writer's taint added meanwhile
   * makes it fail (409) instead of being dropped, and the caller re-reads.
   */
  node?: Record<string, unknown>;
  /** Strategic merge patch of nodes/status: conditions merge by type, so the kubelet's are left alone. */
  status?: Record<string, unknown>;
}

/** meshgate's keys on a Node and the patches that remove them; undefined when it carries none. */
export function nodeCleanup(node: V1Node): NodeCleanup | undefined {
  const removes: string[] = [];
  const metadata: Record<string, unknown> = {};
  if (node.metadata?.labels?.[VERIFIED_LABEL] !== undefined) {
    metadata.labels = { [VERIFIED_LABEL]: null };
    removes.push(`label ${VERIFIED_LABEL}`);
  }
  const annotations = NODE_ANNOTATIONS.filter((a) => node.metadata?.annotations?.[a] !== undefined);
  if (annotations.length > 0) {
    metadata.annotations = Object.fromEntries(annotations.map((a) => [a, null]));
    removes.push(...annotations.map((a) => `annotation ${a}`));
  }
  const patch: Record<string, unknown> = {};
  const taints = node.spec?.taints ?? [];
  if (taints.some((t) => t.key === UNVERIFIED_TAINT.key)) {
    patch.spec = { taints: taints.filter((t) => t.key !== UNVERIFIED_TAINT.key).map(plainTaint) };
    metadata.resourceVersion = node.metadata?.resourceVersion;
    removes.push(`taint ${UNVERIFIED_TAINT.key}`);
  }
  if (Object.keys(metadata).length > 0) patch.metadata = metadata;
  const hasCondition = (node.status?.conditions ?? []).some((c) => c.type === CONDITION_TYPE);
  if (hasCondition) removes.push(`condition ${CONDITION_TYPE}`);
  if (removes.length === 0) return undefined;
  return {
    removes,
    node: patch.metadata ? patch : undefined,
    status: hasCondition ? { status: { conditions: [{ type: CONDITION_TYPE, $patch: 'delete' }] } } : undefined,
  };
}

/** A taint as the API takes it back (client-node's V1Taint turns timeAdded into a Date). */
function plainTaint(t: V1Taint): Record<string, unknown> {
  return {
    key: t.key,
    effect: t.effect,
    ...(t.value === undefined ? {} : { value: t.value }),
    ...(t.timeAdded === undefined ? {} : { timeAdded: new Date(t.timeAdded).toISOString() }),
  };
}

/**
 * A pod no node will take once meshgate's label is gone: Pending, not bound, with a required node selector term
 * naming meshgate.io/cni-verified (what src/policy/mutate/patch.ts requireNodeLabel adds; terms are ORed, so every term
 * needs it for the pod to depend on it).
 */
export function pinnedByMeshgate(pod: V1Pod): boolean {
  if (pod.status?.phase !== 'Pending' || pod.spec?.nodeName) return false;
  const terms = pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
  return (
    terms !== undefined &&
    terms.length > 0 &&
    terms.every((t) => (t.matchExpressions ?? []).some((e) => e.key === VERIFIED_LABEL))
  );
}

/** The pod's controller (a DaemonSet, ReplicaSet, Job, …), which recreates it when it is deleted. */
export function controllerOf(pod: V1Pod): V1OwnerReference | undefined {
  return pod.metadata?.ownerReferences?.find((o) => o.controller === true);
}

/**
 * The meshgate workload a pod of its namespace belongs to: the node agent DaemonSet's pods name it as their owner;
 * a Deployment's pods name its ReplicaSet, `<deployment>-<pod-template-hash>` (the hash is the pod's label), so
 * names sharing a prefix (meshgate, meshgate-repair-controller) are told apart exactly.
 */
export function workloadOf(pod: V1Pod, n: Names): string | undefined {
  const owner = controllerOf(pod);
  if (!owner) return undefined;
  if (owner.kind === 'DaemonSet') return owner.name === n.nodeAgent ? n.nodeAgent : undefined;
  const hash = pod.metadata?.labels?.['pod-template-hash'];
  if (owner.kind !== 'ReplicaSet' || !hash) return undefined;
  return [n.name, n.repairController].find((d) => owner.name === `${d}-${hash}`);
}

/** meshgate's own bare pods, which nothing deletes: quarantine probe pods, a failed `helm test` pod. */
export function ownBarePod(pod: V1Pod, n: Names): boolean {
  if (controllerOf(pod)) return false;
  return pod.metadata?.labels?.[PROBE_LABEL] === 'true' || pod.metadata?.name === n.testPod;
}

export type Ownership = { ours: true; by: string } | { ours: false; why: string };

/** Whether meshgate made this Secret (or Lease): only then does uninstall delete it. */
export function madeByMeshgate(o: V1Secret | { metadata?: V1Secret['metadata'] }, n: Names): Ownership {
  const meta = o.metadata;
  if (meta?.labels?.[MADE_BY_MESHGATE.key] === MADE_BY_MESHGATE.value) return { ours: true, by: 'meshgate' };
  if (meta?.name === n.tlsSecret && meta.annotations?.[CERT_MANAGER_CERTIFICATE] === n.certificate)
    return { ours: true, by: `cert-manager, for meshgate's Certificate ${n.certificate}` };
  return {
    ours: false,
    why: `not made by meshgate (no label ${MADE_BY_MESHGATE.key}=${MADE_BY_MESHGATE.value}): yours, kept`,
  };
}
