/** The table `--decompose` prints, and what the throughput target asks of B given A. */
import { median, round } from '../stats.ts';
import { PART_LABELS, PARTS, type Part } from './classify.ts';
import { ORDER, type Route, type RouteTotals } from './routes.ts';

/** The throughput target of issue 14: meshgate's mutate route at least this share of the echo's reviews per second. */
const THROUGHPUT_TARGET = 0.85;

export interface Bound {
  throughputBA: number;
  cpuRatioAB: number;
  cpuRatioAAsized: number;
  budgetUs: number;
  addedUs: number;
  decisionUs: number;
  answerSizeUs: number;
}

/** Logs the table of parts per route and the target's budget; returns the budget's figures. */
export function report(totals: Record<Route, RouteTotals>, log: (s: string) => void): Bound {
  const us = (r: Route, p: Part) => totals[r].ns[p] / 1000 / totals[r].reviews;
  const sampled = (r: Route) => PARTS.reduce((s, p) => s + us(r, p), 0);
  const measured = (r: Route) => totals[r].cpuUs / totals[r].reviews;
  const cell = (x: number | string) => (typeof x === 'number' ? x.toFixed(1) : x).padStart(8);
  const signed = (x: number) => cell(`${x >= 0 ? '+' : ''}${x.toFixed(1)}`);
  /** A row: each route's figure, then B − A, A′ − A and B − A′. */
  const row = (name: string, f: (r: Route) => number) =>
    `${name.padEnd(28)}${ORDER.map((r) => cell(f(r))).join('')}${signed(f('B') - f('A'))}${signed(f('A′') - f('A'))}${signed(f('B') - f('A′'))}`;
  log(
    [
      `${'µs of server CPU per review'.padEnd(28)}${[...ORDER, 'B − A', 'A′ − A', 'B − A′'].map(cell).join('')}`,
      ...PARTS.map((p) => row(p, (r) => us(r, p))),
      row('all, sampled', sampled),
      row('all, process.cpuUsage', measured),
    ].join('\n'),
  );
  for (const p of PARTS) log(`  ${p}: ${PART_LABELS[p]}`);

  // At saturation a route's reviews per second are the inverse of its CPU per review, so the target reads as a budget.
  const [ma, ma2, mb] = [measured('A'), measured('A′'), measured('B')];
  const budget = ma / THROUGHPUT_TARGET - ma;
  const rpsRatio = median(totals.B.rps.map((b, i) => b / totals.A.rps[i]));
  const bound: Bound = {
    throughputBA: round(rpsRatio, 3),
    cpuRatioAB: round(ma / mb, 3),
    cpuRatioAAsized: round(ma / ma2, 3),
    budgetUs: round(budget, 1),
    addedUs: round(mb - ma, 1),
    decisionUs: round(us('B', 'decision'), 1),
    answerSizeUs: round(ma2 - ma, 1),
  };
  log(
    `B/A under perf: ${bound.throughputBA} in reviews per second, ${bound.cpuRatioAB} in CPU per review (A′ alone: ${bound.cpuRatioAAsized})`,
  );
  log(
    `B/A ≥ ${THROUGHPUT_TARGET} allows B ${bound.budgetUs} µs more CPU per review than A; B adds ${bound.addedUs} µs: meshgate's decision ${bound.decisionUs} µs, and a same-size answer with no decision (A′ − A) ${bound.answerSizeUs} µs`,
  );
  return bound;
}
