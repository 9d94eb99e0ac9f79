/**
 * `npm run bench -- --decompose [--duration S] [--rounds N]`: where the server's CPU per review goes, for the echo
 * (A, /allow), the echo with a meshgate-sized answer (A′, /allow-sized), meshgate's mutate (B) and validate (C,
 * also run so that, as in production and in the main run, the shared code sees both), sampled by Linux perf
 * (bench/decompose/perf.ts) and split into parts (classify.ts). The throughput ratio B/A scatters from hour to hour
 * on this host; CPU per review split by part, with the routes alternating in one run, says what B − A is made of,
 * and so what a target on B/A asks of meshgate's own code.
 *
 * The server runs as the image runs it (bench/compiled.ts), plus --perf-basic-prof, pinned to CPU 1 with the load
 * generator on CPU 0. Sampling costs the server a few percent; every route pays it alike.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { corpusWorkload } from '../corpus.ts';
import { compiledServer } from '../compiled.ts';
import { LOAD_CPU, SERVER_CPU, startLoadChild, startServerChild, type LoadChild } from '../procs.ts';
import { round } from '../stats.ts';
import { PARTS } from './classify.ts';
import { report } from './report.ts';
import { emptyTotals, ORDER, ROUTES, type Route } from './routes.ts';
import { perfUnavailable, readParts, record } from './perf.ts';

const CONNECTIONS = 16;
/**
 * A server serves this many rounds, then the next rounds get a fresh one. perf names JIT frames from
 * /tmp/perf-PID.map, where code the GC freed keeps its entry; over 32 phases in one server, new code at reused
 * addresses was charged to old functions (4.4 µs per review of "decision" in the echo's phases), while 16 phases
 * read 0.0–0.7 (the echo's decision row is the check). A server per round is no cure: after a 1 s warm-up its mutate
 * route was not yet at its steady speed (240–370 µs per review; B − A +89.6 µs against +47 to +62).
 */
const ROUNDS_PER_SERVER = 4;
/** Each route's warm-up in each fresh server. */
const WARMUP_S = 2;

export async function decomposeMain(
  flags: { duration?: string; rounds?: string },
  resultsDir: string,
  log: (s: string) => void,
): Promise<void> {
  const why = perfUnavailable();
  if (why) throw new Error(`--decompose needs Linux perf: ${why}`);
  const durationS = Number(flags.duration ?? 2);
  const rounds = Number(flags.rounds ?? 8);
  const { verifiedNodes, work } = corpusWorkload();
  // As the main run sends them: A, A′ and B the very same bodies, C the pods with meshgate's patch applied.
  const creates = work.mutate.map((s) => JSON.stringify(s.review));
  const bodies: Record<Route, string[]> = {
    A: creates,
    'A′': creates,
    B: creates,
    C: work.validate.map((s) => JSON.stringify(s.review)),
  };
  log(
    `\n== decompose: server CPU per review by part, sampled by perf; ${creates.length} corpus pod CREATE reviews, ${CONNECTIONS} connections, ${durationS} s × ${rounds} rounds per route; load average ${loadavg()
      .map((x) => round(x))
      .join(' ')} ==`,
  );
  const compiled = compiledServer(log);
  const dir = mkdtempSync(join(tmpdir(), 'meshgate-decompose-'));
  const totals = emptyTotals();
  /** Rounds `first`… (up to ROUNDS_PER_SERVER of them) in a server of their own. */
  const someRounds = async (load: LoadChild, first: number) => {
    const server = await startServerChild(
      { logLevel: 'silent', verifiedNodes },
      // --perf-basic-prof also turns on V8's log, by default a file per isolate in the working directory.
      [...compiled.execArgv, '--perf-basic-prof', '--no-logfile-per-isolate', `--logfile=${join(dir, 'v8.log')}`],
      { cpu: SERVER_CPU, script: compiled.script },
    );
    try {
      const run = (route: Route, s: number) =>
        load.run({
          url: server.url,
          ca: server.ca,
          path: ROUTES[route],
          bodies: bodies[route],
          connections: CONNECTIONS,
          durationS: s,
        });
      for (const route of ORDER) await run(route, WARMUP_S);
      for (let i = first; i < Math.min(rounds, first + ROUNDS_PER_SERVER); i++) {
        for (const route of i % 2 === 0 ? ORDER : [...ORDER].reverse()) {
          const file = join(dir, `${i}-${ROUTES[route].slice(1)}.data`);
          const before = await server.cpu();
          const stop = await record(server.pid, file);
          const r = await run(route, durationS);
          await stop();
          const after = await server.cpu();
          const parts = await readParts(file);
          rmSync(file);
          const t = totals[route];
          t.reviews += r.ok + r.non2xx;
          t.errors += r.non2xx + r.errors + r.timeouts;
          t.cpuUs += after.cpuUs - before.cpuUs;
          t.samples += parts.samples;
          t.rps.push(r.rps);
          for (const p of PARTS) t.ns[p] += parts.ns[p];
          log(
            `  round ${i + 1} ${route.padEnd(2)} ${ROUTES[route].padEnd(13)} ${Math.round(r.rps)} reviews/s, ${round((after.cpuUs - before.cpuUs) / (r.ok + r.non2xx), 1)} µs CPU per review, ${parts.samples} samples`,
          );
        }
      }
    } finally {
      await server.stop();
      // The JIT symbol map node wrote for perf.
      rmSync(join('/tmp', `perf-${server.pid}.map`), { force: true });
    }
  };
  try {
    const load = await startLoadChild(LOAD_CPU);
    try {
      for (let i = 0; i < rounds; i += ROUNDS_PER_SERVER) await someRounds(load, i);
    } finally {
      await load.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const errors = ORDER.filter((r) => totals[r].errors > 0);
  if (errors.length > 0) throw new Error(`errored answers on ${errors.map((r) => ROUTES[r]).join(', ')}`);

  const bound = report(totals, log);
  const out = `${resultsDir}decompose.json`;
  writeFileSync(
    out,
    `${JSON.stringify({ generatedAt: new Date().toISOString(), durationS, rounds, connections: CONNECTIONS, routes: ROUTES, totals, bound }, null, 2)}\n`,
  );
  log(`JSON: ${out}`);
}
