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
 */
import type { V1Node, V1Taint } from '@kubernetes/client-node';
import type { Verdict } from '../cni/types.ts';
import {
  CONDITION_TYPE,
  EVIDENCE_ANNOTATION,
  evidenceJson,
  hasUnverifiedTaint,
  kubeTime,
  UNVERIFIED_TAINT,
  VERIFIED_LABEL,
} from './node-state.ts';

export interface NodePatches {
  node: Record<string, unknown>;
  status: Record<string, unknown>;
}

/**
 * @param node  the Node as last read (for the taints list, the resourceVersion and the previous condition)
 * @param taint whether the unverified taint is wanted while unverified (--taint-unverified)
 * @param now   the publish time: lastHeartbeatTime, and lastTransitionTime when the status flips
 */
export function planPatches(node: V1Node, verdict: Verdict, taint: boolean, now: Date): NodePatches {
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
    metadata.resourceVersion = node.metadata?.resourceVersion;
  }

  const status = verdict.verified ? 'True' : 'False';
  const previous = node.status?.conditions?.find((c) => c.type === CONDITION_TYPE);
  const stamp = kubeTime(now);
  const lastTransitionTime =
    previous?.status === status && previous.lastTransitionTime ? kubeTime(new Date(previous.lastTransitionTime)) : stamp;
  const condition = {
    type: CONDITION_TYPE,
    status,
    reason: verdict.reason,
    message: verdict.message,
    lastHeartbeatTime: stamp,
    lastTransitionTime,
  };
  return { node: patch, status: { status: { conditions: [condition] } } };
}

/** Taints as they go over the wire (client-node parses timeAdded into a Date). */
function plainTaint(t: V1Taint): Record<string, unknown> {
  const out: Record<string, unknown> = { key: t.key, effect: t.effect };
  if (t.value !== undefined) out.value = t.value;
  if (t.timeAdded !== undefined) out.timeAdded = kubeTime(new Date(t.timeAdded));
  return out;
}
