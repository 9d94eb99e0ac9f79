// The node agent's probes (src/agent/health.ts), one rule per row: liveness fails only when a restart helps (a hung
// check, a loop whose timers stopped), readiness follows whether the Node carries the current verdict.
import { describe, expect, it } from 'vitest';
import type { AgentStatus } from '../../src/agent/agent.ts';
import { HUNG_AFTER_MS, liveness, readiness, SLOW_CHECK_MS, stalledAfterMs } from '../../src/agent/health.ts';

const RESYNC = 300_000;
const T = 1_700_000_000_000;
const status = (s: Partial<AgentStatus>): AgentStatus => ({
  lastAttemptAt: 0,
  lastSyncedAt: 0,
  runningSince: undefined,
  lastError: undefined,
  resyncMs: RESYNC,
  ...s,
});

describe('liveness', () => {
  const rows: Array<[string, Partial<AgentStatus>, number, boolean, RegExp?]> = [
    ['just started, first check running', { runningSince: T }, T + 1_000, true],
    ['first check running for almost the hang bound', { runningSince: T }, T + HUNG_AFTER_MS, true],
    [
      'a check hung past the bound',
      { runningSince: T, lastAttemptAt: T - 10_000 },
      T + HUNG_AFTER_MS + 1,
      false,
      /a check has been running for 120 s/,
    ],
    ['idle between resyncs', { lastAttemptAt: T }, T + RESYNC, true],
    [
      'failing every attempt (apiserver down), attempts still end',
      { lastAttemptAt: T, lastError: { step: 'publish', message: 'ECONNREFUSED' } },
      T + 30_000,
      true,
    ],
    [
      'no attempt ended for two resyncs and the hang bound',
      { lastAttemptAt: T },
      T + stalledAfterMs(RESYNC) + 1,
      false,
      /no check has ended for 720 s \(resync every 300 s\)/,
    ],
    ['never attempted, long after start', {}, T + stalledAfterMs(RESYNC) + 1, false, /no check has ended/],
  ];
  it.each(rows)('%s', (_name, s, now, ok, why) => {
    const r = liveness(status(s), now, T);
    expect(r.ok).toBe(ok);
    if (why) expect(r.why).toMatch(why);
  });
});

describe('readiness', () => {
  const rows: Array<[string, Partial<AgentStatus>, boolean, RegExp?]> = [
    ['before the first check ends', { runningSince: T }, false, /first check has not finished/],
    ['the Node carries the verdict', { lastAttemptAt: T, lastSyncedAt: T }, true],
    [
      'the last publish failed',
      { lastAttemptAt: T, lastSyncedAt: T - 60_000, lastError: { step: 'publish', message: 'forbidden' } },
      false,
      /failed at publish: forbidden/,
    ],
    [
      'the CNI dirs could not be read',
      { lastAttemptAt: T, lastError: { step: 'read_files', message: 'EACCES' } },
      false,
      /failed at read_files: EACCES/,
    ],
    [
      'a check running for a moment after a success',
      { lastAttemptAt: T - 1_000, lastSyncedAt: T - 1_000, runningSince: T },
      true,
    ],
    [
      'a check waiting on the apiserver for longer than the bound',
      { lastAttemptAt: T - 60_000, lastSyncedAt: T - 60_000, runningSince: T - SLOW_CHECK_MS - 1 },
      false,
      /a check has been waiting for 30 s/,
    ],
  ];
  it.each(rows)('%s', (_name, s, ok, why) => {
    const r = readiness(status(s), T);
    expect(r.ok).toBe(ok);
    if (why) expect(r.why).toMatch(why);
  });
});
