/**
 * A node's quarantine: the repair controller's withdrawal of a node's verification after redirect validation failed
 * for several pods on it (src/repair/quarantine/quarantine.ts), and what every other reader makes of it. Pure.
 *
 * On the Node, written only by the repair controller (the chart's node policies forbid the node agent and anyone
 * else to add or change them; anyone who may patch Nodes may remove the mark, which hands the node back to its
 * agent's verdict — still the only way a node becomes verified):
 * - annotation `meshgate.io/cni-quarantine`: present = withdrawn. Compact JSON (`QuarantineMark`): when, why, the
 *   failing pods with their validator reasons and times, how long it is held and why.
 * - annotation `meshgate.io/cni-quarantine-history`: the times of its recent withdrawals (kept after the node is
 *   given back), so the flap bound survives a restart or a change of leader.
 * Readers:
 * - the webhook's node facts (src/facts/node-facts.ts): a node with the mark is not verified (`node_quarantined`),
 *   whatever its condition says;
 * - the node agent: while the mark is there, it publishes its own verified verdict as condition False with reason
 *   `node_quarantined` and label "false" (and keeps the taint the withdrawal added), so its next publish cannot undo
 *   the withdrawal; its heartbeat then says "I re-verified after the failures", which giving the node back needs.
 */
import type { Evidence, ChainVerdict } from '../cni/types.ts';
import { QUARANTINE_ANNOTATION } from '../contract/node.ts';
import type { HoldReason, NodeReason } from '../contract/reasons.ts';

/** Declared on the contract floor, where the node codes' sentences name it. */
export { QUARANTINE_ANNOTATION };
export const QUARANTINE_HISTORY_ANNOTATION = 'meshgate.io/cni-quarantine-history';
/** The MeshCNIVerified condition's reason while withdrawn, and the node fact's reason code. */
export const QUARANTINE_REASON = 'node_quarantined' satisfies NodeReason;

/**
 * Failing pods kept in the mark: enough to show a pattern, while the annotation stays small (a Node's annotations
 * share 256 KiB with every other writer).
 */
export const MAX_MARK_FAILURES = 10;
/** A mark longer than this was not written by meshgate; it is still a withdrawal, just not read. */
const MAX_MARK_CHARS = 16_384;
/** Withdrawal times kept in the history: the flap bound looks back one hour, at most a few dozen fit in it. */
export const MAX_HISTORY = 32;

export interface QuarantineFailure {
  /** namespace/name */
  pod: string;
  /** The validator's reason code (src/validator/reasons.ts, or `istio_validation_failed`, …). */
  reason: string;
  /** When the validation failed (RFC 3339). */
  at: string;
}

/** Why the node is held: its exponential hold-off or the per-hour flap bound (the catalogue's HOLD_CODES). */
export type { HoldReason };

export interface QuarantineMark {
  /** When the verification was withdrawn. */
  since: string;
  /** The latest validation failure recorded on the node; the agent must re-verify after it. */
  lastFailureAt: string;
  /** Not given back before this time. */
  holdUntil: string;
  hold: HoldReason;
  /**
   * Hold-off level: the hold lasts base × 2^level (capped); raised by each withdrawal within the hour and each
   * failed probe.
   */
  level: number;
  /** Whether the withdrawal added the unverified taint; the agent keeps it while the mark stands. */
  taint: boolean;
  /** Validation failures recorded since the withdrawal, the burst that caused it included. */
  failureCount: number;
  /** The most recent of them (at most MAX_MARK_FAILURES). */
  failures: QuarantineFailure[];
}

export type ReadMark = { ok: true; mark: QuarantineMark } | { ok: false; error: string };

const isTime = (v: unknown): v is string => typeof v === 'string' && !Number.isNaN(Date.parse(v));

/** The mark from the annotation's value: undefined when absent, an error (still a withdrawal) when unreadable. */
export function readMark(raw: string | undefined): ReadMark | undefined {
  if (raw === undefined) return undefined;
  if (raw.length > MAX_MARK_CHARS)
    return { ok: false, error: `annotation ${QUARANTINE_ANNOTATION} is longer than ${MAX_MARK_CHARS} characters` };
  let v: Record<string, unknown>;
  try {
    v = JSON.parse(raw) as Record<string, unknown>;
  } catch {
    return { ok: false, error: `annotation ${QUARANTINE_ANNOTATION} is not JSON` };
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v))
    return { ok: false, error: `annotation ${QUARANTINE_ANNOTATION} is not a JSON object` };
  for (const k of ['since', 'lastFailureAt', 'holdUntil'] as const) {
    if (!isTime(v[k])) return { ok: false, error: `annotation ${QUARANTINE_ANNOTATION}: ${k} is not a time` };
  }
  const failures = Array.isArray(v.failures) ? v.failures : [];
  return {
    ok: true,
    mark: {
      since: v.since as string,
      lastFailureAt: v.lastFailureAt as string,
      holdUntil: v.holdUntil as string,
      hold: v.hold === 'flap_limit' ? 'flap_limit' : 'hold_off',
      level: Number.isInteger(v.level) && (v.level as number) >= 0 ? (v.level as number) : 0,
      taint: v.taint === true,
      failureCount: Number.isInteger(v.failureCount) ? (v.failureCount as number) : failures.length,
      failures: failures
        .filter(
          (f): f is QuarantineFailure => typeof f?.pod === 'string' && typeof f?.reason === 'string' && isTime(f?.at),
        )
        .slice(-MAX_MARK_FAILURES)
        .map((f) => ({ pod: f.pod, reason: f.reason, at: f.at })),
    },
  };
}

export function writeMark(mark: QuarantineMark): string {
  return JSON.stringify({ ...mark, failures: mark.failures.slice(-MAX_MARK_FAILURES) });
}

/** What outlives a quarantine (times in ms since the epoch). */
export interface QuarantineHistory {
  /** When the node was withdrawn, oldest first: the flap bound counts those of the last hour. */
  withdrawals: number[];
  /** Failures up to this time were answered by the last withdrawal, which is over: they never count again. */
  clearedThrough?: number;
}

/** The history annotation; anything unreadable counts as no history. */
export function readHistory(raw: string | undefined): QuarantineHistory {
  if (raw === undefined || raw.length > MAX_MARK_CHARS) return { withdrawals: [] };
  try {
    const v = JSON.parse(raw) as { withdrawals?: unknown; clearedThrough?: unknown };
    const withdrawals = Array.isArray(v?.withdrawals)
      ? v.withdrawals
          .filter(isTime)
          .map((t) => Date.parse(t))
          .sort((a, b) => a - b)
          .slice(-MAX_HISTORY)
      : [];
    return isTime(v?.clearedThrough) ? { withdrawals, clearedThrough: Date.parse(v.clearedThrough) } : { withdrawals };
  } catch {
    return { withdrawals: [] };
  }
}

export function writeHistory(h: QuarantineHistory): string {
  const withdrawals = [...h.withdrawals]
    .sort((a, b) => a - b)
    .slice(-MAX_HISTORY)
    .map((t) => new Date(t).toISOString());
  return JSON.stringify(
    h.clearedThrough === undefined
      ? { withdrawals }
      : { withdrawals, clearedThrough: new Date(h.clearedThrough).toISOString() },
  );
}

/** One sentence for the condition, the Event, the admission message: what happened and what gives the node back. */
export function describeMark(m: ReadMark): string {
  if (!m.ok) return `the meshgate repair controller withdrew this node's verification (${m.error})`;
  const { mark } = m;
  const pods = mark.failures
    .slice(-3)
    .map((f) => `${f.pod}: ${f.reason}`)
    .join(', ');
  const more = mark.failureCount > 3 ? `, … ${mark.failureCount} in all` : '';
  const hold = mark.hold === 'flap_limit' ? 'held (withdrawn too often within the hour) until' : 'held until';
  return (
    `the meshgate repair controller withdrew this node's verification at ${mark.since}: ` +
    `redirect validation failed for pods on it (${pods}${more}), last at ${mark.lastFailureAt}; ` +
    `${hold} ${mark.holdUntil}, ` +
    'then given back once the node agent re-verified the node and a probe pod passed validation'
  );
}

/** What the agent publishes: a verdict, or its verdict overruled by a quarantine (reason is then not a CNI reason). */
export interface PublishedVerdict {
  verified: boolean;
  reason: string;
  message: string;
  evidence: Evidence;
}

/**
 * The verdict the node agent publishes while the node carries a quarantine mark: its own unverified verdicts stand
 * as they are (they say more); a verified one becomes `node_quarantined`, with the agent's own words appended.
 */
export function underQuarantine(
  verdict: ChainVerdict | PublishedVerdict,
  mark: ReadMark | undefined,
): PublishedVerdict {
  if (!mark || !verdict.verified) return verdict;
  return {
    verified: false,
    reason: QUARANTINE_REASON,
    message: `${describeMark(mark)}; the node agent's own verdict: ${verdict.message}`,
    evidence: verdict.evidence,
  };
}

/** The unverified taint is wanted when the agent is told to taint, or the withdrawal added it. */
export function wantsTaint(taintUnverified: boolean, mark: ReadMark | undefined): boolean {
  return taintUnverified || (mark?.ok === true && mark.mark.taint);
}
