/**
 * `npm run bench -- --footprint [--before REF] [--duration S]`: what meshgate's daemons cost in memory on every node
 * and in the cluster (issue 22). Starts a real etcd + kube-apiserver (test/e2e/harness) inside the bench's network
 * namespace (bench/run.ts re-executed itself there: test/support/isolation.ts), runs the compiled node agent, webhook
 * (cluster mode) and repair controller as the chart and image run them (launch.ts: the agent's own command, the
 * image's flags for the others), beside a bare `node -e 'setInterval(() => {}, 1e3)'` under the image's flags,
 * drives a steady minute of their normal work (work.ts) and reads each one's RSS from /proc once a second. The
 * figure of a daemon is the median of its last STEADY_SAMPLES samples; the peak is printed beside it. With --before
 * REF, that tree's three daemons run side by side in the same minute, against the same apiserver (a Node, Secret,
 * Lease and webhook configurations of their own). Prints `footprint: agent X MiB, webhook Y MiB, repair Z MiB, bare
 * node W MiB`, the ratios against the targets (agent ≤ 1.5 × bare, webhook and repair ≤ 100 MiB), and writes
 * bench/results/footprint.json.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from '../../test/e2e/harness/binaries.ts';
import { extractTree, type Tree } from '../compare/tree.ts';
import { round } from '../stats.ts';
import { populate, startCluster } from './cluster.ts';
import { startDaemons, type Daemons } from './daemons.ts';
import { buildImageTree, killOnExit, startBareNode, stopChild, type ImageTree } from './image.ts';
import { assertNoRouteOut } from '../../test/support/isolation.ts';
import { steadyMinute, waitReady, type Role } from './work.ts';

/** The steady figure: the median of the last 10 one-second samples, so one GC's swing does not decide it. */
const STEADY_SAMPLES = 10;
const MiB = 1024 * 1024;
const TARGETS = { agentOverBare: 1.5, webhookMiB: 100, repairMiB: 100 };

type Figures = Record<Role, { steadyMiB: number; peakMiB: number }>;

function figures(rss: Record<string, number[]>, suffix: string): Figures {
  const one = (key: string) => {
    const all = rss[key] ?? [];
    const last = all.slice(-STEADY_SAMPLES).sort((a, b) => a - b);
    return {
      steadyMiB: round((last[last.length >> 1] ?? 0) / MiB, 1),
      peakMiB: round(Math.max(0, ...all) / MiB, 1),
    };
  };
  return {
    agent: one(`${suffix}/agent`),
    webhook: one(`${suffix}/webhook`),
    repair: one(`${suffix}/repair`),
    bare: one('bare'),
  };
}

function report(label: string, f: Figures, log: (s: string) => void) {
  const ratio = round(f.agent.steadyMiB / f.bare.steadyMiB, 2);
  log(
    `footprint${label}: agent ${f.agent.steadyMiB} MiB, webhook ${f.webhook.steadyMiB} MiB, repair ${f.repair.steadyMiB} MiB, bare node ${f.bare.steadyMiB} MiB`,
  );
  log(
    `  peaks: agent ${f.agent.peakMiB}, webhook ${f.webhook.peakMiB}, repair ${f.repair.peakMiB}, bare ${f.bare.peakMiB} MiB`,
  );
  const targets = [
    { name: 'agent / bare node', value: ratio, target: `<= ${TARGETS.agentOverBare}` },
    { name: 'webhook, MiB', value: f.webhook.steadyMiB, target: `<= ${TARGETS.webhookMiB}` },
    { name: 'repair controller, MiB', value: f.repair.steadyMiB, target: `<= ${TARGETS.repairMiB}` },
  ].map((t) => ({ ...t, pass: t.value <= Number(t.target.slice(3)) }));
  for (const t of targets) log(`  ${t.pass ? 'PASS' : 'FAIL'}  ${t.name} = ${t.value} (target ${t.target})`);
  return { ratio, targets };
}

export async function footprintMain(
  flags: { before?: string; duration?: string },
  resultsDir: string,
  log: (s: string) => void,
): Promise<void> {
  // bench/run.ts re-executed this run under `unshare --net`; this refuses, naming the route, if it is not so.
  assertNoRouteOut('bench --footprint');
  log('footprint: in a network namespace of its own (lo only; no route to 192.0.2.1 or 10.96.0.1)');
  const seconds = Number(flags.duration ?? 60);
  const trees: Array<{ suffix: string; image: ImageTree; extracted?: Tree }> = [
    { suffix: 'this', image: await buildImageTree('this tree', repoRoot, log) },
  ];
  if (flags.before) {
    const extracted = extractTree(flags.before);
    trees.push({
      suffix: 'before',
      image: await buildImageTree(`${flags.before} (${extracted.commit})`, extracted.dir, log),
      extracted,
    });
  }
  const work = mkdtempSync(join(tmpdir(), 'meshgate-footprint-'));
  const t0 = performance.now();
  const cp = await startCluster();
  const running: Daemons[] = [];
  try {
    log(`control plane ${cp.versions.kubernetesVersion} up in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    await populate(
      cp.kc,
      trees.map((t) => t.suffix),
    );
    const bare = startBareNode(trees[0].image);
    for (const t of trees) running.push(await startDaemons(t.image, t.suffix, work, cp.kubeconfigPath));
    killOnExit([bare, ...running.flatMap((d) => [d.agent.child, d.webhook.child, d.repair.child])]);
    const sets = [];
    for (const d of running) sets.push({ daemons: d, ca: await waitReady(cp.kc, d) });
    log(
      `all daemons ready; ${seconds} s of steady work (load average ${loadavg()
        .map((x) => round(x))
        .join(' ')})`,
    );
    const sampled = await steadyMinute(cp.kc, sets, bare.pid!, seconds);
    log(
      `  ${sampled.reviews} reviews answered, ${sampled.fileChanges} CNI file changes, ${sampled.failures} failed calls`,
    );
    const results: Record<string, unknown> = {};
    for (const t of trees) {
      const f = figures(sampled.rss, t.suffix);
      const label = t.suffix === 'this' ? '' : ` (before: ${t.image.label})`;
      results[t.suffix] = { tree: t.image.label, figures: f, ...report(label, f, log) };
    }
    await stopChild(bare);
    writeFileSync(
      join(resultsDir, 'footprint.json'),
      `${JSON.stringify({ when: new Date().toISOString(), seconds, steadySamples: STEADY_SAMPLES, ...sampled, results }, null, 2)}\n`,
    );
    log(`wrote ${join(resultsDir, 'footprint.json')}`);
  } finally {
    for (const d of running)
      await Promise.all([d.agent.child, d.webhook.child, d.repair.child].map((c) => stopChild(c)));
    await cp.stop();
    rmSync(work, { recursive: true, force: true });
    for (const t of trees) t.extracted?.remove();
  }
}
