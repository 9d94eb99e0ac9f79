/** The routes `--decompose` compares, and what it adds up for each. */
import { PARTS, type Part } from './classify.ts';

/** A: the echo; A′: the echo with a canned meshgate-sized patch; B: meshgate's mutate; C: its validate. */
export const ROUTES = { A: '/allow', 'A′': '/allow-sized', B: '/mutate', C: '/validate' } as const;
export type Route = keyof typeof ROUTES;
export const ORDER: readonly Route[] = ['A', 'A′', 'B', 'C'];

export interface RouteTotals {
  reviews: number;
  /** CPU by part, ns, summed over the route's phases. */
  ns: Record<Part, number>;
  samples: number;
  /** process.cpuUsage() over the phases, µs: perf's sum is checked against it. */
  cpuUs: number;
  rps: number[];
  errors: number;
}

export function emptyTotals(): Record<Route, RouteTotals> {
  const one = (): RouteTotals => ({
    reviews: 0,
    ns: Object.fromEntries(PARTS.map((p) => [p, 0])) as Record<Part, number>,
    samples: 0,
    cpuUs: 0,
    rps: [],
    errors: 0,
  });
  return { A: one(), 'A′': one(), B: one(), C: one() };
}
