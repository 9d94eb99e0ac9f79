/**
 * `npm run bench`: what meshgate's admission path costs on top of the transport, and the supporting figures.
 *   1. HTTP: echo baseline (A) vs /mutate (B) vs /validate (C), server and load generator in separate processes
 *   2. in-process cost of a corpus review; the body parser's poisoning check (meshgate's vs fastify's);
 *      pathological pods through decide / mutate+encode, at 1×, 2×, 4× size; crafted reviews, CPU ms each through
 *      both webhooks (child process), and the slowest of them
 *   3. node-fact and pod-mode caches at 5,000 nodes / 50,000 pods (child with --expose-gc)
 *   4. node agent: CNI conf change → verdict published (and, with --with-apiserver, → Node updated)
 *   5. one CPU profile of the server under route B, summarised
 * Prints tables and writes bench/results/latest.json. Targets print PASS/FAIL but never set the exit code.
 * Flags: --with-apiserver, --duration S (per measured phase), --rounds N: by default 40 rounds of 1 s (stats.ts,
 * DEFAULT_ROUNDS: only the median of many rounds is stable on this host).
 * Run instead, on their own: --peers (meshgate next to Istio's and Kyverno's injectors: bench/peers), --burst
 * [--pods N] (pod creates through a real apiserver with each webhook: bench/burst), --before REF (this tree
 * against REF's, in-process and over HTTP in the same run: bench/compare), --decompose (the server's CPU per review
 * split by part, sampled by Linux perf: bench/decompose), --crafted [--before REF] (part 2's crafted reviews
 * alone, CPU ms each; with --before, REF's tree too in the same run: bench/crafted.ts), --footprint [--before REF]
 * (the daemons' memory after a steady minute against a real apiserver, beside a bare Node process: bench/footprint),
 * --guard (one pass of the node agent's proxy guard over this machine's /proc with guarded containers: bench/guard.ts),
 * --scale [--scale-nodes N] [--scale-pods P] [--budget MIN] [--scale-save DIR] [--scale-from DIR/N-P] [--scale-running] [--before REF]
 * (the webhook and repair controller started fresh as a real apiserver's cluster grows to N Nodes and P pods,
 * projected past what the budget reaches; the cluster kept at each size, or restored from one; REF's CLI beside
 * this tree's: bench/scale).
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { testConfig } from '../test/support/config.ts';
import { isolateThisRun } from '../test/support/isolation.ts';
import { NODE_VERIFIED_LABEL } from '../src/contract/names.ts';
import { nodeFactsFromState } from '../src/facts/node-state.ts';
import { buildWorkload, loadSamples, pinnedNodes } from './corpus.ts';
import { bodiesFor, mainRun, profileRun, type HttpOptions } from './http-bench.ts';
import { CRAFTED_TARGET_MS, RUNS, runCrafted, runPathological, slowestCrafted } from './pathological.ts';
import { measureInProcess } from './in-process.ts';
import type { FactsScale } from './facts-scale.ts';
import { measureAgentLatency } from './agent-latency.ts';
import { forkForResult } from './procs.ts';
import { formatDiff, formatSummary, perReviewDiff, summarise } from './profile.ts';
import {
  AGGREGATION,
  agentTable,
  craftedTable,
  serialTable,
  factsTable,
  httpTable,
  infoTable,
  pathoTable,
  summariseHttp,
  type Target,
} from './report.ts';
import { DEFAULT_ROUNDS, round } from './stats.ts';

const started = performance.now();
const { values: flags } = parseArgs({
  options: {
    'with-apiserver': { type: 'boolean', default: false },
    peers: { type: 'boolean', default: false },
    burst: { type: 'boolean', default: false },
    decompose: { type: 'boolean', default: false },
    crafted: { type: 'boolean', default: false },
    footprint: { type: 'boolean', default: false },
    guard: { type: 'boolean', default: false },
    scale: { type: 'boolean', default: false },
    'scale-nodes': { type: 'string' },
    'scale-pods': { type: 'string' },
    'scale-save': { type: 'string' },
    'scale-from': { type: 'string' },
    'scale-running': { type: 'boolean' },
    budget: { type: 'string' },
    before: { type: 'string' },
    companion: { type: 'boolean', default: false },
    pods: { type: 'string', default: '2000' },
    // Each mode has its own defaults (main and --before: DEFAULT_ROUNDS; --peers and --decompose: their main.ts).
    duration: { type: 'string' },
    rounds: { type: 'string' },
  },
});
// Numbers are checked here, once: a mistyped one would otherwise run a whole benchmark of NaN-second phases.
for (const [name, integer] of [
  ['duration', false],
  ['rounds', true],
  ['pods', true],
  ['scale-nodes', true],
  ['scale-pods', true],
  ['budget', false],
] as const) {
  const v = flags[name];
  if (v !== undefined && !(Number(v) > 0 && (!integer || Number.isInteger(Number(v))))) {
    console.error(`bench: --${name} ${JSON.stringify(v)}: expected a positive ${integer ? 'whole number' : 'number'}`);
    process.exit(2);
  }
}
if (flags.companion && !flags.before) {
  console.error('bench: --companion compares two trees on the companion path: give --before REF with it');
  process.exit(2);
}
// Every process of a bench run (servers, load generators, apiservers, Istio's injector, Kyverno) lives in a network
// namespace of its own that holds only lo (issue 21): this re-executes the command under `unshare --net`.
await isolateThisRun('bench');
const resultsDir = fileURLToPath(new URL('./results/', import.meta.url));
mkdirSync(resultsDir, { recursive: true });
const log = (s: string) => console.log(s);

// The crafted reviews alone, for this tree and (--before) another, in one run.
if (flags.crafted) {
  const { craftedMain } = await import('./crafted-main.ts');
  craftedMain(flags.before, resultsDir, log);
  process.exit(0);
}
// The daemons' memory, in a network namespace of its own; --before REF there runs REF's daemons beside this tree's.
if (flags.footprint) {
  await (await import('./footprint/main.ts')).footprintMain(flags, resultsDir, log);
  process.exit(0);
}
// The node agent's proxy guard: one pass over this machine's /proc with guarded containers (as root).
if (flags.guard) {
  const figures = await (await import('./guard.ts')).guardBench(log);
  writeFileSync(`${resultsDir}/guard.json`, `${JSON.stringify(figures, null, 2)}\n`);
  process.exit(0);
}
// The webhook's and repair controller's memory as the cluster grows to 15,000 Nodes and 150,000 pods (issue 32).
if (flags.scale) {
  await (await import('./scale/main.ts')).scaleMain(flags, resultsDir, log);
  process.exit(0);
}
// The comparisons that need other programs or another tree run on their own (each prints its targets last).
if (flags.peers || flags.burst || flags.before || flags.decompose) {
  if (flags.before) await (await import('./compare/main.ts')).compareMain(flags.before, flags, resultsDir, log);
  if (flags.burst) await (await import('./burst/main.ts')).burstMain(Number(flags.pods), resultsDir, log);
  if (flags.peers) await (await import('./peers/main.ts')).peersMain(flags, resultsDir, log);
  if (flags.decompose) await (await import('./decompose/main.ts')).decomposeMain(flags, resultsDir, log);
  process.exit(0);
}
const section = (s: string) => console.log(`\n== ${s} ==`);

function cpuModel(): string {
  try {
    return /model name\s*:\s*(.*)/.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? cpus()[0]?.model ?? 'unknown';
  } catch {
    return cpus()[0]?.model ?? 'unknown';
  }
}

const machine = {
  nproc: availableParallelism(),
  cpuModel: cpuModel(),
  node: process.version,
  loadavgAtStart: loadavg().map((x) => round(x)),
};
log(
  `meshgate bench on ${machine.nproc} CPUs (${machine.cpuModel}), Node ${machine.node}, load average ${machine.loadavgAtStart.join(' ')}`,
);

// The workload: corpus pods, the facts the server will hold, and each pod's verdict computed offline.
const samples = loadSamples();
const verifiedNodes = pinnedNodes(samples);
const config = testConfig('custom');
const facts = nodeFactsFromState(
  { nodes: Object.fromEntries(verifiedNodes.map((n) => [n, { verified: true, kubeletVersion: 'v1.34.1' }])) },
  'bench',
);
const work = buildWorkload(samples, { config, nodes: facts });
const reviews = { mutate: work.mutate.map((s) => s.review), validate: work.validate.map((s) => s.review) };
const bodies = bodiesFor(reviews.mutate, reviews.validate);
const sizes = bodies.B.map((b) => Buffer.byteLength(b)).sort((a, b) => a - b);
const http: HttpOptions = {
  connections: 16,
  durationS: Number(flags.duration ?? DEFAULT_ROUNDS.durationS),
  warmupS: 2,
  rounds: Number(flags.rounds ?? DEFAULT_ROUNDS.rounds),
  verifiedNodes,
};

section('1. transport baseline vs admission work (HTTPS, keep-alive, no pipelining)');
log(
  `workload: ${bodies.B.length} pod CREATE reviews from ../shared/corpus (${sizes[0]}–${sizes.at(-1)} bytes, median ${sizes[sizes.length >> 1]}); decisions ${JSON.stringify(work.mix)}`,
);
log(
  `/validate bodies: the ${bodies.C.length} patched pods with meshgate's patch applied; ${http.connections} connections, ${http.durationS} s per phase, warm-up ${http.warmupS} s per route`,
);
const main = await mainRun(bodies, reviews, http, log);
const httpSummary = summariseHttp(main.phases);
log(httpTable(main.phases, httpSummary));
log(serialTable(main.serial));
for (const t of httpSummary.targets) log(`  ${t.pass ? 'PASS' : 'FAIL'}  ${t.name} = ${t.value} (target ${t.target})`);

log('logging cost (same server, logger switched to info: one line per review):');
log(infoTable(main.info, httpSummary.best));

section(
  `2. in-process cost per review: the corpus, then pathological pods (median of ${RUNS.core} runs, ${RUNS.withJson} with the JSON work)`,
);
const inProcess = measureInProcess(reviews.mutate, { config, nodes: facts });
log(
  `  corpus (${inProcess.reviews} reviews, best of ${inProcess.loops} loops): mutate ${inProcess.mutateUs} µs, mutate + answer ${inProcess.mutateAndAnswerUs} µs, the echo's answer ${inProcess.echoAnswerUs} µs per review`,
);
const patho = runPathological({ config, nodes: facts });
log(pathoTable(patho));
log(`  crafted reviews (bench/crafted.ts), each through both webhooks in a child process:`);
const crafted = runCrafted();
const slowest = slowestCrafted(crafted);
log(craftedTable(crafted));

section('3. caches at scale (child process, --expose-gc)');
const scale = await forkForResult<FactsScale>('./facts-scale.ts', ['--expose-gc'], 120_000);
log(factsTable(scale));

section('4. node agent: CNI conf change → verdict published (fake publisher)');
const agent = await measureAgentLatency(20);
log(agentTable(agent, 'write → publish'));
let apiserver: unknown = {
  skipped: 'pass --with-apiserver to measure write → Node updated against a real kube-apiserver',
};
if (flags['with-apiserver']) {
  const { measureWithApiserver } = await import('./apiserver.ts');
  const a = await measureWithApiserver(20);
  apiserver = a;
  log(
    a.available
      ? `${agentTable(a.latency, `write → Node updated (kube-apiserver ${a.kubernetesVersion}, started in ${a.startS.toFixed(1)} s)`)}\n    Node read back afterwards: ${NODE_VERIFIED_LABEL}=${a.finalLabel}`
      : `  real apiserver not available: ${a.why}`,
  );
} else {
  log('  (write → Node updated on a real apiserver: run with --with-apiserver)');
}

section('5. CPU profile of the server under route B (and A, for the difference per review)');
const profiled = await profileRun(bodies, http, resultsDir, log);
const profileFile = profiled.file;
const { A: pA, B: pB } = profiled.routes;
const profile = summarise(profileFile, pB.windowsUs);
log(formatSummary(profile));
const diff = perReviewDiff(summarise(profileFile, pA.windowsUs), pA.reviews, profile, pB.reviews);
log(formatDiff(diff));

const targets: Target[] = [
  ...httpSummary.targets,
  ...patho.map((p) => ({
    name: `${p.shape}: decide and mutate+encode at 1×`,
    value: round(Math.max(p.rows[0].decideMs, p.rows[0].handlerMs), 3),
    target: '< 5 ms',
    pass: p.pass,
  })),
  {
    name: `slowest crafted review (${slowest.name}), CPU ms`,
    value: round(slowest.ms, 1),
    target: `<= ${CRAFTED_TARGET_MS}`,
    pass: slowest.pass,
  },
  { name: '5,000 nodes in NodeFactStore, heap', value: scale.nodes.heapMB, target: '< 50 MB', pass: scale.nodes.pass },
];
const summary = {
  generatedAt: new Date().toISOString(),
  command: `node bench/run.ts ${process.argv.slice(2).join(' ')}`.trim(),
  machine: { ...machine, loadavgAtEnd: loadavg().map((x) => round(x)) },
  settings: {
    ...http,
    pipelining: 1,
    tls: 'self-signed CA; autocannon does not verify it (rejectUnauthorized hard-coded false), the preflight does',
    aggregation: AGGREGATION,
  },
  workload: {
    mutateBodies: bodies.B.length,
    validateBodies: bodies.C.length,
    bodyBytes: { min: sizes[0], median: sizes[sizes.length >> 1], max: sizes.at(-1) },
    decisions: work.mix,
    preflight: main.preflight,
  },
  http: {
    phases: main.phases,
    ...httpSummary,
    oneConnection: main.serial,
    infoLogging: main.info,
    sameSizeAnswers: main.sized,
  },
  inProcess,
  pathological: patho,
  crafted,
  factsScale: scale,
  agent: { fakePublisher: agent, apiserver },
  profile: {
    file: profileFile,
    routes: profiled.routes,
    busyMs: profile.busyMs,
    admissionInclusivePct: profile.admissionInclusivePct,
    owners: profile.owners.slice(0, 15),
    top: profile.top,
    perReviewBminusA: diff,
  },
  targets,
  elapsedS: round((performance.now() - started) / 1000, 1),
};
const out = `${resultsDir}latest.json`;
writeFileSync(out, `${JSON.stringify(summary, null, 2)}\n`);

section('targets');
for (const t of targets) log(`  ${t.pass ? 'PASS' : 'FAIL'}  ${t.name} = ${t.value} (target ${t.target})`);
log(`\nJSON summary: ${out}\nprofile: ${profileFile}\ntotal ${summary.elapsedS} s`);
