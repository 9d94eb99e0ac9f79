/**
 * The clustering window (distinct pods per node within a sliding window) and the hold-off (exponential per node,
 * capped, with the per-hour flap bound), on a fake clock.
 */
import { describe, expect, it } from 'vitest';
import { FailureWindow } from '../../src/repair/failed/failure-window.ts';
import {
  extendedHold,
  failedProbeHold,
  FLAP_WINDOW_MS,
  holdMs,
  withdrawalHold,
} from '../../src/repair/failed/hold-off.ts';
import type { QuarantineMark } from '../../src/node/quarantine.ts';

const MIN = 60_000;
const T0 = Date.parse('2026-05-01T10:00:00Z');
const failure = (uid: string, at: number, node = 'n1') => ({
  node,
  uid,
  pod: `shop/${uid}`,
  reason: 'not_redirected',
  at,
});

describe('FailureWindow', () => {
  it('counts distinct pods per node within the window', () => {
    const w = new FailureWindow(10 * MIN);
    expect(w.add(failure('a', T0), T0)).toBe(true);
    expect(w.add(failure('a', T0 + MIN), T0 + MIN)).toBe(false); // the same pod failing again (CrashLoopBackOff)
    expect(w.add(failure('b', T0 + 2 * MIN), T0 + 2 * MIN)).toBe(true);
    expect(w.add(failure('c', T0 + 2 * MIN, 'n2'), T0 + 2 * MIN)).toBe(true);
    expect(w.recent('n1', T0 + 2 * MIN).map((f) => f.uid)).toEqual(['a', 'b']);
    expect(w.nodesWithAtLeast(2, T0 + 2 * MIN)).toEqual(['n1']);
  });

  it('forgets failures older than the window, and ignores ones that arrive already too old', () => {
    const w = new FailureWindow(10 * MIN);
    w.add(failure('a', T0), T0);
    w.add(failure('b', T0 + 5 * MIN), T0 + 5 * MIN);
    expect(w.recent('n1', T0 + 10 * MIN).map((f) => f.uid)).toEqual(['b']);
    expect(w.add(failure('old', T0 - 11 * MIN), T0)).toBe(false);
    expect(w.recent('n1', T0 + 16 * MIN)).toEqual([]);
    expect(w.nodesWithAtLeast(1, T0 + 16 * MIN)).toEqual([]);
  });

  it('filters by time (failures an earlier withdrawal answered) and keeps at most maxPerNode, the newest', () => {
    const w = new FailureWindow(10 * MIN, 3);
    for (let i = 0; i < 5; i++) w.add(failure(`p${i}`, T0 + i * 1000), T0 + i * 1000);
    expect(w.recent('n1', T0 + 5000).map((f) => f.uid)).toEqual(['p2', 'p3', 'p4']);
    expect(w.recent('n1', T0 + 5000, T0 + 3000).map((f) => f.uid)).toEqual(['p4']);
  });
});

describe('hold-off', () => {
  const o = { baseMs: 5 * MIN, maxMs: 60 * MIN, maxPerHour: 3 };
  const mark = (over: Partial<QuarantineMark> = {}): QuarantineMark => ({
    since: new Date(T0).toISOString(),
    lastFailureAt: new Date(T0).toISOString(),
    holdUntil: new Date(T0 + 5 * MIN).toISOString(),
    hold: 'hold_off',
    level: 0,
    taint: false,
    failureCount: 3,
    failures: [],
    ...over,
  });

  it.each([
    [0, 5],
    [1, 10],
    [2, 20],
    [3, 40],
    [4, 60],
    [50, 60],
  ])('level %i → %i min (doubling, capped)', (level, minutes) => {
    expect(holdMs(level, o)).toBe(minutes * MIN);
  });

  it('the first withdrawal holds for the base; earlier withdrawals within the hour raise the level', () => {
    expect(withdrawalHold([], T0, o)).toEqual({
      level: 0,
      holdUntil: T0 + 5 * MIN,
      hold: 'hold_off',
      withdrawals: [T0],
    });
    expect(withdrawalHold([T0 - 20 * MIN], T0, o)).toMatchObject({
      level: 1,
      holdUntil: T0 + 10 * MIN,
      hold: 'hold_off',
    });
    // Two hours ago does not count any more.
    expect(withdrawalHold([T0 - 2 * FLAP_WINDOW_MS], T0, o)).toMatchObject({ level: 0, withdrawals: [T0] });
  });

  it('the flap bound: the third withdrawal within an hour holds until the first is an hour old', () => {
    const h = withdrawalHold([T0 - 30 * MIN, T0 - 15 * MIN], T0, o);
    expect(h).toMatchObject({ level: 2, hold: 'flap_limit', holdUntil: T0 - 30 * MIN + FLAP_WINDOW_MS });
    // With a long hold-off already past the flap end, the hold-off is what holds.
    const long = withdrawalHold([T0 - 50 * MIN, T0 - 45 * MIN], T0, { ...o, baseMs: 20 * MIN, maxMs: 120 * MIN });
    expect(long).toMatchObject({ hold: 'hold_off', holdUntil: T0 + 80 * MIN });
  });

  it('new failures restart the hold at the same level; a failed probe raises it; neither shortens a hold', () => {
    expect(extendedHold(mark(), T0 + 4 * MIN, o)).toEqual({ level: 0, holdUntil: T0 + 9 * MIN, hold: 'hold_off' });
    expect(failedProbeHold(mark(), T0 + 6 * MIN, o)).toEqual({ level: 1, holdUntil: T0 + 16 * MIN, hold: 'hold_off' });
    const flap = mark({ hold: 'flap_limit', holdUntil: new Date(T0 + 50 * MIN).toISOString() });
    expect(extendedHold(flap, T0 + MIN, o)).toEqual({ level: 0, holdUntil: T0 + 50 * MIN, hold: 'flap_limit' });
  });
});
