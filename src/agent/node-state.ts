/**
 * The contract between the node agent (writer) and everything that reads a node's CNI verdict (the webhook's
 * node cache, the scheduler via the optional taint, people with kubectl). Pure: names, how a Node object is read
 * back into a `PublishedState`, and whether it already says what a verdict would make it say.
 *
 * On the Node, for a verdict:
 * - label      `meshgate.io/cni-verified`: "true" | "false"                  (selectable, cheap to watch)
 * - condition  `MeshCNIVerified` in status.conditions: status "True"/"False", reason = the reason code,
 *              message = sentence + file + detail, lastTransitionTime (moves only when status flips),
 *              lastHeartbeatTime (the time of the last publish)
 * - annotation `meshgate.io/cni-evidence`: the verdict's evidence as compact JSON
 * - taint      `meshgate.io/cni-unverified:NoSchedule` while unverified, only with --taint-unverified.
 * A node without the label has never been judged: readers must treat that as "unknown", not as "false".
 * While the repair controller's quarantine mark is on the Node (src/node/quarantine.ts), the verdict published is
 * the agent's own overruled by it (`underQuarantine`): what is "up to date" is judged against that.
 */
import type { Node as V1Node } from '../kube/api/objects.ts';
import type { Evidence } from '../cni/types.ts';
import { QUARANTINE_ANNOTATION, type PublishedVerdict } from '../node/quarantine.ts';

import { CONDITION_TYPE, EVIDENCE_ANNOTATION, UNVERIFIED_TAINT, VERIFIED_LABEL } from '../contract/node.ts';

export { CONDITION_TYPE, EVIDENCE_ANNOTATION, UNVERIFIED_TAINT, VERIFIED_LABEL };

export interface PublishedCondition {
  status: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
  lastHeartbeatTime?: string;
}

/** What a Node currently says about its CNI verdict (only meshgate's keys). */
export interface PublishedState {
  label?: string;
  condition?: PublishedCondition;
  /** The raw annotation value. */
  evidence?: string;
  tainted: boolean;
  /** The repair controller's quarantine mark (raw annotation value), which the agent never writes. */
  quarantine?: string;
  /**
   * `status.nodeInfo.containerRuntimeVersion` as the kubelet reports it (e.g. "containerd://2.1.4"): which libcni
   * line reads the node's CNI files (src/cni/libcni-line.ts). Only what a read of the Node says; not meshgate's.
   */
  runtimeVersion?: string;
  /** The Node's UID as read (the owner of the agent's Lease); not meshgate's. */
  uid?: string;
}

export function observeNode(node: V1Node): PublishedState {
  const cond = node.status?.conditions?.find((c) => c.type === CONDITION_TYPE);
  const condition: PublishedCondition | undefined = cond && {
    status: cond.status,
    reason: cond.reason,
    message: cond.message,
    lastTransitionTime: timeString(cond.lastTransitionTime),
    lastHeartbeatTime: timeString(cond.lastHeartbeatTime),
  };
  return {
    label: node.metadata?.labels?.[VERIFIED_LABEL],
    condition,
    evidence: node.metadata?.annotations?.[EVIDENCE_ANNOTATION],
    tainted: hasUnverifiedTaint(node),
    quarantine: node.metadata?.annotations?.[QUARANTINE_ANNOTATION],
    runtimeVersion: node.status?.nodeInfo?.containerRuntimeVersion || undefined,
    uid: node.metadata?.uid,
  };
}

export function hasUnverifiedTaint(node: V1Node): boolean {
  return (node.spec?.taints ?? []).some((t) => t.key === UNVERIFIED_TAINT.key && t.effect === UNVERIFIED_TAINT.effect);
}

/** What the Node should say for a verdict. `taint` is whether the unverified taint is wanted at all. */
export function desiredState(verdict: PublishedVerdict, taint: boolean): PublishedState {
  return {
    label: String(verdict.verified),
    condition: { status: verdict.verified ? 'True' : 'False', reason: verdict.reason, message: verdict.message },
    evidence: evidenceJson(verdict.evidence),
    tainted: taint && !verdict.verified,
  };
}

export function evidenceJson(evidence: Evidence): string {
  return JSON.stringify(evidence);
}

/**
 * Whether the Node already says what the verdict would make it say. Times are not compared (`checkedAt`,
 * heartbeat, transition): a restart that re-derives the same verdict from the same files writes nothing.
 */
export function isUpToDate(published: PublishedState | undefined, verdict: PublishedVerdict, taint: boolean): boolean {
  if (!published) return false;
  const want = desiredState(verdict, taint);
  return (
    published.label === want.label &&
    published.condition?.status === want.condition?.status &&
    published.condition?.reason === want.condition?.reason &&
    published.condition?.message === want.condition?.message &&
    published.tainted === want.tainted &&
    published.evidence !== undefined &&
    timelessEvidence(published.evidence) === timelessEvidence(want.evidence ?? '')
  );
}

/** The evidence JSON without `checkedAt`, or the raw text when it is not our JSON. */
function timelessEvidence(json: string): string {
  try {
    const { checkedAt: _, ...rest } = JSON.parse(json) as Record<string, unknown>;
    return JSON.stringify(rest);
  } catch {
    return json;
  }
}

/** Kubernetes times as seconds-precision RFC 3339 (metav1.Time drops sub-seconds anyway). */
export function kubeTime(date: Date): string {
  return new Date(Math.floor(date.getTime() / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

function timeString(value: Date | string | undefined): string | undefined {
  if (value === undefined) return undefined;
  return typeof value === 'string' ? value : kubeTime(value);
}
