/**
 * `npm run bench -- --peers [--duration S] [--rounds N]`: the peer comparison alone (bench/peers/run.ts), its
 * table and targets, the `companion: …` line (issue 35), results in bench/results/peers.json, and as the very last line
 * `peer ratio: …`.
 */
import { writeFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { corpusWorkload } from '../corpus.ts';
import { round } from '../stats.ts';
import { runPeers, type PeerOptions } from './run.ts';
import { companionLine, peerTable, peerTargets, ratioLine } from './report.ts';

/** Where `--peers` keeps the corpus pods as Istio's webhook injected them (bench/results/, git-ignored). */
export const ISTIO_INJECTED_FILE = 'istio-injected.json';

export async function peersMain(
  flags: { duration?: string; rounds?: string },
  resultsDir: string,
  log: (s: string) => void,
): Promise<void> {
  const started = performance.now();
  const { verifiedNodes, work } = corpusWorkload();
  const reviews = work.mutate.map((s) => s.review);
  const o: PeerOptions = {
    connections: 16,
    // 4 s: the slowest peer (Kyverno, ~100 req/s) still gives a few hundred latencies per phase for its p99.
    durationS: Number(flags.duration ?? 4),
    warmupS: 2,
    rounds: Math.min(Number(flags.rounds ?? 5), 5),
    verifiedNodes,
    kubeletVersion: 'v1.34.2',
  };
  log(
    `\n== peers side by side: ${reviews.length} corpus pod CREATE reviews, ${o.connections} connections, HTTPS + HTTP/1.1 keep-alive, no pipelining, ${o.durationS} s × ${o.rounds} rounds per peer ==`,
  );
  log(
    `every peer pinned to CPU 1 (Go peers with GOMAXPROCS=1), the load generator to CPU 0, on ${availableParallelism()} CPUs; load average ${loadavg()
      .map((x) => round(x))
      .join(' ')}`,
  );
  const injectedFile = `${resultsDir}${ISTIO_INJECTED_FILE}`;
  const result = await runPeers(reviews, o, log, (injected) => {
    writeFileSync(injectedFile, JSON.stringify(injected));
    log(`the Istio-injected pods kept in ${injectedFile} (for npm run bench -- --before REF --companion)`);
  });
  log(peerTable(result));
  const t = peerTargets(result);
  for (const x of t?.targets ?? []) log(`  ${x.pass ? 'PASS' : 'FAIL'}  ${x.name} = ${x.value} (target ${x.target})`);
  if (t?.companion)
    log(
      `  companion (meshgate istio on Istio-injected pods) / istio: throughput ${t.companion.throughput}, p99 ${t.companion.p99}, cpu ${t.companion.cpu}, rss ${t.companion.rss}`,
    );
  if (t?.companionPath) log(companionLine(t.companionPath));
  const out = `${resultsDir}peers.json`;
  writeFileSync(
    out,
    `${JSON.stringify({ generatedAt: new Date().toISOString(), options: o, ...result, targets: t, elapsedS: round((performance.now() - started) / 1000, 1) }, null, 2)}\n`,
  );
  log(`JSON: ${out}`);
  if (!t) throw new Error('no ratio: meshgate custom or istio was not measured');
  log(ratioLine(t.ratios));
}
