/**
 * How long a withdrawn node stays withdrawn before it may be given back, so a node whose redirect keeps breaking
 * cannot flap verified/unverified. Pure.
 * - Exponential hold-off: base × 2^level, capped. The level is the number of earlier withdrawals within the last
 *   hour, raised by one for each probe pod that fails on the withdrawn node.
 * - Flap bound: a node withdrawn `maxPerHour` times within an hour is held until the first of those is an hour old,
 *   so no hour ever sees more than `maxPerHour` withdrawals of one node (nor more give-backs).
 */
import type { HoldReason, QuarantineMark } from '../../node/quarantine.ts';

export interface HoldOffOptions {
  baseMs: number;
  maxMs: number;
  maxPerHour: number;
}

/** The window the flap bound and the hold-off level look back over. */
export const FLAP_WINDOW_MS = 3_600_000;

/** 2^30 × any base is beyond every cap: the exponent stops there so the product stays a finite number. */
const MAX_EXPONENT = 30;

export function holdMs(level: number, o: HoldOffOptions): number {
  return Math.min(o.baseMs * 2 ** Math.min(level, MAX_EXPONENT), o.maxMs);
}

export interface Hold {
  level: number;
  holdUntil: number;
  hold: HoldReason;
}

/**
 * The hold of a withdrawal at `now`.
 * @param earlier the node's earlier withdrawal times (its history annotation)
 * @returns the hold, and the withdrawal times to keep (those of the last hour, this one included)
 */
export function withdrawalHold(
  earlier: readonly number[],
  now: number,
  o: HoldOffOptions,
): Hold & { withdrawals: number[] } {
  const recent = earlier.filter((t) => t <= now && now - t < FLAP_WINDOW_MS).sort((a, b) => a - b);
  const withdrawals = [...recent, now];
  const level = recent.length;
  let holdUntil = now + holdMs(level, o);
  let hold: HoldReason = 'hold_off';
  if (withdrawals.length >= o.maxPerHour) {
    const flapEnd = withdrawals[withdrawals.length - o.maxPerHour] + FLAP_WINDOW_MS;
    if (flapEnd > holdUntil) [holdUntil, hold] = [flapEnd, 'flap_limit'];
  }
  return { level, holdUntil, hold, withdrawals };
}

/** New failures while withdrawn: the hold starts over at the same level (never shortened). */
export function extendedHold(mark: QuarantineMark, now: number, o: HoldOffOptions): Hold {
  const current = Date.parse(mark.holdUntil);
  const again = now + holdMs(mark.level, o);
  return again > current
    ? { level: mark.level, holdUntil: again, hold: 'hold_off' }
    : { level: mark.level, holdUntil: current, hold: mark.hold };
}

/** A probe pod failed validation on the withdrawn node: one level up, from now (never shortened). */
export function failedProbeHold(mark: QuarantineMark, now: number, o: HoldOffOptions): Hold {
  const level = mark.level + 1;
  const current = Date.parse(mark.holdUntil);
  const again = now + holdMs(level, o);
  return again > current
    ? { level, holdUntil: again, hold: 'hold_off' }
    : { level, holdUntil: current, hold: mark.hold };
}
