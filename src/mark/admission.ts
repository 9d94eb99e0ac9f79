/**
 * The admission mark at admission (pure; the handlers in src/admission/ call these after the decision core):
 * - mutating: one JSON Patch op that marks a pod admitted as meshed, but only through a route whose webhook entries
 *   select whole namespaces ("namespace" scope). An entry that selects pods by their own labels (istiod's
 *   `sidecar.istio.io/inject=true` in an unlabelled namespace, meshgate's pod opt-in) or by matchConditions lets
 *   the same author create other pods there that meshgate never sees, with a mark copied from an admitted one: so
 *   pods admitted through such an entry ("selected-pods" scope, served on /mutate/selected-pods) get no mark;
 * - validating: a CREATE carrying a mark is refused unless the mark verifies for the pod and the pod is admitted
 *   as meshed through a namespace-scope entry. Only meshgate's mutating webhook sets the mark; the update guard
 *   (src/policy/validate/update.ts) keeps it fixed afterwards.
 */
import { escapePointer, type PatchOp } from '../contract/patch.ts';
import type { Pod } from '../contract/pod.ts';
import type { KeyRing } from './keys.ts';
import { ADMITTED_ANNOTATION, epochSeconds, issueMark, verifyMark } from './mark.ts';

/** Which pods of a namespace the webhook entry that sent a review reaches: all of them, or only some. */
export type AdmissionScope = 'namespace' | 'selected-pods';

/** What marking needs: the keys loaded now (none: no key configured, or not mounted yet) and a clock. */
export interface Marker {
  ring(): KeyRing | undefined;
  /** Seconds since the epoch. */
  now(): number;
}

const MARK_PATH = `/metadata/annotations/${escapePointer(ADMITTED_ANNOTATION)}`;

/**
 * The op that marks `pod`, applied after `ops` (the decision's own patch); none when the scope does not mark, no
 * key is loaded, or the pod already holds a mark that verifies now (a reinvocation must not change the pod again).
 */
export function markOps(
  pod: Pod,
  namespace: string,
  ops: readonly PatchOp[],
  scope: AdmissionScope,
  marker: Marker | undefined,
): PatchOp[] {
  const ring = scope === 'namespace' ? marker?.ring() : undefined;
  if (!ring || !marker) return [];
  const now = marker.now();
  const held = pod.metadata?.annotations?.[ADMITTED_ANNOTATION];
  if (held !== undefined && verifyMark(ring, held, namespace, now).ok) return [];
  const value = issueMark(ring, namespace, now);
  // The decision's patch creates metadata and its annotations when it records meshgate.io/status on a pod without.
  const annotated =
    pod.metadata?.annotations !== undefined ||
    ops.some((o) => o.op === 'add' && (o.path === '/metadata/annotations' || o.path === '/metadata'));
  if (annotated) return [{ op: 'add', path: MARK_PATH, value }];
  const annotations = { [ADMITTED_ANNOTATION]: value };
  return [
    pod.metadata
      ? { op: 'add', path: '/metadata/annotations', value: annotations }
      : { op: 'add', path: '/metadata', value: { annotations } },
  ];
}

export type MarkJudgement = { ok: true } | { ok: false; reason: 'admission_mark_invalid'; message: string };

/**
 * The validating webhook's check of a pod CREATE's mark. `meshed`: the posture check admitted the pod as meshed
 * (not skipped: opted out, hostNetwork allowed, a system namespace…).
 */
export function judgeMark(
  pod: Pod,
  namespace: string,
  scope: AdmissionScope,
  meshed: boolean,
  marker: Marker | undefined,
): MarkJudgement {
  const mark = pod.metadata?.annotations?.[ADMITTED_ANNOTATION];
  if (mark === undefined) return { ok: true };
  const refuse = (why: string): MarkJudgement => ({
    ok: false,
    reason: 'admission_mark_invalid',
    message: `annotation ${ADMITTED_ANNOTATION} ${why}; only meshgate's mutating webhook may set it`,
  });
  if (scope !== 'namespace')
    return refuse(
      'is set, but meshgate marks only pods of namespaces whose every pod it reviews, and this pod reached it ' +
        'through a webhook entry that selects pods by their labels or match conditions',
    );
  if (!meshed) return refuse('is set on a pod meshgate does not mesh');
  const ring = marker?.ring();
  // A replica without the key (a rolling upgrade from a release without marks, or before the Secret is mounted)
  // cannot tell a real mark from a forged one, and need not: the mark grants nothing at admission, and whoever acts
  // on it (the repair controller) verifies it with the key itself. Refusing here refused legitimate pods whose
  // mutate call reached a replica with the key and whose validate call one without (e2e chart-lifecycle).
  if (!ring || !marker) return { ok: true };
  const created = pod.metadata?.creationTimestamp;
  const at = epochSeconds(typeof created === 'string' ? created : undefined) ?? marker.now();
  const check = verifyMark(ring, mark, namespace, at);
  return check.ok ? { ok: true } : refuse(check.problem);
}
