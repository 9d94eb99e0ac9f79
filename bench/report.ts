/**
 * Turns the measured phases into the figures the issue asks for (ratios against the transport baseline
 * within each round, their median, PASS/FAIL per target) and prints them as tables. Targets never fail the process: the
 * machine is shared and noisy, so the JSON records the verdict and a human reads the trend.
 */
import type { Phase, Route } from './http-bench.ts';
import { PATHS } from './http-bench.ts';
import { CRAFTED_TARGET_MS, craftedMs, slowestCrafted, type PathoShape } from './pathological.ts';
import type { CraftedRow } from './crafted.ts';
import type { FactsScale } from './facts-scale.ts';
import type { AgentLatency } from './agent-latency.ts';
import { halfMedians, median, round } from './stats.ts';

export const AGGREGATION =
  'ratios and targets: median of the ratio within each round (A, B, C back to back, in reverse order every other ' +
  'round, so slow drifts of the shared machine cancel); per-route rows marked * are the best round (higher req/s) of that route';

export interface Target {
  name: string;
  value: number;
  target: string;
  pass: boolean;
}

export function best(phases: Phase[], route: Route): Phase {
  const mine = phases.filter((p) => p.route === route);
  return mine.reduce((a, b) => (b.rps > a.rps ? b : a));
}

interface Ratios {
  throughputBA: number;
  throughputCA: number;
  p99BA: number;
  p99CA: number;
  /** Server CPU per review, B/A and C/A: the least noisy of these figures. */
  cpuBA: number;
  cpuCA: number;
  /** Server CPU the admission work adds per review on top of the transport (B − A, C − A), µs. */
  addedCpuUsMutate: number;
  addedCpuUsValidate: number;
}

export interface HttpSummary {
  best: Record<Route, Phase>;
  /** Median over rounds of the within-round ratios. */
  ratios: Ratios;
  perRound: Array<{ round: number } & Ratios>;
  targets: Target[];
}

function ratiosOf(get: (r: Route) => Phase): Ratios {
  const us = (p: Phase) => p.cpuSPer1k * 1000; // CPU-s per 1k reviews = CPU-ms per review; × 1000 → µs
  const [a, b, c] = [get('A'), get('B'), get('C')];
  return {
    throughputBA: round(b.rps / a.rps, 3),
    throughputCA: round(c.rps / a.rps, 3),
    p99BA: round(b.p99Ms / a.p99Ms, 3),
    p99CA: round(c.p99Ms / a.p99Ms, 3),
    cpuBA: round(b.cpuSPer1k / a.cpuSPer1k, 3),
    cpuCA: round(c.cpuSPer1k / a.cpuSPer1k, 3),
    addedCpuUsMutate: round(us(b) - us(a), 1),
    addedCpuUsValidate: round(us(c) - us(a), 1),
  };
}

export function summariseHttp(phases: Phase[]): HttpSummary {
  const rounds = [...new Set(phases.map((p) => p.round))];
  const perRound = rounds.map((r) => ({
    round: r,
    ...ratiosOf((route) => phases.find((p) => p.round === r && p.route === route)!),
  }));
  const keys = Object.keys(perRound[0]).filter((k) => k !== 'round') as Array<keyof Ratios>;
  const ratios = Object.fromEntries(
    keys.map((k) => [k, round(median(perRound.map((x) => x[k])), 3)]),
  ) as unknown as Ratios;
  return {
    best: { A: best(phases, 'A'), B: best(phases, 'B'), C: best(phases, 'C') },
    ratios,
    perRound,
    targets: [{ name: 'p99 B/A (mutate vs echo)', value: ratios.p99BA, target: '<= 1.5', pass: ratios.p99BA <= 1.5 }],
  };
}

const pad = (s: string | number, n: number) => String(s).padStart(n);
const f = (x: number, d = 2) => (Number.isFinite(x) ? x.toFixed(d) : 'n/a');

export function httpTable(phases: Phase[], s: HttpSummary): string {
  const rows = [
    `  ${'route'.padEnd(15)} ${pad('round', 5)} ${pad('req/s', 7)} ${pad('p50 ms', 7)} ${pad('p99 ms', 7)} ${pad('max ms', 7)} ${pad('CPU-s/1k', 9)} ${pad('loader', 7)} ${pad('non2xx', 6)} ${pad('errors', 6)}`,
  ];
  for (const p of phases) {
    const star = s.best[p.route] === p ? '*' : ' ';
    rows.push(
      `  ${`${p.route} ${PATHS[p.route]}`.padEnd(15)} ${pad(p.round + star, 5)} ${pad(f(p.rps, 0), 7)} ${pad(f(p.p50Ms), 7)} ${pad(f(p.p99Ms), 7)} ${pad(f(p.maxMs, 1), 7)} ${pad(f(p.cpuSPer1k, 3), 9)} ${pad(f(p.loaderCpuSPer1k, 3), 7)} ${pad(p.non2xx, 6)} ${pad(p.errors + p.timeouts, 6)}`,
    );
  }
  rows.push(`  (CPU-s/1k = server CPU-seconds per 1,000 reviews; loader = the load generator's; ${AGGREGATION})`);
  const line = (label: string, r: Ratios) =>
    `  ${label.padEnd(15)} throughput B/A ${f(r.throughputBA, 3)}  C/A ${f(r.throughputCA, 3)} | p99 B/A ${f(r.p99BA, 3)}  C/A ${f(r.p99CA, 3)} | CPU/review B/A ${f(r.cpuBA, 3)}  C/A ${f(r.cpuCA, 3)} | added CPU: mutate ${f(r.addedCpuUsMutate, 0)} µs, validate ${f(r.addedCpuUsValidate, 0)} µs`;
  for (const x of s.perRound) rows.push(line(`round ${x.round}`, x));
  rows.push(line('median', s.ratios));
  const tp = s.perRound.map((x) => x.throughputBA);
  rows.push(
    // A figure, not a target: issue 22 retired the 0.85 target, which this host's noise decides.
    `  spread of throughput B/A over the rounds: ${f(Math.min(...tp), 3)}–${f(Math.max(...tp), 3)}`,
    `  median of the first and of the second half of the rounds: ${halfMedians(tp)
      .map((x) => f(x, 3))
      .join(' and ')} (far apart: the host drifted during the run)`,
  );
  return rows.join('\n');
}

/** A and B over one connection: no queueing, so B − A is the latency meshgate's work adds to one review. */
export function serialTable(serial: Phase[]): string {
  const [a, b] = serial;
  const d = (x: number) => `${x >= 0 ? '+' : ''}${f(x, 3)}`;
  return `  one connection (no queueing): p50 A ${f(a.p50Ms, 3)} ms, B ${f(b.p50Ms, 3)} ms (${d(b.p50Ms - a.p50Ms)} ms); p99 A ${f(a.p99Ms, 3)} ms, B ${f(b.p99Ms, 3)} ms (${d(b.p99Ms - a.p99Ms)} ms); ${f(a.rps, 0)} vs ${f(b.rps, 0)} req/s`;
}

export function infoTable(info: Phase[], warnBest: Record<Route, Phase>): string {
  return info
    .map((p) => {
      const w = warnBest[p.route];
      return `  ${`${p.route} ${PATHS[p.route]}`.padEnd(15)} info: ${f(p.rps, 0)} req/s, p99 ${f(p.p99Ms)} ms, ${f(p.cpuSPer1k, 3)} CPU-s/1k, ${f(p.logBytesPerReview, 0)} log bytes/review | vs warn: CPU ×${f(p.cpuSPer1k / w.cpuSPer1k, 2)}, req/s ×${f(p.rps / w.rps, 2)}`;
    })
    .join('\n');
}

export function pathoTable(shapes: PathoShape[]): string {
  const rows = [
    `  ${'pod'.padEnd(15)} ${pad('scale', 5)} ${pad('KiB', 7)} ${pad('patch B', 7)} ${pad('decide ms', 9)} ${pad('handler ms', 10)} ${pad('+JSON ms', 9)}`,
  ];
  for (const s of shapes) {
    for (const r of s.rows)
      rows.push(
        `  ${s.shape.padEnd(15)} ${pad(`${r.scale}×`, 5)} ${pad(f(r.requestKiB, 0), 7)} ${pad(r.patchBytes, 7)} ${pad(f(r.decideMs, 3), 9)} ${pad(f(r.handlerMs, 3), 10)} ${pad(f(r.inProcessMs, 2), 9)}`,
      );
    rows.push(
      `  ${''.padEnd(15)} growth 2×/1×, 4×/1×: handler ${f(s.handlerRatio.x2)}, ${f(s.handlerRatio.x4)}; with JSON ${f(s.inProcessRatio.x2)}, ${f(s.inProcessRatio.x4)}  ${s.pass ? 'PASS' : 'FAIL'} (< 5 ms at 1×)`,
    );
  }
  rows.push(
    '  handler = mutate + encodeResponse; +JSON = JSON.parse(request) + decode + handler + JSON.stringify(response), in-process',
  );
  return rows.join('\n');
}

/**
 * One line per crafted review: its size, each webhook's decision and CPU ms (handler; whole review), and with
 * `before` (the same reviews through another tree) that tree's whole-review ms; then the slowest of this tree.
 */
export function craftedTable(rows: CraftedRow[], before?: CraftedRow[]): string {
  const was = new Map(before?.map((r) => [r.name, r]));
  const width = Math.max(...rows.map((r) => r.name.length));
  const cell = (t: CraftedRow['validate'] | undefined) =>
    t ? `${t.decision.padEnd(28)} ${pad(f(t.handlerMs, 1), 7)} ${pad(f(t.reviewMs, 1), 7)}` : ''.padEnd(44);
  const lines = [
    `  ${'crafted review'.padEnd(width)} ${pad('KiB', 5)} | ${'mutate: decision'.padEnd(28)} ${pad('handler', 7)} ${pad('review', 7)} | ${'validate: decision'.padEnd(28)} ${pad('handler', 7)} ${pad('review', 7)}${before ? ` | ${pad('before ms', 9)}` : ''}`,
  ];
  for (const r of rows) {
    const b = was.get(r.name);
    lines.push(
      `  ${r.name.padEnd(width)} ${pad(r.requestKiB, 5)} | ${cell(r.mutate)} | ${cell(r.validate)}${before ? ` | ${pad(b ? f(craftedMs(b), 1) : 'n/a', 9)}` : ''}`,
    );
  }
  lines.push(
    '  CPU ms (process.cpuUsage): handler = mutate or validate (pod parser + decide / checkPosture / checkUpdate);',
    "  review = the server's body checks and JSON parse + decode + handler + encodeResponse + serializeResponse",
    '  (bench/crafted-tree.ts: the median of 5 warm runs; a run of 1 s or more is reported alone)',
  );
  if (before) {
    const s = slowestCrafted(before);
    lines.push(`  before: slowest crafted review: ${s.name} ${f(s.ms, 1)} ms CPU`);
  }
  const s = slowestCrafted(rows);
  lines.push(`slowest crafted review: ${s.name} ${f(s.ms, 1)} ms CPU (target ≤ ${CRAFTED_TARGET_MS} ms)`);
  return lines.join('\n');
}

export function factsTable(x: FactsScale): string {
  const n = x.nodeLookupNs;
  const p = x.podLookupNs;
  return [
    `  ${x.nodes.count} nodes (${x.nodes.nodeJsonKiB.min}–${x.nodes.nodeJsonKiB.max} KiB JSON each): +${x.nodes.heapMB} MB heap  ${x.nodes.pass ? 'PASS' : 'FAIL'} (< 50 MB); relist ${x.nodes.relistMs} ms`,
    `    ns/call: get hit ${n.getHit}, get miss ${n.getMiss}, anyVerified ${n.anyVerified}, nativeSidecars ${n.nativeSidecars} (loop + call overhead ${x.callOverheadNs} ns included)`,
    `  ${x.pods.count} pods in PodNeedStore: +${x.pods.heapMB} MB heap; relist ${x.pods.relistMs} ms`,
    `    ns/call: get hit ${p.getHit}, get miss ${p.getMiss}`,
  ].join('\n');
}

export function agentTable(a: AgentLatency, label: string): string {
  const w = a.writeToPublishMs;
  const ops = Object.entries(a.byOperation)
    .map(([op, v]) => `${op} median ${v.median} / max ${v.max}`)
    .join('; ');
  return [
    `  ${label}: ${a.changes} changes, debounce ${a.debounceMs} ms: median ${w.median} ms, p95 ${w.p95} ms, max ${w.max} ms (${ops})`,
    `    agent work after the debounce: read dirs + verify ${a.readAndVerifyMs} ms (judging alone ${a.verifyOnlyMs} ms); intermediate publishes ${a.intermediatePublishes}`,
  ].join('\n');
}
