/**
 * What the repair controller keeps of a Node: meshgate's marks only (never the whole object: a watch on thousands
 * of Nodes must stay small). Pure.
 */
import { UNVERIFIED_TAINT, VERIFIED_LABEL, verdictCondition, type VerdictNode } from '../../contract/node.ts';
import {
  QUARANTINE_ANNOTATION,
  QUARANTINE_HISTORY_ANNOTATION,
  readHistory,
  readMark,
  type QuarantineHistory,
  type ReadMark,
} from '../../node/quarantine.ts';

export interface NodeView {
  name: string;
  uid?: string;
  resourceVersion?: string;
  /** The label meshgate.io/cni-verified. */
  label?: string;
  condition?: { status?: string; reason?: string; message?: string; heartbeatAt?: number };
  mark?: ReadMark;
  history: QuarantineHistory;
  tainted: boolean;
  /** The Node's taints as they are (a withdrawal that adds the taint writes the whole list). */
  taints: Array<{ key: string; effect: string; value?: string; timeAdded?: string }>;
}

interface NodeLike extends VerdictNode {
  metadata?: VerdictNode['metadata'] & { uid?: string; resourceVersion?: string };
  spec?: { taints?: Array<{ key: string; effect: string; value?: string; timeAdded?: string | Date }> };
}

export function nodeView(node: NodeLike): NodeView {
  const a = node.metadata?.annotations ?? {};
  const { condition: cond, heartbeatAt } = verdictCondition(node);
  const taints = (node.spec?.taints ?? []).map((t) => ({
    key: t.key,
    effect: t.effect,
    ...(t.value !== undefined ? { value: t.value } : {}),
    ...(t.timeAdded !== undefined ? { timeAdded: new Date(t.timeAdded).toISOString().replace('.000Z', 'Z') } : {}),
  }));
  return {
    name: node.metadata?.name ?? '',
    uid: node.metadata?.uid,
    resourceVersion: node.metadata?.resourceVersion,
    label: node.metadata?.labels?.[VERIFIED_LABEL],
    condition: cond && {
      status: cond.status,
      reason: cond.reason,
      message: cond.message,
      heartbeatAt,
    },
    mark: readMark(a[QUARANTINE_ANNOTATION]),
    history: readHistory(a[QUARANTINE_HISTORY_ANNOTATION]),
    tainted: taints.some((t) => t.key === UNVERIFIED_TAINT.key && t.effect === UNVERIFIED_TAINT.effect),
    taints,
  };
}
