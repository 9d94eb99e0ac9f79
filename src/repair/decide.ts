/**
 * When a meshgate pod's validation container refused to let it start (redirection missing), the kubelet restarts
 * it forever (CrashLoopBackOff) and the pod never recovers on its own: the CNI plugin only acts at sandbox
 * creation. Deleting the pod lets its controller create a new one — after the node agent fixed or flagged the
 * node, that one is admitted and bound only where redirection is verified. Pure: pod → action.
 */
import { REDIRECT_LABEL } from '../inject/constants.ts';
import { VALIDATION_FAILED_EXIT_CODE } from '../validator/reasons.ts';

export interface PodForRepair {
  metadata?: {
    name?: string;
    namespace?: string;
    uid?: string;
    labels?: Record<string, string>;
    deletionTimestamp?: unknown;
    ownerReferences?: Array<{ controller?: boolean; kind?: string; name?: string }>;
  };
  spec?: { nodeName?: string };
  status?: {
    initContainerStatuses?: Array<{
      name: string;
      state?: { terminated?: { exitCode?: number; message?: string } };
      lastState?: { terminated?: { exitCode?: number; message?: string } };
    }>;
  };
}

export type RepairAction =
  | { action: 'none'; why: 'not_meshgate' | 'terminating' | 'validation_ok' }
  | { action: 'report'; why: 'no_controller'; reason: string; message: string; node?: string }
  | { action: 'delete'; why: 'validation_failed'; reason: string; message: string; node?: string };

/** Reads the validator's structured termination message; tolerates a truncated or foreign one. */
function terminationReason(message: string | undefined): { reason: string; detail: string } {
  try {
    const m = JSON.parse(message ?? '') as { reason?: string; detail?: string };
    return { reason: m.reason ?? 'unknown', detail: m.detail ?? '' };
  } catch {
    return { reason: 'unknown', detail: (message ?? '').slice(0, 200) };
  }
}

export function decideRepair(pod: PodForRepair, validatorName: string): RepairAction {
  if (!pod.metadata?.labels?.[REDIRECT_LABEL]) return { action: 'none', why: 'not_meshgate' };
  if (pod.metadata.deletionTimestamp) return { action: 'none', why: 'terminating' };
  const st = pod.status?.initContainerStatuses?.find((s) => s.name === validatorName);
  const failed = [st?.state?.terminated, st?.lastState?.terminated].find((t) => t?.exitCode === VALIDATION_FAILED_EXIT_CODE);
  if (!failed) return { action: 'none', why: 'validation_ok' };
  const { reason, detail } = terminationReason(failed.message);
  const node = pod.spec?.nodeName;
  const message = `redirect validation failed on node ${node ?? '<unknown>'} (${reason}${detail ? `: ${detail}` : ''})`;
  const owned = pod.metadata.ownerReferences?.some((o) => o.controller);
  // A bare pod has no controller to recreate it: deleting it would lose it. Report instead.
  if (!owned) return { action: 'report', why: 'no_controller', reason, message: `${message}; the pod has no controller, so it is left for a person to act on`, node };
  return { action: 'delete', why: 'validation_failed', reason, message: `${message}; deleting the pod so its controller recreates it`, node };
}
