/**
 * `npm run bench -- --before REF [--companion] [--duration S] [--rounds N]`: this tree against REF's in the same run,
 * for the before/after figures of a change. `--companion`: meshgate next to Istio (mesh istio) on the corpus pods as
 * Istio's webhook injected them, kept by the last `npm run bench -- --peers` (issue 35's companion path, whose
 * changes of a few per cent separate runs of the peers bench do not resolve on this host).
 *   in-process  bench/in-process-tree.ts on each tree, alternately, 3 times each (the median): µs per corpus review
 *               for `mutate`, and `mutate` + the encoded answer
 *   HTTP        both trees' servers at once (each its own process, pinned to CPU 1; the load generator on CPU 0),
 *               A (/allow, the echo) and B (/mutate) of each tree in every round, in an order rotated per round;
 *               per tree the median over rounds of B/A throughput and of B/A server CPU per review
 * Targets (issue 14): in-process ≤ 5 µs per corpus review, throughput ≥ 0.85 of the echo, for this tree.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { repoRoot } from '../../test/e2e/harness/binaries.ts';
import { corpusWorkload } from '../corpus.ts';
import type { InProcess } from '../in-process.ts';
import { LOAD_CPU, SERVER_CPU, startLoadChild, startServerChild, type LoadChild, type ServerChild } from '../procs.ts';
import { DEFAULT_ROUNDS, halfMedians, median, round } from '../stats.ts';
import { extractTree } from './tree.ts';
import { ISTIO_INJECTED_FILE } from '../peers/main.ts';
import type { Review } from '../corpus.ts';

interface Side {
  name: 'before' | 'after';
  root: string;
  server?: ServerChild;
}

interface Measured {
  rps: number;
  p99Ms: number;
  cpuUsPerReview: number;
}

async function measure(
  server: ServerChild,
  load: LoadChild,
  path: string,
  bodies: string[],
  durationS: number,
): Promise<Measured> {
  const before = await server.cpu();
  const r = await load.run({ url: server.url, ca: server.ca, path, bodies, connections: 16, durationS });
  const after = await server.cpu();
  const answered = r.ok + r.non2xx;
  return { rps: r.rps, p99Ms: r.p99Ms, cpuUsPerReview: answered > 0 ? (after.cpuUs - before.cpuUs) / answered : NaN };
}

function inProcess(root: string, reviewsFile: string, nodes: string[], mesh: 'custom' | 'istio'): InProcess {
  const out = execFileSync(
    process.execPath,
    [fileURLToPath(new URL('../in-process-tree.ts', import.meta.url)), root, reviewsFile, nodes.join(','), mesh],
    { encoding: 'utf8' },
  );
  return JSON.parse(out.trim().split('\n').at(-1)!) as InProcess;
}

export async function compareMain(
  ref: string,
  flags: { duration?: string; rounds?: string; companion?: boolean },
  resultsDir: string,
  log: (s: string) => void,
): Promise<void> {
  const { verifiedNodes, work } = corpusWorkload();
  const mesh = flags.companion ? 'istio' : 'custom';
  const injectedFile = `${resultsDir}${ISTIO_INJECTED_FILE}`;
  if (flags.companion && !existsSync(injectedFile))
    throw new Error(
      `--companion reads the Istio-injected pods from ${injectedFile}, which \`npm run bench -- --peers\` writes: run it first`,
    );
  const reviews = flags.companion
    ? (JSON.parse(readFileSync(injectedFile, 'utf8')) as Review[])
    : work.mutate.map((s) => s.review);
  const tree = extractTree(ref);
  const bodies = reviews.map((r) => JSON.stringify(r));
  const reviewsFile = `${resultsDir}compare-reviews.json`;
  writeFileSync(reviewsFile, JSON.stringify(reviews));
  const head = execFileSync('git', ['rev-parse', '--short=12', 'HEAD'], { cwd: repoRoot, encoding: 'utf8' }).trim();
  const sides: Side[] = [
    { name: 'before', root: tree.dir },
    { name: 'after', root: repoRoot },
  ];
  log(
    `\n== before (${ref} = ${tree.commit}) and after (this checkout, HEAD ${head}${execFileSync('git', ['status', '--porcelain', 'src'], { cwd: repoRoot, encoding: 'utf8' }).trim() ? ' + uncommitted changes in src' : ''}) in one run: ${bodies.length} corpus reviews${flags.companion ? ", as Istio's webhook injected them, meshgate next to Istio (mesh istio)" : ''} ==`,
  );
  let load: LoadChild | undefined;
  try {
    const inProc: Record<string, InProcess[]> = { before: [], after: [] };
    for (let i = 0; i < 3; i++)
      for (const s of i % 2 ? [...sides].reverse() : sides)
        inProc[s.name].push(inProcess(s.root, reviewsFile, verifiedNodes, mesh));
    const ip = (name: string, k: 'mutateUs' | 'mutateAndAnswerUs' | 'echoAnswerUs') =>
      round(median(inProc[name].map((x) => x[k])), 2);
    for (const s of sides)
      log(
        `in-process ${s.name.padEnd(6)} mutate ${ip(s.name, 'mutateUs')} µs, mutate + answer ${ip(s.name, 'mutateAndAnswerUs')} µs, echo answer ${ip(s.name, 'echoAnswerUs')} µs (median of 3, each the best of 7 loops)`,
      );

    for (const s of sides)
      s.server = await startServerChild({ logLevel: 'warn', verifiedNodes, mesh }, [], {
        cpu: SERVER_CPU,
        script: `${s.root}/bench/server.ts`,
      });
    load = await startLoadChild(LOAD_CPU);
    const durationS = Number(flags.duration ?? DEFAULT_ROUNDS.durationS);
    for (const s of sides) for (const path of ['/allow', '/mutate']) await measure(s.server!, load, path, bodies, 2);
    const rounds: Array<Record<string, { A: Measured; B: Measured }>> = [];
    const nRounds = Number(flags.rounds ?? DEFAULT_ROUNDS.rounds);
    for (let r = 0; r < nRounds; r++) {
      const round_: Record<string, { A: Measured; B: Measured }> = {};
      const order = r % 2 ? [...sides].reverse() : sides;
      for (const s of order) {
        const [first, second] = r % 2 ? (['/mutate', '/allow'] as const) : (['/allow', '/mutate'] as const);
        const m1 = await measure(s.server!, load, first, bodies, durationS);
        const m2 = await measure(s.server!, load, second, bodies, durationS);
        round_[s.name] = first === '/allow' ? { A: m1, B: m2 } : { A: m2, B: m1 };
        log(
          `round ${r + 1} ${s.name.padEnd(6)} A ${round_[s.name].A.rps.toFixed(0)} req/s ${round_[s.name].A.cpuUsPerReview.toFixed(0)} µs CPU, B ${round_[s.name].B.rps.toFixed(0)} req/s ${round_[s.name].B.cpuUsPerReview.toFixed(0)} µs CPU: B/A ${(round_[s.name].B.rps / round_[s.name].A.rps).toFixed(3)}`,
        );
      }
      rounds.push(round_);
    }
    const summary = Object.fromEntries(
      sides.map((s) => {
        const m = (f: (x: { A: Measured; B: Measured }) => number) => round(median(rounds.map((r) => f(r[s.name]))), 3);
        return [
          s.name,
          {
            inProcess: {
              mutateUs: ip(s.name, 'mutateUs'),
              mutateAndAnswerUs: ip(s.name, 'mutateAndAnswerUs'),
              echoAnswerUs: ip(s.name, 'echoAnswerUs'),
            },
            aRps: m((x) => x.A.rps),
            bRps: m((x) => x.B.rps),
            throughputBA: m((x) => x.B.rps / x.A.rps),
            cpuBA: m((x) => x.B.cpuUsPerReview / x.A.cpuUsPerReview),
            aCpuUs: m((x) => x.A.cpuUsPerReview),
            bCpuUs: m((x) => x.B.cpuUsPerReview),
            addedCpuUs: m((x) => x.B.cpuUsPerReview - x.A.cpuUsPerReview),
            p99BA: m((x) => x.B.p99Ms / x.A.p99Ms),
          },
        ];
      }),
    );
    log(
      `  ${'tree'.padEnd(7)} ${'in-process µs'.padStart(22)} | ${'A req/s'.padStart(8)} ${'B req/s'.padStart(8)} | B/A thr | B/A CPU | CPU µs A, B, added | p99 B/A`,
    );
    for (const s of sides) {
      const x = summary[s.name];
      log(
        `  ${s.name.padEnd(7)} ${`${x.inProcess.mutateUs} / ${x.inProcess.mutateAndAnswerUs} (+answer)`.padStart(22)} | ${String(x.aRps.toFixed(0)).padStart(8)} ${String(x.bRps.toFixed(0)).padStart(8)} | ${x.throughputBA.toFixed(3).padStart(7)} | ${x.cpuBA.toFixed(3).padStart(7)} | ${x.aCpuUs.toFixed(0)}, ${x.bCpuUs.toFixed(0)}, +${x.addedCpuUs.toFixed(1)} | ${x.p99BA.toFixed(2)}`,
      );
    }
    for (const s of sides) {
      const [first, second] = halfMedians(rounds.map((r) => r[s.name].B.rps / r[s.name].A.rps));
      log(
        `  ${s.name}: throughput B/A, median of the first and of the second half of the rounds: ${first.toFixed(3)} and ${second.toFixed(3)}`,
      );
    }
    // Issue 22 retired the in-process (<= 5 µs) and echo (>= 0.85) targets, which this host's noise decides. The guard
    // left: no regression beyond the noise the run shows for the BEFORE tree against itself, measured on the server's
    // CPU added per review (B - A), the steadiest figure: the spread of its per-round values over the two halves.
    const added = (name: 'before' | 'after') => rounds.map((r) => r[name].B.cpuUsPerReview - r[name].A.cpuUsPerReview);
    const [b1, b2] = halfMedians(added('before'));
    const noise = Math.abs(b1 - b2);
    const delta = summary.after.addedCpuUs - summary.before.addedCpuUs;
    log(
      `  CPU added per review (B - A): before +${summary.before.addedCpuUs.toFixed(1)} µs (halves +${b1.toFixed(1)}, ` +
        `+${b2.toFixed(1)}: noise ${noise.toFixed(1)} µs), after +${summary.after.addedCpuUs.toFixed(1)} µs: ` +
        `${delta >= 0 ? '+' : ''}${delta.toFixed(1)} µs`,
    );
    const targets = [
      {
        name: "after - before: server CPU added per review, beyond the before tree's own noise",
        value: Number((delta - noise).toFixed(1)),
        target: '<= 0 µs',
        pass: delta <= noise,
      },
    ];
    for (const t of targets) log(`  ${t.pass ? 'PASS' : 'FAIL'}  ${t.name} = ${t.value} (target ${t.target})`);
    writeFileSync(
      `${resultsDir}compare.json`,
      `${JSON.stringify({ generatedAt: new Date().toISOString(), companion: flags.companion === true, before: { ref, commit: tree.commit }, after: { head }, rounds, summary, targets }, null, 2)}\n`,
    );
    log(`JSON: ${resultsDir}compare.json`);
  } finally {
    await load?.stop();
    for (const s of sides) await s.server?.stop();
    tree.remove();
  }
}
