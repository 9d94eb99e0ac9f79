/**
 * Part 1 (and the load for part 5): the transport baseline against the real work, in the same run, against
 * the real server in a child process with the load generator in another.
 *   A = POST /allow     decode the review, answer allowed (the transport: TLS, HTTP, JSON in and out)
 *   B = POST /mutate    the corpus pods (A sends the very same bodies, so only the admission work differs)
 *   C = POST /validate  the same pods with meshgate's patch applied offline
 * The server runs as the image runs meshgate (bench/compiled.ts: compiled JavaScript, the Dockerfile's Node flags),
 * so the ratios are those of what ships. Each route is warmed up once, then `rounds` rounds of A B C (C B A in even
 * rounds); the server's CPU is read over IPC around every phase.
 * The CPU profile (part 5) runs in a second server, from the TypeScript sources (so its lines are the sources'),
 * started with --cpu-prof.
 */
import { join } from 'node:path';
import type { Review } from './corpus.ts';
import { preflight, type PreflightResult } from './preflight.ts';
import { compiledServer } from './compiled.ts';
import { startLoadChild, startServerChild, type ChildPlacement, type LoadChild, type ServerChild } from './procs.ts';
import type { LoadResult } from './load.ts';
import type { ServerSettings } from './server.ts';
import { median } from './stats.ts';

export type Route = 'A' | 'B' | 'C';
export const PATHS: Record<Route, string> = { A: '/allow', B: '/mutate', C: '/validate' };

export interface HttpOptions {
  connections: number;
  durationS: number;
  warmupS: number;
  rounds: number;
  verifiedNodes: string[];
}

export interface Phase extends Omit<LoadResult, 'type'> {
  route: Route;
  round: number;
  /** Server CPU (user + system, all threads) per 1,000 answered reviews, in CPU-seconds. */
  cpuSPer1k: number;
  logBytesPerReview: number;
  serverRssMiB: number;
  /** The phase on the server's monotonic clock (µs), the clock of its CPU profile. */
  serverWindowUs: [number, number];
}

export type Bodies = Record<Route, string[]>;

export function bodiesFor(mutate: Review[], validate: Review[]): Bodies {
  const m = mutate.map((r) => JSON.stringify(r));
  return { A: m, B: m, C: validate.map((r) => JSON.stringify(r)) };
}

async function phase(
  server: ServerChild,
  load: LoadChild,
  o: HttpOptions,
  route: Route,
  bodies: string[],
  durationS: number,
  round: number,
  path = PATHS[route],
): Promise<Phase> {
  const before = await server.cpu();
  const logBefore = server.logBytes();
  const r = await load.run({ url: server.url, ca: server.ca, path, bodies, connections: o.connections, durationS });
  const after = await server.cpu();
  const answered = r.ok + r.non2xx;
  const { type: _type, ...rest } = r;
  return {
    ...rest,
    route,
    round,
    cpuSPer1k: answered > 0 ? ((after.cpuUs - before.cpuUs) / 1e6 / answered) * 1000 : NaN,
    logBytesPerReview: answered > 0 ? (server.logBytes() - logBefore) / answered : NaN,
    serverRssMiB: after.rssBytes / 2 ** 20,
    serverWindowUs: [before.monoUs, after.monoUs],
  };
}

/** Starts a server and a load generator, runs `body`, and always stops both. */
async function withProcesses<T>(
  settings: ServerSettings,
  execArgv: string[],
  body: (s: ServerChild, l: LoadChild) => Promise<T>,
  place: ChildPlacement = {},
): Promise<T> {
  const server = await startServerChild(settings, execArgv, place);
  let load: LoadChild | undefined;
  try {
    load = await startLoadChild();
    return await body(server, load);
  } finally {
    await load?.stop();
    await server.stop();
  }
}

export interface MainRun {
  phases: Phase[];
  /** A and B over one connection (one review in flight): the latency a pod create sees without queueing. */
  serial: Phase[];
  /** A and B at saturation with the logger at `info` (one line per review), same server. */
  info: Phase[];
  preflight: Record<Route, PreflightResult>;
  /** A with a canned patch as big as meshgate's (`/allow-sized`), next to B: B/A′ isolates meshgate's own work. */
  sized: Array<{ aSized: Phase; b: Phase; throughputRatio: number; cpuRatio: number }>;
}

/**
 * One server for everything comparable: warm-up of every route, `rounds` × (A B C / C B A) at saturation with the
 * logger at `warn`, then A and B over a single connection, then A and B with the logger at `info`.
 */
export async function mainRun(
  bodies: Bodies,
  reviews: { mutate: Review[]; validate: Review[] },
  o: HttpOptions,
  log: (s: string) => void,
): Promise<MainRun> {
  const image = compiledServer(log);
  return withProcesses(
    { logLevel: 'warn', verifiedNodes: o.verifiedNodes },
    image.execArgv,
    async (server, load) => {
      const checks = {
        A: await preflight(server.url, server.ca, PATHS.A, reviews.mutate),
        B: await preflight(server.url, server.ca, PATHS.B, reviews.mutate),
        C: await preflight(server.url, server.ca, PATHS.C, reviews.validate),
      };
      log(
        `preflight over HTTPS with the CA enforced: ${checks.B.checked} mutate bodies (${checks.B.patched} patched), ${checks.C.checked} validate bodies (${checks.C.denied.length} denied)`,
      );
      for (const d of checks.C.denied)
        log(`  FINDING: /validate denies meshgate's own injected pod ${d.uid}: ${d.message}`);
      for (const route of ['A', 'B', 'C'] as const) {
        log(`warm-up ${route} ${PATHS[route]} ${o.warmupS} s`);
        await phase(server, load, o, route, bodies[route], o.warmupS, 0);
      }
      const show = (what: string, p: Phase) =>
        log(
          `${what} ${p.route} ${PATHS[p.route].padEnd(9)} ${p.rps.toFixed(0).padStart(5)} req/s  p50 ${p.p50Ms.toFixed(2)} ms  p99 ${p.p99Ms.toFixed(2)} ms  ${p.cpuSPer1k.toFixed(3)} CPU-s/1k`,
        );
      const phases: Phase[] = [];
      for (let round = 1; round <= o.rounds; round++) {
        // Odd rounds run A B C, even rounds C B A: a drift of the shared machine within a round favours no route.
        for (const route of round % 2 === 1 ? (['A', 'B', 'C'] as const) : (['C', 'B', 'A'] as const)) {
          phases.push(await phase(server, load, o, route, bodies[route], o.durationS, round));
          show(`round ${round}`, phases.at(-1)!);
        }
      }
      // A′ then B back to back: the same answer size, so the ratio is meshgate's work alone.
      const sized: MainRun['sized'] = [];
      for (let round = 1; round <= Math.min(o.rounds, 10); round++) {
        const aSized = await phase(server, load, o, 'A', bodies.A, o.durationS, round, '/allow-sized');
        show(`round ${round} A′ (/allow-sized)`, aSized);
        const b = await phase(server, load, o, 'B', bodies.B, o.durationS, round);
        show(`round ${round}`, b);
        sized.push({ aSized, b, throughputRatio: b.rps / aSized.rps, cpuRatio: b.cpuSPer1k / aSized.cpuSPer1k });
      }
      log(
        `  same-size answers: throughput B/A′ ${median(sized.map((x) => x.throughputRatio)).toFixed(3)}, CPU/review B/A′ ${median(sized.map((x) => x.cpuRatio)).toFixed(3)} (median of ${sized.length} rounds; A′ answers a canned, pre-encoded 2.2 KB patch)`,
      );
      const serial: Phase[] = [];
      for (const route of ['A', 'B'] as const) {
        serial.push(await phase(server, load, { ...o, connections: 1 }, route, bodies[route], o.durationS / 2, 1));
        show('1 connection', serial.at(-1)!);
      }
      await server.setLogLevel('info');
      const info: Phase[] = [];
      for (const route of ['A', 'B'] as const) {
        info.push(await phase(server, load, o, route, bodies[route], o.durationS, 1));
        show('log level info', info.at(-1)!);
      }
      await server.setLogLevel('warn');
      return { phases, serial, info, preflight: checks, sized };
    },
    { script: image.script },
  );
}

/** Seconds per profiled phase: 2 × 4 s per route gives a few thousand samples each. */
const PROFILE_PHASE_S = 4;

export interface ProfiledRoute {
  route: Route;
  windowsUs: Array<[number, number]>;
  reviews: number;
}

/**
 * Part 5: one server under `--cpu-prof`, B A B A (PROFILE_PHASE_S each, so a burst of the neighbours'
 * load hits both routes alike). Returns the profile's path (written when the server exits) and each route's
 * windows on the profile's clock, so start-up (module compilation, key generation) is cut out and B's
 * per-review cost can be set against A's from the same process.
 */
export async function profileRun(
  bodies: Bodies,
  o: HttpOptions,
  dir: string,
  log: (s: string) => void,
): Promise<{ file: string; routes: Record<'A' | 'B', ProfiledRoute> }> {
  const name = 'server-mutate.cpuprofile';
  const execArgv = ['--cpu-prof', '--cpu-prof-dir', dir, '--cpu-prof-name', name];
  const routes = await withProcesses(
    { logLevel: 'warn', verifiedNodes: o.verifiedNodes },
    execArgv,
    async (server, load) => {
      await phase(server, load, o, 'B', bodies.B, o.warmupS, 0);
      const out: Record<'A' | 'B', ProfiledRoute> = {
        A: { route: 'A', windowsUs: [], reviews: 0 },
        B: { route: 'B', windowsUs: [], reviews: 0 },
      };
      for (const route of ['B', 'A', 'B', 'A'] as const) {
        const p = await phase(server, load, o, route, bodies[route], PROFILE_PHASE_S, 1);
        out[route].windowsUs.push(p.serverWindowUs);
        out[route].reviews += p.ok + p.non2xx;
      }
      log(
        `profiled (req/s under --cpu-prof, not comparable with the runs above): A ${(out.A.reviews / (2 * PROFILE_PHASE_S)).toFixed(0)}, B ${(out.B.reviews / (2 * PROFILE_PHASE_S)).toFixed(0)}`,
      );
      return out;
    },
  );
  return { file: join(dir, name), routes };
}
