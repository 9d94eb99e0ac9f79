/**
 * When a guarded pod's validation container refused to let it start (redirection missing), the kubelet restarts
 * it forever (CrashLoopBackOff) and the pod never recovers on its own: the CNI plugin only acts at sandbox
 * creation. Deleting the pod lets its controller create a new one — after the node agent fixed or flagged the
 * node, that one is admitted and bound only where redirection is verified. Pure: pod → action.
 * Only a pod whose admission mark verifies (src/mark/mark.ts) is acted on, or counted against its node: its
 * label, container names and exit codes are all its author's to write, and in a namespace meshgate does not guard a
 * bare pod can look exactly like a failed meshgate pod (issue 21 §5). Neither is a pod in meshgate's own or a
 * system namespace, which meshgate never guards.
 */
import { REDIRECT_LABEL } from '../../contract/names.ts';
import type { KeyRing } from '../../mark/keys.ts';
import { ADMITTED_ANNOTATION, epochSeconds, verifyMark } from '../../mark/mark.ts';
import type { ValidationFailure } from './failures.ts';
import { COULD_NOT_CHECK, VALIDATOR_REASONS, type ValidatorReason } from '../../validator/reasons.ts';
import type { FailureCode, UntrustedWhy } from '../../contract/reasons.ts';

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
    annotations?: Record<string, string>;
    /** Set by the apiserver at creation: what the admission mark's time is checked against. */
    creationTimestamp?: string | Date;
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

/** The validation container to watch and the exit codes that mean "redirection missing" (src/repair/failed/failures.ts). */
export interface ValidatorWatch {
  name: string;
  failures: readonly ValidationFailure[];
}

/** What a pod is trusted by: the namespaces meshgate never guards, and the admission mark's keys. */
export interface RepairTrust {
  /** meshgate's own namespace and config.systemNamespaces. */
  excludedNamespaces: readonly string[];
  /** The keys loaded now; undefined: none yet, so no pod is trusted. */
  keys: KeyRing | undefined;
}

/** A failed validation: where and when (the termination's finishedAt, ms since the epoch, when recorded). */
interface Failed {
  reason: FailureReason;
  /** Whether the failure is evidence that the node does not redirect (provesNotRedirected). */
  counted: boolean;
  message: string;
  node?: string;
  failedAt?: number;
}

export type RepairAction =
  | { action: 'none'; why: 'not_meshgate' | 'terminating' | 'excluded_namespace' | 'validation_ok' }
  /** A failed validator on a pod whose admission mark does not verify: neither acted on nor counted. */
  | ({ action: 'untrusted'; why: UntrustedWhy; problem: string } & Failed)
  | ({ action: 'report'; why: 'no_controller' } & Failed)
  | ({ action: 'delete'; why: 'validation_failed' } & Failed);

/**
 * Why a validator failed, as the repair controller counts it (the `reason` label of its metrics): meshgate's
 * validator's codes, the meshes' own validators by name, or `unknown`. A closed set: a termination message is read
 * from the pod, so a code the validator does not have is `unknown`, never a new series.
 */
export type FailureReason = ValidatorReason | FailureCode;

const isValidatorReason = (r: unknown): r is ValidatorReason => (VALIDATOR_REASONS as readonly unknown[]).includes(r);

/** The failure's stable reason and detail: meshgate's validator writes JSON; the meshes' own, a sentence or logs. */
export function failureReason(
  failure: ValidationFailure,
  message: string | undefined,
): { reason: FailureReason; detail: string } {
  if (failure.source !== 'meshgate') {
    return {
      // Another source's `<mesh>_validation_failed` must be a FailureCode: a new one without its catalogue entry fails tsc.
      reason: `${failure.source}_validation_failed`,
      detail: (message ?? '').trim().split('\n')[0].slice(0, 200),
    };
  }
  try {
    const m = JSON.parse(message ?? '') as { reason?: unknown; detail?: unknown };
    return {
      reason: isValidatorReason(m.reason) ? m.reason : 'unknown',
      detail: typeof m.detail === 'string' ? m.detail.slice(0, 1000) : '',
    };
  } catch {
    return { reason: 'unknown', detail: (message ?? '').slice(0, 200) };
  }
}

/**
 * Whether a failure shows that the pod's traffic was not redirected, and so counts against its node (issue 33 §7):
 * meshgate's validator says so by its reason (not the "could not check" ones: COULD_NOT_CHECK), and a message it did
 * not write (`unknown`) proves nothing; the meshes' own validators exit with one code for every failure, so theirs
 * count (admission refuses the pod sysctls that would make them fail on a healthy node: src/policy/sysctls.ts).
 */
export function provesNotRedirected(reason: FailureReason): boolean {
  if (reason === 'unknown') return false;
  if (reason === 'istio_validation_failed' || reason === 'linkerd_validation_failed') return true;
  return !COULD_NOT_CHECK.has(reason);
}

/** Why a failed validator's pod is not trusted (the catalogue's UNTRUSTED_CODES). */
export type { UntrustedWhy };

/** Whether the pod's admission mark verifies; the problem otherwise, in words. */
export function markTrust(
  pod: PodForRepair,
  keys: KeyRing | undefined,
): { why: UntrustedWhy; problem: string } | undefined {
  const mark = pod.metadata?.annotations?.[ADMITTED_ANNOTATION];
  if (mark === undefined)
    return {
      why: 'mark_missing',
      problem: `it carries no ${ADMITTED_ANNOTATION}: meshgate did not admit it in a namespace it guards`,
    };
  if (!keys) return { why: 'no_key', problem: 'the repair controller holds no admission mark key yet' };
  const created = epochSeconds(pod.metadata?.creationTimestamp);
  if (created === undefined)
    return { why: 'mark_invalid', problem: 'it has no creationTimestamp to check its mark by' };
  const check = verifyMark(keys, mark, pod.metadata?.namespace ?? '', created);
  return check.ok ? undefined : { why: 'mark_invalid', problem: `its ${ADMITTED_ANNOTATION} ${check.problem}` };
}

export function decideRepair(pod: PodForRepair, validator: ValidatorWatch, trust: RepairTrust): RepairAction {
  if (!pod.metadata?.labels?.[REDIRECT_LABEL]) return { action: 'none', why: 'not_meshgate' };
  if (pod.metadata.deletionTimestamp) return { action: 'none', why: 'terminating' };
  if (trust.excludedNamespaces.includes(pod.metadata.namespace ?? ''))
    return { action: 'none', why: 'excluded_namespace' };
  const st = pod.status?.initContainerStatuses?.find((s) => s.name === validator.name);
  let found: { failure: ValidationFailure; message?: string; finishedAt?: string | Date } | undefined;
  for (const t of [st?.state?.terminated, st?.lastState?.terminated]) {
    const failure = validator.failures.find((f) => f.exitCode === t?.exitCode);
    if (failure && !found) found = { failure, message: t?.message, finishedAt: t?.finishedAt };
  }
  if (!found) return { action: 'none', why: 'validation_ok' };
  const { reason, detail } = failureReason(found.failure, found.message);
  const counted = provesNotRedirected(reason);
  const node = pod.spec?.nodeName;
  const message = `redirect validation failed on node ${node ?? '<unknown>'} (${reason}${detail ? `: ${detail}` : ''})`;
  const owned = pod.metadata.ownerReferences?.some((o) => o.controller);
  const at = found.finishedAt === undefined ? NaN : new Date(found.finishedAt).getTime();
  const failedAt = Number.isNaN(at) ? undefined : at;
  const untrusted = markTrust(pod, trust.keys);
  if (untrusted)
    return {
      action: 'untrusted',
      ...untrusted,
      reason,
      counted,
      message: `${message}; not acted on: ${untrusted.problem}`,
      node,
      failedAt,
    };
  // A bare pod has no controller to recreate it: deleting it would lose it. Report instead.
  if (!owned)
    return {
      action: 'report',
      why: 'no_controller',
      reason,
      counted,
      message: `${message}; the pod has no controller, so it is left for a person to act on`,
      node,
      failedAt,
    };
  return {
    action: 'delete',
    why: 'validation_failed',
    reason,
    counted,
    message: `${message}; deleting the pod so its controller recreates it`,
    node,
    failedAt,
  };
}
