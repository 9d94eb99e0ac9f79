/** Go-style durations for flags (`100ms`, `30s`, `5m`, `1h30m`), so the agent's flags read like kubelet's. */

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Milliseconds, or undefined when `text` is not a positive duration such as `250ms` or `1m30s`. */
export function parseDuration(text: string): number | undefined {
  const parts = [...text.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== text) return undefined;
  const ms = parts.reduce((sum, [, n, unit]) => sum + Number(n) * UNITS[unit], 0);
  return ms > 0 ? Math.round(ms) : undefined;
}
