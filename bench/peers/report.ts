/**
 * The peer table, the targets of issue 14 (meshgate ≥ 5× Istio's injector throughput, p99 ≤ 1/5 of Istio's, no
 * more memory) and the one `peer ratio:` line `npm run bench -- --peers` ends with. "meshgate" in the ratios is
 * meshgate injecting its own proxy (mesh custom): like Istio's webhook, it turns a plain pod into an injected one.
 * Memory is the resident set at the end of the peer's last phase (VmRSS; VmHWM, the peak, is shown beside it).
 */
import type { Target } from '../report.ts';
import { round } from '../stats.ts';
import type { PeersResult, PeerSummary } from './run.ts';

const pad = (s: string | number, n: number) => String(s).padStart(n);
const f = (x: number, d = 2) => (Number.isFinite(x) ? x.toFixed(d) : 'n/a');

export function peerTable(r: PeersResult): string {
  const rows = [
    `  ${'peer'.padEnd(16)} ${pad('req/s', 7)} ${pad('p50 ms', 7)} ${pad('p99 ms', 7)} ${pad('max ms', 7)} ${pad('CPU ms/review', 13)} ${pad('core', 5)} ${pad('RSS MiB', 8)} ${pad('peak', 6)} ${pad('errors', 6)}  what`,
  ];
  for (const s of r.summaries) {
    rows.push(
      `  ${s.peer.padEnd(16)} ${pad(f(s.rps, 0), 7)} ${pad(f(s.p50Ms), 7)} ${pad(f(s.p99Ms), 7)} ${pad(f(s.maxMs, 1), 7)} ${pad(f(s.cpuMsPerReview, 3), 13)} ${pad(`${f((s.rps * s.cpuMsPerReview) / 10, 0)}%`, 5)} ${pad(f(s.rssMiB, 0), 8)} ${pad(f(s.peakRssMiB, 0), 6)} ${pad(s.errors, 6)}  ${s.what}; ${s.preflight.patched}/${s.bodies} patched, ${s.preflight.denied.length} denied`,
    );
  }
  for (const u of r.unavailable) rows.push(`  ${u.peer.padEnd(16)} not measured: ${u.why}`);
  rows.push(
    "  (medians over the rounds; max = the largest of any round; CPU = the peer process's user + system time, every thread, from /proc;",
    '   core = req/s × CPU per review: how much of its core the peer had; below ~95 % other processes shared it)',
  );
  return rows.join('\n');
}

export interface PeerRatios {
  throughput: number;
  p99: number;
  cpu: number;
  rss: number;
}

const ratios = (a: PeerSummary, b: PeerSummary): PeerRatios => ({
  throughput: round(a.rps / b.rps, 2),
  p99: round(a.p99Ms / b.p99Ms, 3),
  cpu: round(a.cpuMsPerReview / b.cpuMsPerReview, 3),
  rss: round(a.rssMiB / b.rssMiB, 2),
});

/**
 * The companion path (meshgate adjusting what Istio's injector wrote, issue 35): its CPU per review against
 * meshgate's own injection, and its throughput against Istio's injector, both from this run.
 *
 * Throughput is compared per CPU-second: reviews answered per second of the server's own CPU (1 / CPU per review),
 * what each server answers with its core to itself. The req/s a phase saw is printed beside it: on this shared host
 * (2 cores, up to 8 sessions, load average 5–17 during the issue-35 runs) every server's core is shared with other
 * tenants' processes, so a phase's req/s measures how much of the core it got as much as the server: in one such run
 * the peers used 13–94 % of their core in a phase (req/s × CPU per review), meshgate's own path 567–2,920 req/s over
 * five rounds. Where the core is the server's alone both figures agree: every peer saturates it (req/s × CPU per
 * review ≈ 1 CPU-second per second).
 */
export interface CompanionRatios {
  cpuOfOwn: number;
  /** The companion's transport alone (/allow on the same Istio-injected bodies) against meshgate's own path. */
  transportOfOwn?: number;
  /** Istio's CPU per review over the companion's: their throughputs per CPU-second. */
  throughputOfIstio: number;
  /** Median req/s over median req/s, as the phases saw them. */
  observedOfIstio: number;
  /** Istio's CPU per review over 30: what the throughput target leaves the companion per review, ms. */
  targetMs: number;
  /**
   * The floor peers (floor-server.ts: bare node:https, with JSON.parse of the body and without) against Istio per
   * CPU-second, and their CPU per review in ms: the most any webhook in Node reaches on this host.
   */
  floor?: { ms: number; ofIstio: number; rawMs?: number; rawOfIstio?: number };
  /**
   * meshgate's own handler behind the floor's bare server (floor-server.ts, mode decide), on both paths: the two
   * ratios with no transport of meshgate's around its decision, the most a rewrite of that transport could reach.
   */
  bare?: { ownMs: number; companionMs: number; cpuOfOwn: number; ofIstio: number };
}

export function peerTargets(
  r: PeersResult,
): { ratios: PeerRatios; companion?: PeerRatios; companionPath?: CompanionRatios; targets: Target[] } | undefined {
  const by = (name: string) => r.summaries.find((s) => s.peer === name);
  const [mg, istio, companion, echoIstio, floor, rawFloor, bareOwn, bareCompanion] = [
    by('meshgate custom'),
    by('istio'),
    by('meshgate istio'),
    by('echo istio'),
    by('floor'),
    by('floor raw'),
    by('bare own'),
    by('bare companion'),
  ];
  if (!mg || !istio) return undefined;
  const x = ratios(mg, istio);
  const path = companion && {
    cpuOfOwn: round(companion.cpuMsPerReview / mg.cpuMsPerReview, 2),
    transportOfOwn: echoIstio && round(echoIstio.cpuMsPerReview / mg.cpuMsPerReview, 2),
    throughputOfIstio: round(istio.cpuMsPerReview / companion.cpuMsPerReview, 1),
    observedOfIstio: round(companion.rps / istio.rps, 1),
    targetMs: round(istio.cpuMsPerReview / 30, 3),
    floor: floor && {
      ms: floor.cpuMsPerReview,
      ofIstio: round(istio.cpuMsPerReview / floor.cpuMsPerReview, 1),
      rawMs: rawFloor?.cpuMsPerReview,
      rawOfIstio: rawFloor && round(istio.cpuMsPerReview / rawFloor.cpuMsPerReview, 1),
    },
    bare: bareOwn &&
      bareCompanion && {
        ownMs: bareOwn.cpuMsPerReview,
        companionMs: bareCompanion.cpuMsPerReview,
        cpuOfOwn: round(bareCompanion.cpuMsPerReview / bareOwn.cpuMsPerReview, 2),
        ofIstio: round(istio.cpuMsPerReview / bareCompanion.cpuMsPerReview, 1),
      },
  };
  return {
    ratios: x,
    companion: companion ? ratios(companion, istio) : undefined,
    companionPath: path,
    targets: [
      { name: 'peers: meshgate/istio throughput', value: x.throughput, target: '>= 5', pass: x.throughput >= 5 },
      { name: 'peers: meshgate/istio p99', value: x.p99, target: '<= 0.2', pass: x.p99 <= 0.2 },
      { name: 'peers: meshgate/istio RSS', value: x.rss, target: '<= 1', pass: x.rss <= 1 },
      ...(path
        ? [
            {
              name: "peers: companion/meshgate's own CPU per review",
              value: path.cpuOfOwn,
              target: '<= 1.5',
              pass: path.cpuOfOwn <= 1.5,
            },
            {
              name: 'peers: companion/istio throughput per CPU-second',
              value: path.throughputOfIstio,
              target: '>= 30',
              pass: path.throughputOfIstio >= 30,
            },
          ]
        : []),
    ],
  };
}

/**
 * The companion path's two ratios in one line (issue 35's targets: ≤ 1.5× and ≥ 30×), the req/s ratio beside; then
 * how much of its CPU per review is the transport of its larger bodies alone.
 */
export function companionLine(c: CompanionRatios): string {
  const line =
    `companion: cpu/review ${f(c.cpuOfOwn)}× of meshgate's own, throughput ${f(c.throughputOfIstio, 1)}× istio ` +
    `(per CPU-second; ${f(c.observedOfIstio, 1)}× in the req/s the phases saw)`;
  const lines = [line];
  if (c.transportOfOwn !== undefined)
    lines.push(
      `  of which its transport alone (/allow on the same bodies): ${f(c.transportOfOwn)}× of meshgate's own ` +
        `whole path; its decision: ${f(c.cpuOfOwn - c.transportOfOwn)}×`,
    );
  if (c.floor)
    lines.push(
      `  30× istio is ${f(c.targetMs, 3)} ms/review; the floor, bare node:https on the same bodies: ` +
        `${f(c.floor.ms, 3)} ms with JSON.parse (${f(c.floor.ofIstio, 1)}× istio)` +
        (c.floor.rawMs === undefined
          ? ''
          : `, ${f(c.floor.rawMs, 3)} ms without (${f(c.floor.rawOfIstio ?? NaN, 1)}× istio)`),
    );
  if (c.bare)
    lines.push(
      `  meshgate's handler behind that bare server (no fastify, metrics or log): own ${f(c.bare.ownMs, 3)}, ` +
        `companion ${f(c.bare.companionMs, 3)} ms/review: cpu/review ${f(c.bare.cpuOfOwn)}× of own, ` +
        `throughput ${f(c.bare.ofIstio, 1)}× istio`,
    );
  return lines.join('\n');
}

/** The closing line: meshgate (custom) divided by Istio's injector. */
export function ratioLine(x: PeerRatios): string {
  return `peer ratio: meshgate/istio throughput ${f(x.throughput)}, p99 ${f(x.p99, 3)}, cpu ${f(x.cpu, 3)}, rss ${f(x.rss)}`;
}
