/**
 * The Events the repair controller adds to pods so nobody has to guess why a pod is held or was admitted although
 * meshgate would refuse it (issue 23 §5): pure, pod → notice. The texts are the ones `meshgate check` shows
 * (src/policy/mutate/held.ts, src/policy/mutate/advice.ts), so the cluster gives the same advice wherever it is read.
 * - MeshPodHeld: a pod meshgate's affinity holds Pending (a DaemonSet's pod for an unverified node, a pod pinned to
 *   verified nodes while none fits);
 * - MeshWouldDeny: a pod admitted below enforce (label and annotation meshgate.io/would-deny, written by the
 *   mutating webhook at audit or warn: src/admission/level.ts) — what enforce would have refused, and the fix.
 * Pods in meshgate's own and the system namespaces are never guarded, so never noticed.
 */
import { readWouldDeny } from '../../admission/level.ts';
import { adviceFor } from '../../policy/mutate/advice.ts';
import { heldMessage, heldPending } from '../../policy/mutate/held.ts';
import type { PodForRepair } from '../failed/decide.ts';

export type NoticeReason = 'MeshPodHeld' | 'MeshWouldDeny';

export interface Notice {
  reason: NoticeReason;
  message: string;
}

export function noticeFor(pod: PodForRepair, excludedNamespaces: readonly string[]): Notice | undefined {
  if (excludedNamespaces.includes(pod.metadata?.namespace ?? '')) return undefined;
  if (pod.metadata?.deletionTimestamp) return undefined;
  const held = heldPending(pod);
  if (held) return { reason: 'MeshPodHeld', message: heldMessage(held) };
  const w = readWouldDeny(pod.metadata?.labels, pod.metadata?.annotations);
  if (!w) return undefined;
  return {
    reason: 'MeshWouldDeny',
    message:
      `meshgate admitted this pod only because its namespace is at enforcement level ${w.level}; at enforce it ` +
      `would be refused [${w.reason}]: ${w.message}. To fix: ${adviceFor(w.reason)}; then restart the pod. ` +
      '`meshgate check --audit` lists every such pod.',
  };
}
