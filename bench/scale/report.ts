/**
 * `bench --scale`'s figures in tables, and the line from the measured sizes to any other (pure):
 * - what one more Node and one more guarded pod cost a daemon: the least-squares line through every measured size
 *   (steady RSS, and the start peak, against Nodes and guarded pods), in KiB;
 * - a size not measured (beyond the budget, or the docs' sizing rows) is the largest measured size plus those costs
 *   (a negative one, noise around a flat line, counts as none) times the difference, and is marked projected.
 * The chart's requests and limits per size: request = steady rounded up to 16 MiB, limit = the start peak with a
 * quarter more, rounded up to 32 MiB (docs/benchmarks.md §9 gives the measured rows).
 */
import { type CliFigures, describeCli } from './cli.ts';
import type { HeartbeatFigures } from './heartbeat.ts';
import type { Size } from './populate.ts';
import type { ReplicaFigures } from './replica.ts';
import { GUARDED_NAMESPACES, NAMESPACES } from './objects.ts';

export interface Step extends Size {
  guarded: number;
  createS: number;
  webhook: ReplicaFigures;
  repair: ReplicaFigures;
}

type Daemon = 'webhook' | 'repair';
type Metric = 'steadyMiB' | 'peakMiB';

export interface Costs {
  /** KiB per Node and per guarded pod, for each daemon and figure; undefined where the sizes were not measured. */
  perNode: Record<Daemon, Record<Metric, number | undefined>>;
  perGuardedPod: Record<Daemon, Record<Metric, number | undefined>>;
}

const KiB_PER_MiB = 1024;
const guardedOf = (pods: number) => Math.round((pods * GUARDED_NAMESPACES) / NAMESPACES);

/**
 * Least squares over every measured size: figure = a + perNode × Nodes + perPod × guarded pods (the sizes vary
 * Nodes alone, then pods alone, then both, so the two costs are told apart). Undefined with fewer than three sizes.
 */
function leastSquares(steps: readonly Step[], d: Daemon, m: Metric): { perNode: number; perPod: number } | undefined {
  const pts = steps.filter((s) => s[d].readyS !== undefined).map((s) => [1, s.nodes, s.guarded, s[d][m]]);
  if (pts.length < 3) return undefined;
  // Normal equations XᵀX β = Xᵀy, solved by Cramer's rule (3 × 3).
  const A = [0, 1, 2].map((i) => [0, 1, 2].map((j) => pts.reduce((sum, p) => sum + p[i] * p[j], 0)));
  const y = [0, 1, 2].map((i) => pts.reduce((sum, p) => sum + p[i] * p[3], 0));
  const det = (M: number[][]) =>
    M[0][0] * (M[1][1] * M[2][2] - M[1][2] * M[2][1]) -
    M[0][1] * (M[1][0] * M[2][2] - M[1][2] * M[2][0]) +
    M[0][2] * (M[1][0] * M[2][1] - M[1][1] * M[2][0]);
  const D = det(A);
  if (Math.abs(D) < 1e-9) return undefined;
  const col = (k: number) => det(A.map((row, i) => row.map((v, j) => (j === k ? y[i] : v))));
  return { perNode: (col(1) / D) * KiB_PER_MiB, perPod: (col(2) / D) * KiB_PER_MiB };
}

export function costs(steps: readonly Step[]): Costs {
  const each = (pick: 'perNode' | 'perPod') =>
    Object.fromEntries(
      (['webhook', 'repair'] as const).map((d) => [
        d,
        { steadyMiB: leastSquares(steps, d, 'steadyMiB')?.[pick], peakMiB: leastSquares(steps, d, 'peakMiB')?.[pick] },
      ]),
    ) as Costs['perNode'];
  return { perNode: each('perNode'), perGuardedPod: each('perPod') };
}

export interface Projected extends Size {
  guarded: number;
  measured: boolean;
  webhook: Record<Metric, number>;
  repair: Record<Metric, number>;
}

/** A size's figures: measured when a step had it, else from the largest measured step by the costs. */
export function projectTo(steps: readonly Step[], size: Size): Projected {
  const guarded = guardedOf(size.pods);
  const hit = steps.find((s) => s.nodes === size.nodes && s.pods === size.pods && s.webhook.readyS !== undefined);
  const pick = (s: Step, d: Daemon) => ({ steadyMiB: s[d].steadyMiB, peakMiB: s[d].peakMiB });
  if (hit) return { ...size, guarded, measured: true, webhook: pick(hit, 'webhook'), repair: pick(hit, 'repair') };
  const base = [...steps].reverse().find((s) => s.webhook.readyS !== undefined && s.repair.readyS !== undefined);
  const c = costs(steps);
  const at = (d: Daemon, m: Metric) =>
    base
      ? base[d][m] +
        (Math.max(0, c.perNode[d][m] ?? 0) * (size.nodes - base.nodes) +
          Math.max(0, c.perGuardedPod[d][m] ?? 0) * (guarded - base.guarded)) /
          KiB_PER_MiB
      : Number.NaN;
  const both = (d: Daemon) => ({ steadyMiB: at(d, 'steadyMiB'), peakMiB: at(d, 'peakMiB') });
  return { ...size, guarded, measured: false, webhook: both('webhook'), repair: both('repair') };
}

const up = (x: number, to: number) => Math.ceil(x / to) * to;
export const request = (steadyMiB: number) => up(steadyMiB, 16);
export const limit = (peakMiB: number) => up(peakMiB * 1.25, 32);

const f1 = (x: number | undefined) => (x === undefined || Number.isNaN(x) ? '–' : x.toFixed(1));
const n = (x: number) => x.toLocaleString('en-US');

/** The docs' cluster sizes. */
export const SIZES: readonly Size[] = [
  { nodes: 1_000, pods: 10_000 },
  { nodes: 5_000, pods: 50_000 },
  { nodes: 10_000, pods: 100_000 },
  { nodes: 15_000, pods: 150_000 },
  { nodes: 30_000, pods: 300_000 },
];

export function scaleReport(
  steps: readonly Step[],
  target: Size,
  heartbeats: HeartbeatFigures | undefined,
  cli: readonly CliFigures[],
  stoppedAt: string | undefined,
): { lines: string[]; last: string } {
  const lines: string[] = ['', '== scale: each size measured (RSS in MiB; ready in s; reviews in ms) =='];
  lines.push(
    '| Nodes | pods (guarded) | created in s | webhook ready | peak | steady | heap | worst review | p99 | repair ready | peak | steady | heap |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|',
  );
  for (const s of steps) {
    const w = s.webhook;
    const r = s.repair;
    lines.push(
      `| ${n(s.nodes)} | ${n(s.pods)} (${n(s.guarded)}) | ${s.createS.toFixed(0)} | ${f1(w.readyS)} | ${f1(w.peakMiB)} | ${f1(w.steadyMiB)} | ${f1(w.heapMiB)} | ${f1(w.reviews?.maxMs)} | ${f1(w.reviews?.p99Ms)} | ${f1(r.readyS)} | ${f1(r.peakMiB)} | ${f1(r.steadyMiB)} | ${f1(r.heapMiB)} |`,
    );
  }
  const c = costs(steps);
  lines.push('', 'cost of one more object (KiB, from the measured sizes):');
  for (const d of ['webhook', 'repair'] as const)
    lines.push(
      `  ${d}: per Node ${f1(c.perNode[d].steadyMiB)} steady / ${f1(c.perNode[d].peakMiB)} at start; per guarded pod ${f1(c.perGuardedPod[d].steadyMiB)} steady / ${f1(c.perGuardedPod[d].peakMiB)} at start`,
    );
  lines.push('', '== sizing: per cluster size (MiB; * projected from the measured sizes) ==');
  lines.push(
    '| Nodes | pods | webhook steady | start peak | request / limit | repair steady | start peak | request / limit |',
    '|---|---|---|---|---|---|---|---|',
  );
  for (const size of [...new Set([...SIZES, target].map((s) => JSON.stringify(s)))].map((j) => JSON.parse(j) as Size)) {
    const p = projectTo(steps, size);
    const mark = p.measured ? '' : '*';
    lines.push(
      `| ${n(p.nodes)} | ${n(p.pods)} | ${f1(p.webhook.steadyMiB)}${mark} | ${f1(p.webhook.peakMiB)}${mark} | ${request(p.webhook.steadyMiB)}Mi / ${limit(p.webhook.peakMiB)}Mi | ${f1(p.repair.steadyMiB)}${mark} | ${f1(p.repair.peakMiB)}${mark} | ${request(p.repair.steadyMiB)}Mi / ${limit(p.repair.peakMiB)}Mi |`,
    );
  }
  if (heartbeats) {
    const { node, lease } = heartbeats;
    lines.push('', `== a node agent's heartbeat (${node.beats} of each, the agent's own publisher) ==`);
    lines.push(
      '| heartbeat | apiserver CPU ms | etcd CPU ms | bytes to each Node watcher | Node watch events |',
      '|---|---|---|---|---|',
    );
    for (const [what, b] of [
      ['nodes/status patch (before)', node],
      ['Lease renewal (now)', lease],
    ] as const)
      lines.push(
        `| ${what} | ${b.apiserverCpuMs.toFixed(2)} | ${b.etcdCpuMs.toFixed(2)} | ${n(Math.round(b.nodeWatchBytes))} | ${b.nodeWatchEvents.toFixed(2)} |`,
      );
    const perS = target.nodes / 300;
    lines.push(
      `  at ${n(target.nodes)} Nodes (one heartbeat per node every 5 min, ${perS.toFixed(0)}/s): Node writes ${perS.toFixed(0)}/s → 0/s; each Node watcher ${((perS * node.nodeWatchBytes) / 1024).toFixed(0)} KiB/s → ${((perS * lease.nodeWatchBytes) / 1024).toFixed(0)} KiB/s; apiserver ${((perS * node.apiserverCpuMs) / 1000).toFixed(2)} → ${((perS * lease.apiserverCpuMs) / 1000).toFixed(2)} cores`,
    );
  }
  if (cli.length) {
    lines.push('', '== the CLI at the largest size ==');
    for (const f of cli) lines.push(`  ${describeCli(f)}`);
  }
  const last = [...steps].reverse().find((s) => s.webhook.readyS !== undefined && s.repair.readyS !== undefined);
  if (stoppedAt) lines.push('', `measured up to the last size in the table; stopped ${stoppedAt}`);
  if (last && (last.nodes !== target.nodes || last.pods !== target.pods)) {
    const p = projectTo(steps, target);
    lines.push(
      `projected to ${n(target.nodes)} Nodes, ${n(target.pods)} pods: webhook ${f1(p.webhook.steadyMiB)} MiB (start peak ${f1(p.webhook.peakMiB)}), repair ${f1(p.repair.steadyMiB)} MiB (start peak ${f1(p.repair.peakMiB)})`,
    );
  }
  const worst = (x: Record<Daemon, Record<Metric, number | undefined>>) =>
    Math.max(...(['webhook', 'repair'] as const).map((d) => x[d].steadyMiB ?? Number.NaN));
  const lastLine = last
    ? `scale: webhook ${f1(last.webhook.steadyMiB)} MiB (start peak ${f1(last.webhook.peakMiB)}) at ${last.nodes} nodes ${last.pods} pods, repair ${f1(last.repair.steadyMiB)} MiB (start peak ${f1(last.repair.peakMiB)}), per node ${f1(worst(c.perNode))} KB, per guarded pod ${f1(worst(c.perGuardedPod))} KB`
    : 'scale: no size measured';
  return { lines, last: lastLine };
}
