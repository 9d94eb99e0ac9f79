/**
 * When a guarded pod's validation container refused to let it start (redirection missing), the kubelet restarts
 * it forever (CrashLoopBackOff) and the pod never recovers on its own: the CNI plugin only acts at sandbox
 * creation. Deleting the pod lets its controller create a new one — after the node agent fixed or flagged the
 * node, that one is admitted and bound only where redirection is verified. Pure: pod → action.
 */
import { REDIRECT_LABEL } from '../inject/constants.ts';
import type { ValidationFailure } from './failures.ts';

/** A container termination as the kubelet records it (finishedAt: the kubelet's clock). */
interface Terminated {
  exitCode?: number;
  message?: string;
  finishedAt?: string | Date;
}

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
      state?: { terminated?: Terminated };
      lastState?: { terminated?: Terminated };
    }>;
  };
}

/** The validation container to watch and the exit codes that mean "redirection missing" (src/repair/failures.ts). */
export interface ValidatorWatch {
  name: string;
  failures: readonly ValidationFailure[];
}

/** A failed validation: where and when (the termination's finishedAt, ms since the epoch, when recorded). */
interface Failed {
  reason: string;
  message: string;
  node?: string;
  failedAt?: number;
}

export type RepairAction =
  | { action: 'none'; why: 'not_meshgate' | 'terminating' | 'validation_ok' }
  | ({ action: 'report'; why: 'no_controller' } & Failed)
  | ({ action: 'delete'; why: 'validation_failed' } & Failed);

/** The failure's stable reason and detail: meshgate's validator writes JSON; the meshes' own, a sentence or logs. */
export function failureReason(
  failure: ValidationFailure,
  message: string | undefined,
): { reason: string; detail: string } {
  if (failure.source !== 'meshgate') {
    return {
      reason: `${failure.source}_validation_failed`,
      detail: (message ?? '').trim().split('\n')[0].slice(0, 200),
    };
  }
  try {
    const m = JSON.parse(message ?? '') as { reason?: string; detail?: string };
    return { reason: m.reason ?? 'unknown', detail: m.detail ?? '' };
  } catch {
    return { reason: 'unknown', detail: (message ?? '').slice(0, 200) };
  }
}

export function decideRepair(pod: PodForRepair, validator: ValidatorWatch): RepairAction {
  if (!pod.metadata?.labels?.[REDIRECT_LABEL]) return { action: 'none', why: 'not_meshgate' };
  if (pod.metadata.deletionTimestamp) return { action: 'none', why: 'terminating' };
  const st = pod.status?.initContainerStatuses?.find((s) => s.name === validator.name);
  let found: { failure: ValidationFailure; message?: string; finishedAt?: string | Date } | undefined;
  for (const t of [st?.state?.terminated, st?.lastState?.terminated]) {
    const failure = validator.failures.find((f) => f.exitCode === t?.exitCode);
    if (failure && !found) found = { failure, message: t?.message, finishedAt: t?.finishedAt };
  }
  if (!found) return { action: 'none', why: 'validation_ok' };
  const { reason, detail } = failureReason(found.failure, found.message);
  const node = pod.spec?.nodeName;
  const message = `redirect validation failed on node ${node ?? '<unknown>'} (${reason}${detail ? `: ${detail}` : ''})`;
  const owned = pod.metadata.ownerReferences?.some((o) => o.controller);
  const at = found.finishedAt === undefined ? NaN : new Date(found.finishedAt).getTime();
  const failedAt = Number.isNaN(at) ? undefined : at;
  // A bare pod has no controller to recreate it: deleting it would lose it. Report instead.
  if (!owned)
    return {
      action: 'report',
      why: 'no_controller',
      reason,
      message: `${message}; the pod has no controller, so it is left for a person to act on`,
      node,
      failedAt,
    };
  return {
    action: 'delete',
    why: 'validation_failed',
    reason,
    message: `${message}; deleting the pod so its controller recreates it`,
    node,
    failedAt,
  };
}
