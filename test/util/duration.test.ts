/**
 * The one duration parser (src/util/duration.ts) of every flag: the agent's, the repair controller's, uninstall's and
 * the validator's. Before it there were two, and they disagreed on `1h30m`.
 */
import { describe, expect, it } from 'vitest';
import { parseDuration } from '../../src/util/duration.ts';

describe('parseDuration', () => {
  it.each([
    ['100ms', 100],
    ['500ms', 500],
    ['5s', 5_000],
    ['30s', 30_000],
    ['1.5s', 1_500],
    ['1m', 60_000],
    ['5m', 300_000],
    ['1h', 3_600_000],
    ['1m30s', 90_000],
    ['1h30m', 5_400_000],
  ])('%s → %d ms', (text, ms) => expect(parseDuration(text)).toBe(ms));

  it.each([
    ['', /is not a duration/],
    ['5', /"5" is not a duration/],
    ['5sec', /is not a duration/],
    ['5 m', /is not a duration/],
    ['-1s', /is not a duration/],
    ['30d', /is not a duration/],
    ['0s', /shorter than 1ms/],
    ['0ms', /shorter than 1ms/],
    ['0.1ms', /shorter than 1ms/],
    ['999999m', /too long/],
  ])('refuses %j, saying why', (text, why) => expect(parseDuration(text)).toMatch(why));
});
