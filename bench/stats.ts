/** Small statistics and timing helpers shared by the benchmark parts. */
import { performance } from 'node:perf_hooks';

/** Nearest-rank percentile of an ascending array (q in 0..1); NaN when empty. */
export function percentile(sorted: ArrayLike<number>, q: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[i];
}

/** Median; the mean of the two middle values when the count is even (so the median of two rounds is their mean). */
export function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

export function summary(values: number[]): { n: number; median: number; p95: number; max: number } {
  const s = [...values].sort((a, b) => a - b);
  return { n: s.length, median: percentile(s, 0.5), p95: percentile(s, 0.95), max: s.at(-1) ?? NaN };
}

/**
 * Median wall time of `fn` in milliseconds over `runs` timed calls, after `warmup` untimed ones (so the JIT
 * has settled). The result of each call is kept in a sink so the work cannot be optimised away.
 */
export function timeMedianMs(fn: () => unknown, runs: number, warmup = Math.min(runs, 5)): number {
  let sink: unknown;
  for (let i = 0; i < warmup; i++) sink = fn();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    sink = fn();
    times.push(performance.now() - t0);
  }
  if (sink === Symbol.for('never')) console.log(sink);
  return median(times);
}

/**
 * Nanoseconds per call of `fn(i)`, over `iterations` calls in one timed loop, best of `rounds` loops (the
 * minimum filters out the noisy neighbours' preemptions; the work per loop is identical).
 */
export function nsPerCall(fn: (i: number) => unknown, iterations: number, rounds = 5): number {
  let best = Infinity;
  let sink = 0;
  for (let r = 0; r < rounds; r++) {
    const t0 = performance.now();
    for (let i = 0; i < iterations; i++) if (fn(i)) sink++;
    best = Math.min(best, performance.now() - t0);
  }
  if (sink < 0) console.log(sink);
  return (best * 1e6) / iterations;
}

export const round = (x: number, digits = 2): number => (Number.isFinite(x) ? Number(x.toFixed(digits)) : x);

/**
 * Rounds of the echo-against-meshgate comparisons (`npm run bench` and `--before`): many one-second rounds. This
 * shared host's speed swings ±20 % within a second, so one round's B/A ratio scatters (0.63–1.06) however long
 * it is. Within one hour, one tree's median of 8–10 rounds of 3 s read 0.736 to 0.855; of 40 one-second rounds,
 * 0.785 to 0.845 over three setups, and two runs of 60 one-second pairs in one setup 0.826 and 0.834.
 */
export const DEFAULT_ROUNDS = { durationS: 1, rounds: 40 } as const;

/** The medians of the first and of the second half of `values` (in measuring order): whether a run drifted. */
export function halfMedians(values: number[]): [number, number] {
  const mid = Math.floor(values.length / 2);
  return [median(values.slice(0, mid)), median(values.slice(mid))];
}
