/**
 * `npm run bench -- --peers`: meshgate next to the injectors people run, in one run. Same load generator
 * (bench/load.ts: autocannon, HTTPS, HTTP/1.1 keep-alive, no pipelining, the same connection count), same corpus
 * pods (as the apiserver sends them: bench/peers/shaped.ts), every peer in its own process pinned to the same CPU (the load generator on the other one). After a
 * preflight of every body with the peer's CA enforced and a warm-up, `rounds` rounds run each peer once, in an
 * order rotated every round; CPU and memory come from /proc for every peer alike (proc-stats.ts). Figures per peer
 * are medians over the rounds.
 */
import { compiledServer } from '../compiled.ts';
import { loadavg } from 'node:os';
import { startControlPlane, type ControlPlane } from '../../test/e2e/harness/index.ts';
import { preflight, type PreflightResult } from '../preflight.ts';
import { LOAD_CPU, startLoadChild, type LoadChild } from '../procs.ts';
import type { LoadResult } from '../load.ts';
import type { Review } from '../corpus.ts';
import { median, round } from '../stats.ts';
import { floorPeer, istioPeer, meshgatePeer, type Peer } from './peers.ts';
import { kyvernoPeer, type KyvernoUnavailable } from './kyverno.ts';
import { linkerdPeer } from './linkerd.ts';
import { sampleProc } from './proc-stats.ts';
import { apiserverShaped } from './shaped.ts';

export interface PeerOptions {
  connections: number;
  durationS: number;
  warmupS: number;
  rounds: number;
  verifiedNodes: string[];
  /** Kubelet version of the cluster's nodes: ≥ 1.33 makes Istio inject its proxy as a native sidecar. */
  kubeletVersion: string;
}

export interface PeerPhase extends Omit<LoadResult, 'type'> {
  peer: string;
  round: number;
  /** Server CPU (user + system, every thread) per review, ms. */
  cpuMsPerReview: number;
  rssMiB: number;
  peakRssMiB: number;
}

export interface PeerSummary {
  peer: string;
  what: string;
  bodies: number;
  preflight: PreflightResult;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  cpuMsPerReview: number;
  rssMiB: number;
  peakRssMiB: number;
  errors: number;
}

export interface PeersResult {
  summaries: PeerSummary[];
  phases: PeerPhase[];
  unavailable: Array<{ peer: string; why: string }>;
  istioInjected: number;
  loadavg: number[];
}

async function measure(
  peer: Peer,
  load: LoadChild,
  o: PeerOptions,
  durationS: number,
  roundNo: number,
): Promise<PeerPhase> {
  const before = sampleProc(peer.pid);
  const r = await load.run({
    url: peer.url,
    ca: peer.ca,
    path: peer.path,
    bodies: peer.bodies,
    connections: o.connections,
    durationS,
  });
  const after = sampleProc(peer.pid);
  const { type: _t, ...rest } = r;
  const answered = r.ok + r.non2xx;
  return {
    ...rest,
    peer: peer.name,
    round: roundNo,
    cpuMsPerReview: answered > 0 ? ((after.cpuS - before.cpuS) * 1000) / answered : NaN,
    rssMiB: after.rssMiB,
    peakRssMiB: after.peakRssMiB,
  };
}

/**
 * Starts every peer, measures them, and stops them all (and the control plane) whatever happens. `keepInjected`
 * gets the corpus pods as Istio's webhook left them (the companion's input), for `--before REF --companion`.
 */
export async function runPeers(
  reviews: Review[],
  o: PeerOptions,
  log: (s: string) => void,
  keepInjected?: (injected: Review[]) => void,
): Promise<PeersResult> {
  const peers: Peer[] = [];
  const unavailable: PeersResult['unavailable'] = [];
  let cp: ControlPlane | undefined;
  let load: LoadChild | undefined;
  try {
    log('starting a control plane for the peers that need one (Istio, Kyverno watch the cluster)');
    cp = await startControlPlane({
      nodes: o.verifiedNodes.map((name) => ({ name, kubeletVersion: o.kubeletVersion })),
      withScheduler: false,
      withControllerManager: false,
    });
    reviews = await apiserverShaped(cp, reviews, log);
    const istio = await istioPeer(cp, reviews);
    peers.push(istio);
    log(
      `istio: ${istio.injectedCount} of ${reviews.length} corpus pods injected by Istio's webhook (the companion's input)`,
    );
    keepInjected?.(istio.injected);
    const linkerd = await linkerdPeer(cp, reviews);
    peers.push(linkerd);
    log(`linkerd: ${linkerd.injectedCount} of ${reviews.length} corpus pods injected by Linkerd's webhook`);
    // In table order, before Istio; each is in `peers` as soon as it runs, so `finally` stops it.
    const own = [
      ['echo', 'meshgate transport only, /allow', 'custom', '/allow', reviews],
      ['meshgate custom', 'meshgate injects (mesh custom), /mutate', 'custom', '/mutate', reviews],
      [
        'meshgate istio',
        'meshgate adjusts Istio-injected pods (mesh istio), /mutate',
        'istio',
        '/mutate',
        istio.injected,
      ],
      // The companion's floor (issue 35): its bodies are 2.3x larger, and decoding them is most of its cost.
      ['echo istio', 'meshgate transport only, /allow, on the Istio-injected pods', 'istio', '/allow', istio.injected],
    ] as const;
    const server = compiledServer(log);
    for (const [i, [name, what, mesh, route, bodies]] of own.entries())
      peers.splice(i, 0, await meshgatePeer(name, what, mesh, route, [...bodies], o.verifiedNodes, server));
    // The floor under the companion's throughput (issue 35): no webhook in Node answers these bodies for less; and
    // meshgate's own handler behind that floor, what its reviews cost without a transport of its own.
    const floors = [
      [
        'floor',
        'bare node:https + JSON.parse of the body, answers allowed; Istio-injected pods',
        { floor: 'parse' },
        '/',
        istio.injected,
      ],
      [
        'floor raw',
        'bare node:https, body read but not parsed, answers allowed; Istio-injected pods',
        { floor: 'raw' },
        '/',
        istio.injected,
      ],
      [
        'bare own',
        "meshgate's /mutate handler behind the bare node:https server (mesh custom)",
        { floor: 'decide', mesh: 'custom', verifiedNodes: o.verifiedNodes },
        '/mutate',
        reviews,
      ],
      [
        'bare companion',
        "meshgate's /mutate handler behind the bare node:https server (mesh istio), Istio-injected pods",
        { floor: 'decide', mesh: 'istio', verifiedNodes: o.verifiedNodes },
        '/mutate',
        istio.injected,
      ],
    ] as const;
    for (const [i, [name, what, settings, path, bodies]] of floors.entries())
      peers.splice(own.length + i, 0, await floorPeer(name, what, settings, path, [...bodies], server));
    const kyverno = await kyvernoPeer(cp, reviews, log).catch(
      (err: Error): KyvernoUnavailable => ({ unavailable: `failed to start: ${err.message}` }),
    );
    if ('unavailable' in kyverno) unavailable.push({ peer: 'kyverno', why: kyverno.unavailable });
    else peers.push(kyverno);

    const checks = new Map<string, PreflightResult>();
    for (const p of peers) {
      const c = await preflight(p.url, p.ca, p.path, p.reviews, p.servername);
      checks.set(p.name, c);
      log(
        `preflight ${p.name.padEnd(16)} ${c.checked} bodies over HTTPS with its CA enforced: ${c.patched} patched, ${c.denied.length} denied`,
      );
    }
    load = await startLoadChild(LOAD_CPU);
    for (const p of peers) await measure(p, load, o, o.warmupS, 0);
    const phases: PeerPhase[] = [];
    for (let r = 1; r <= o.rounds; r++) {
      // Rotate the order every round, so a drift of the shared machine within a round favours no peer.
      const order = peers.map((_, i) => peers[(i + r - 1) % peers.length]);
      for (const p of order) {
        const ph = await measure(p, load, o, o.durationS, r);
        phases.push(ph);
        log(
          `round ${r} ${p.name.padEnd(16)} ${ph.rps.toFixed(0).padStart(6)} req/s  p50 ${ph.p50Ms.toFixed(2)} ms  p99 ${ph.p99Ms.toFixed(2)} ms  max ${ph.maxMs.toFixed(1)} ms  CPU ${ph.cpuMsPerReview.toFixed(3)} ms/review  RSS ${ph.rssMiB.toFixed(0)} MiB  errors ${ph.errors + ph.timeouts + ph.non2xx}`,
        );
      }
    }
    const summaries = peers.map((p): PeerSummary => {
      const mine = phases.filter((x) => x.peer === p.name);
      const med = (f: (x: PeerPhase) => number) => round(median(mine.map(f)), 3);
      return {
        peer: p.name,
        what: p.what,
        bodies: p.bodies.length,
        preflight: checks.get(p.name)!,
        rps: med((x) => x.rps),
        p50Ms: med((x) => x.p50Ms),
        p99Ms: med((x) => x.p99Ms),
        maxMs: round(Math.max(...mine.map((x) => x.maxMs)), 2),
        cpuMsPerReview: med((x) => x.cpuMsPerReview),
        rssMiB: med((x) => x.rssMiB),
        peakRssMiB: round(Math.max(...mine.map((x) => x.peakRssMiB)), 1),
        errors: mine.reduce((a, x) => a + x.errors + x.timeouts + x.non2xx, 0),
      };
    });
    return {
      summaries,
      phases,
      unavailable,
      istioInjected: istio.injectedCount,
      loadavg: loadavg().map((x) => round(x)),
    };
  } finally {
    await load?.stop();
    for (const p of peers.reverse()) await p.stop().catch(() => undefined);
    await cp?.stop();
  }
}
