/**
 * The one duration parser of every flag and option (`100ms`, `30s`, `5m`, `1h30m`): Go's notation, as kubelet's and
 * kubectl's flags read. A bare number is refused rather than guessed to be seconds or milliseconds; so is anything
 * under 1 ms, and anything over setTimeout's limit (2^31-1 ms, ~24.8 days), which would fire at once.
 */

const UNITS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
const MAX_MS = 2_147_483_647;

/** Milliseconds, or a sentence saying why `text` is not a duration. */
export function parseDuration(text: string): number | string {
  const parts = [...text.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== text)
    return `"${text}" is not a duration (use e.g. 500ms, 30s, 5m or 1h30m)`;
  const ms = parts.reduce((sum, [, n, unit]) => sum + Number(n) * UNITS[unit], 0);
  if (ms < 1) return `"${text}" is shorter than 1ms`;
  if (ms > MAX_MS) return `"${text}" is too long (at most ${MAX_MS} ms, about 24 days)`;
  return Math.round(ms);
}
