/**
 * Enforcement levels (issue 23): how much of what meshgate decides is enforced, per webhook entry. The chart renders
 * one entry per level, selecting namespaces by the label `meshgate.io/enforcement` (absent: the configured default),
 * each calling its own route (`/validate/audit`, …: ADMISSION_ROUTES), so the apiserver tells meshgate the level with
 * every review and the webhook needs no namespace cache. A namespace admin cannot lower their own level: the label is
 * guarded by an admission policy (charts/meshgate/templates/enforcement-policy.yaml).
 * - enforce: today's behaviour, a refusal refuses;
 * - warn: the pod is admitted and the refusal becomes an admission warning (kubectl prints it), recorded as in audit;
 * - audit: the pod is admitted silently for its author; the would-be refusal is recorded: the verdict's reason in the
 *   apiserver's audit log (auditAnnotations), the decision `audit`/`warn` in meshgate_admission_decisions_total by
 *   reason, a log line, and on the pod itself (mutating webhook): label meshgate.io/would-deny=<level> and annotation
 *   meshgate.io/would-deny with the reason and message, which `meshgate check --audit` reports and the repair
 *   controller turns into an Event.
 */
import { ENFORCEMENT_LEVELS, type EnforcementLevel } from '../config/types.ts';
import { escapePointer, type PatchOp } from '../contract/patch.ts';
import { REASONS, type ReasonCode } from '../contract/reasons.ts';
import { isObject } from '../util/json.ts';
import type { AdmissionRequest, Verdict } from './review.ts';

export type Level = EnforcementLevel;
export const LEVELS: readonly Level[] = ENFORCEMENT_LEVELS;

export const WOULD_DENY_LABEL = 'meshgate.io/would-deny';
export const WOULD_DENY_ANNOTATION = 'meshgate.io/would-deny';

/**
 * A recorded message is at most this long: it sits in the pod's annotations (256 KiB in all), and a long one (a
 * refusal naming a 60,000-CIDR list) says nothing more past its first lines.
 */
const MAX_RECORDED = 1024;

/**
 * The verdict at `level`. A refusal below enforce admits the pod (for the mutating webhook: unchanged but for the
 * record of the refusal, `record: true`), keeping the reason code; everything else passes unchanged.
 */
export function atLevel(level: Level, v: Verdict, r: AdmissionRequest, record: boolean): Verdict {
  if (level === 'enforce' || v.kind !== 'deny') return v;
  const audited = { level, message: v.message };
  const warnings =
    level === 'warn' ? [...(v.warnings ?? []), `${v.message} [${v.reason}] (${level} mode: admitted)`] : v.warnings;
  if (!record || r.operation !== 'CREATE' || r.subResource)
    return { kind: 'allow', reason: v.reason, warnings, audited };
  return { kind: 'patch', reason: v.reason, ops: recordOps(r.object, level, v), warnings, audited };
}

/** Ops recording the would-be refusal on the pod (creating labels/annotations when it has none). */
function recordOps(object: unknown, level: Level, v: Extract<Verdict, { kind: 'deny' }>): PatchOp[] {
  const meta = (object as { metadata?: { labels?: unknown; annotations?: unknown } } | undefined)?.metadata;
  const text = `${v.reason}: ${v.message}`;
  const note = text.length > MAX_RECORDED ? `${text.slice(0, MAX_RECORDED - 3)}...` : text;
  const ops: PatchOp[] = [];
  if (!meta)
    return [
      {
        op: 'add',
        path: '/metadata',
        value: { labels: { [WOULD_DENY_LABEL]: level }, annotations: { [WOULD_DENY_ANNOTATION]: note } },
      },
    ];
  ops.push(
    meta.labels
      ? { op: 'add', path: `/metadata/labels/${escapePointer(WOULD_DENY_LABEL)}`, value: level }
      : { op: 'add', path: '/metadata/labels', value: { [WOULD_DENY_LABEL]: level } },
  );
  ops.push(
    meta.annotations
      ? { op: 'add', path: `/metadata/annotations/${escapePointer(WOULD_DENY_ANNOTATION)}`, value: note }
      : { op: 'add', path: '/metadata/annotations', value: { [WOULD_DENY_ANNOTATION]: note } },
  );
  return ops;
}

/** A refusal recorded on a pod admitted below enforce, as `recordOps` wrote it. */
export interface WouldDeny {
  level: 'warn' | 'audit';
  reason: string;
  message: string;
}

/**
 * The record of `recordOps` read back from a pod's labels and annotations; undefined when the pod carries none (or
 * not in that form: the label and annotation are the pod author's to write too, so this is a report, never trust).
 */
export function readWouldDeny(
  labels: Readonly<Record<string, string>> | undefined,
  annotations: Readonly<Record<string, string>> | undefined,
): WouldDeny | undefined {
  const level = labels?.[WOULD_DENY_LABEL];
  const note = annotations?.[WOULD_DENY_ANNOTATION];
  if ((level !== 'warn' && level !== 'audit') || note === undefined) return undefined;
  const m = /^([a-z_]{1,64}): ([\s\S]*)$/.exec(note);
  return m ? { level, reason: m[1], message: m[2] } : { level, reason: 'unknown', message: note };
}

/**
 * The validating verdict at `level` (atLevel), made the pod's one record there on a pod CREATE (issue 34 §4): one
 * reason per pod and level, counted once. The mutating webhook ran first: when it recorded a refusal on the pod at
 * this level, that is the refusal enforce would have given (the mutating webhook refuses first there), so the
 * validating webhook reports it too — instead of a second reason and warning of its own (a pod the mutating webhook
 * left uninjected would add `proxy_missing`). The mutating webhook removes records it did not write (`scrubOps`),
 * so what it finds here is its own. Dry runs are judged but not counted.
 */
export function validatedAtLevel(level: Level, raw: Verdict, r: AdmissionRequest): Verdict {
  const creates = level !== 'enforce' && r.operation === 'CREATE' && !r.subResource;
  if (!creates || raw.kind === 'error') return atLevel(level, raw, r, false);
  const pod = r.dryRun ? {} : { pod: true as const };
  const meta = isObject(r.object) && isObject(r.object.metadata) ? r.object.metadata : undefined;
  const w = readWouldDeny(
    meta?.labels as Record<string, string> | undefined,
    meta?.annotations as Record<string, string> | undefined,
  );
  if (w?.level === level && Object.hasOwn(REASONS, w.reason))
    return {
      kind: 'allow',
      reason: w.reason as ReasonCode,
      ...(raw.warnings?.length ? { warnings: raw.warnings } : {}),
      audited: { level, message: w.message, ...pod },
    };
  const v = atLevel(level, raw, r, false);
  return v.kind === 'allow' && v.audited ? { ...v, audited: { ...v.audited, ...pod } } : v;
}

/**
 * Ops removing a would-deny record the pod brings (copied from a running pod into a template, or written by its
 * author) when meshgate does not record a refusal now: the record on a pod is meshgate's own, so the Events, reports
 * and counts built on it say what meshgate found.
 */
export function scrubOps(object: unknown): PatchOp[] {
  const meta = isObject(object) && isObject(object.metadata) ? object.metadata : undefined;
  const ops: PatchOp[] = [];
  if (isObject(meta?.labels) && Object.hasOwn(meta.labels, WOULD_DENY_LABEL))
    ops.push({ op: 'remove', path: `/metadata/labels/${escapePointer(WOULD_DENY_LABEL)}` });
  if (isObject(meta?.annotations) && Object.hasOwn(meta.annotations, WOULD_DENY_ANNOTATION))
    ops.push({ op: 'remove', path: `/metadata/annotations/${escapePointer(WOULD_DENY_ANNOTATION)}` });
  return ops;
}
