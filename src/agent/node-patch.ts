/**
 * The two patches that publish a verdict on a Node, built directly (never by diffing whole Nodes). Pure.
 *
 * - `node`: a JSON merge patch (application/merge-patch+json) of the label, the evidence annotation and, only when
 *   the taint must be added or removed, `spec.taints`. Merge patch replaces lists whole, so a taints change
 *   carries the `resourceVersion` it was computed from: the apiserver refuses it (409) if another writer changed
 *   the Node meanwhile, and the publisher re-reads and retries instead of dropping someone else's taint.
 * - `status`: a strategic merge patch (application/strategic-merge-patch+json) of the nodes/status subresource.
 *   `status.conditions` merges by `type` under strategic merge, so the kubelet's conditions are left alone; a
 *   merge patch would replace the whole list.
 * The repair controller's quarantine mark on the Node as read overrules a verified verdict (src/node/quarantine.ts).
 * A patch that makes the label "true" also carries the resourceVersion it was computed from: if the repair controller
 * withdrew the node between the agent's read and its write, the write fails (409) instead of undoing the withdrawal,
 * and the publisher re-reads — and then finds the mark.
 */
import type { Node as V1Node, Taint as V1Taint } from '../kube/api/objects.ts';
import type { ChainVerdict } from '../cni/types.ts';
import { QUARANTINE_ANNOTATION, readMark, underQuarantine, wantsTaint } from '../node/quarantine.ts';
import {
  CONDITION_TYPE,
  desiredState,
  EVIDENCE_ANNOTATION,
  evidenceJson,
  hasUnverifiedTaint,
  kubeTime,
  type PublishedState,
  UNVERIFIED_TAINT,
  VERIFIED_LABEL,
} from './node-state.ts';

export interface NodePatches {
  node: Record<string, unknown>;
  status: Record<string, unknown>;
  /**
   * It makes the node verified: the status goes first with the read resourceVersion, then the node patch with the
   * resourceVersion the status write produced (src/agent/kube-publisher.ts).
   */
  guarded: boolean;
  /** What the Node says once both patches applied. */
  state: PublishedState;
}

/**
 * @param node  the Node as last read (for the taints list, the resourceVersion and the previous condition)
 * @param taintUnverified whether the unverified taint is wanted while unverified (--taint-unverified)
 * @param now   the publish time: lastHeartbeatTime, and lastTransitionTime when the status flips
 */
export function planPatches(
  node: V1Node,
  agentVerdict: ChainVerdict,
  taintUnverified: boolean,
  now: Date,
): NodePatches {
  const mark = readMark(node.metadata?.annotations?.[QUARANTINE_ANNOTATION]);
  const verdict = underQuarantine(agentVerdict, mark);
  const taint = wantsTaint(taintUnverified, mark);
  const metadata: Record<string, unknown> = {
    labels: { [VERIFIED_LABEL]: String(verdict.verified) },
    annotations: { [EVIDENCE_ANNOTATION]: evidenceJson(verdict.evidence) },
  };
  const patch: Record<string, unknown> = { metadata };
  const wantTaint = taint && !verdict.verified;
  if (wantTaint !== hasUnverifiedTaint(node)) {
    const others = (node.spec?.taints ?? []).filter((t) => t.key !== UNVERIFIED_TAINT.key);
    const taints: V1Taint[] = wantTaint ? [...others, { ...UNVERIFIED_TAINT }] : others;
    patch.spec = { taints: taints.map(plainTaint) };
  }
  if (patch.spec || verdict.verified) metadata.resourceVersion = node.metadata?.resourceVersion;

  const status = verdict.verified ? 'True' : 'False';
  const previous = node.status?.conditions?.find((c) => c.type === CONDITION_TYPE);
  const stamp = kubeTime(now);
  const lastTransitionTime =
    previous?.status === status && previous.lastTransitionTime
      ? kubeTime(new Date(previous.lastTransitionTime))
      : stamp;
  const condition = {
    type: CONDITION_TYPE,
    status,
    reason: verdict.reason,
    message: verdict.message,
    lastHeartbeatTime: stamp,
    lastTransitionTime,
  };
  const state = { ...desiredState(verdict, taint), quarantine: node.metadata?.annotations?.[QUARANTINE_ANNOTATION] };
  return { node: patch, status: { status: { conditions: [condition] } }, guarded: verdict.verified, state };
}

/** Taints as they go over the wire: timeAdded as seconds-precision RFC 3339, whatever form it was read in. */
function plainTaint(t: V1Taint): Record<string, unknown> {
  const out: Record<string, unknown> = { key: t.key, effect: t.effect };
  if (t.value !== undefined) out.value = t.value;
  if (t.timeAdded !== undefined) out.timeAdded = kubeTime(new Date(t.timeAdded));
  return out;
}

/** The strategic merge patch of nodes/status that moves only the condition's heartbeat (conditions merge by type). */
export function heartbeatPatch(now: Date): Record<string, unknown> {
  return { status: { conditions: [{ type: CONDITION_TYPE, lastHeartbeatTime: kubeTime(now) }] } };
}
