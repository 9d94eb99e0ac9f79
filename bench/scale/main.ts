/**
 * `npm run bench -- --scale [--scale-nodes N] [--scale-pods P] [--budget MIN]`: what the webhook and the repair
 * controller cost as the cluster grows (issue 32). In the bench's own network namespace (bench/run.ts re-executed
 * itself under `unshare --net`), a real etcd (data on tmpfs, /dev/shm) and kube-apiserver from the e2e harness; the
 * cluster grows through the API in steps (populate.ts, objects.ts) — Nodes alone first, then pods, so what one more
 * Node and one more pod cost are measured apart — up to N Nodes and P pods (default 15,000 and 150,000, 60 %
 * guarded). At each size a fresh webhook replica, then a fresh repair controller, start as the chart and image start
 * them (replica.ts): peak RSS from spawn through their first minute, time to ready, the worst review in that
 * minute, steady RSS, while kubelet-like Node reports and pod churn run (churn.ts). Once, what a node agent's
 * heartbeat costs on the Node and on a Lease (heartbeat.ts); at the largest size, `check`, `check --audit` and
 * `explain` (cli.ts; with --before REF, REF's CLI too). A size the time budget (default 60 min for the whole run)
 * cannot reach is projected from the measured ones, and the output says which figures are projected. With
 * --scale-save DIR etcd's data is kept at each size, and --scale-from DIR/<nodes>-<pods> measures that size again
 * without creating anything (snapshot.ts). Prints tables, writes bench/results/scale.json, and ends with one line:
 * `scale: webhook A MiB (start peak B) at N nodes P pods, repair C MiB (start peak D), per node E KB, per guarded pod F KB`.
 */
import { createWriteStream, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { daemonClient } from '../../test/e2e/daemon-client.ts';
import { repoRoot } from '../../test/e2e/harness/binaries.ts';
import { freePort, startControlPlane } from '../../test/e2e/harness/index.ts';
import { assertNoRouteOut } from '../../test/support/isolation.ts';
import { buildImageTree } from '../footprint/image.ts';
import { round } from '../stats.ts';
import { startChurn } from './churn.ts';
import { cliRuns, type CliFigures } from './cli.ts';
import { repairArgs, webhookArgs, webhookConfigs } from './daemons.ts';
import { measureHeartbeats, type HeartbeatFigures } from './heartbeat.ts';
import { GUARDED_NAMESPACES, MARK_KEY, NAMESPACES } from './objects.ts';
import { baseConfig } from '../../test/support/config.ts';
import { DeadlinePassed, grow, prepare, type Size } from './populate.ts';
import { runReplica, WINDOW_S, type ReplicaFigures } from './replica.ts';
import { projectTo, scaleReport, type Step } from './report.ts';
import { restoreSnapshot, saveSnapshot } from './snapshot.ts';
import { runGuardedPods } from './run-pods.ts';
import { extractTree } from '../compare/tree.ts';

const MESHGATE_NS = 'meshgate';
/** Enough etcd space for 150,000 pods and their history between compactions (its default is 2 GiB). */
const ETCD_QUOTA = String(8 * 1024 ** 3);
/** Keep the last step's replicas and CLI runs inside the budget: growing stops this long before it ends. */
const MEASURE_RESERVE_MS = 12 * 60_000;

export async function scaleMain(
  flags: {
    'scale-nodes'?: string;
    'scale-pods'?: string;
    budget?: string;
    'scale-save'?: string;
    'scale-from'?: string;
    /** Guarded pods reported Running as a kubelet would (run-pods.ts) before each step is measured. */
    'scale-running'?: boolean;
    before?: string;
  },
  resultsDir: string,
  log: (s: string) => void,
): Promise<void> {
  assertNoRouteOut('bench --scale');
  // A cluster saved by an earlier run (snapshot.ts): measured at its size alone, nothing created.
  const restored = flags['scale-from'] ? restoreSnapshot(flags['scale-from']) : undefined;
  const target: Size = restored?.size ?? {
    nodes: Number(flags['scale-nodes'] ?? 15_000),
    pods: Number(flags['scale-pods'] ?? 150_000),
  };
  const budgetMs = Number(flags.budget ?? 60) * 60_000;
  const started = Date.now();
  const third = (x: number) => Math.round(x / 3);
  const sizes: Size[] = restored
    ? [target]
    : [
        { nodes: 0, pods: 0 },
        { nodes: third(target.nodes), pods: 0 },
        { nodes: third(target.nodes), pods: third(target.pods) },
        { nodes: 2 * third(target.nodes), pods: 2 * third(target.pods) },
        target,
      ];
  log(
    `scale: in a network namespace of its own; sizes ${sizes.map((s) => `${s.nodes}/${s.pods}`).join(' → ')}` +
      (restored ? ` (restored from ${flags['scale-from']}, saved ${restored.savedAt})` : ''),
  );
  const tree = await buildImageTree('this tree', repoRoot, log);
  // --before REF: REF's CLI runs beside this tree's at the largest size (the daemons are this tree's).
  const before = flags.before ? extractTree(flags.before) : undefined;
  const beforeTree = before && (await buildImageTree(`${flags.before} (${before.commit})`, before.dir, log));
  const work = mkdtempSync(join('/dev/shm', 'meshgate-scale-'));
  // The control plane's directory (etcd's data) on tmpfs: the harness makes it under the temp dir.
  process.env.TMPDIR = '/dev/shm';
  const cp = await startControlPlane({
    withScheduler: false,
    withControllerManager: false,
    withKwok: false,
    etcdArgs: [`--quota-backend-bytes=${ETCD_QUOTA}`, ...(restored ? [`--data-dir=${restored.dataDir}`] : [])],
    startTimeoutMs: 300_000,
  });
  const client = daemonClient(cp.kc);
  const pids = () => ({ apiserver: cp.pids()['kube-apiserver'], etcd: cp.pids().etcd });
  const daemonLog = createWriteStream(join(work, 'daemons.log'));
  const steps: Step[] = [];
  let heartbeats: HeartbeatFigures | undefined;
  let cli: CliFigures[] = [];
  let stoppedAt: string | undefined;
  try {
    log(`control plane ${cp.versions.kubernetesVersion} up; etcd on /dev/shm; daemon logs in ${work}/daemons.log`);
    await prepare(client, MESHGATE_NS);
    const config = join(work, 'config.yaml');
    // A day's verdict age: the Nodes' heartbeats are written once, when they are created, not renewed by agents.
    // The tests' Istio profile (it recognises the image of Istio's own example), as the bench's pods were injected.
    writeFileSync(
      config,
      `${JSON.stringify({ ...baseConfig('istio'), meshNamespace: MESHGATE_NS, cni: { maxVerdictAgeSeconds: 86_400 } })}\n`,
    );
    const keys = join(work, 'mark');
    mkdirSync(keys);
    writeFileSync(join(keys, 'key'), MARK_KEY);
    const ports = { webhook: await freePort(), repair: await freePort() };
    let have: Size = restored?.size ?? { nodes: 0, pods: 0 };
    for (const size of sizes) {
      const t0 = Date.now();
      log(
        `\n== ${size.nodes} Nodes, ${size.pods} pods (load average ${loadavg()
          .map((x) => round(x))
          .join(' ')}) ==`,
      );
      let reached = size;
      try {
        await grow(client, have, size, MESHGATE_NS, log, started + budgetMs - MEASURE_RESERVE_MS);
      } catch (err) {
        if (!(err instanceof DeadlinePassed)) throw err;
        // Measured where the budget left the cluster, then no further.
        reached = err.reached;
        stoppedAt = `growing to ${size.nodes} Nodes, ${size.pods} pods: ${err.message}`;
        log(`  stopped growing: ${err.message}; measuring at ${reached.nodes} Nodes, ${reached.pods} pods`);
      }
      have = reached;
      if (flags['scale-running']) {
        await runGuardedPods(client, log);
        // A restored cluster's pods made Running, kept (a later --scale-from of it patches nothing).
        if (restored && flags['scale-save']) {
          const saved = saveSnapshot(pids().etcd!, flags['scale-save'], reached);
          log(`  etcd's data with Running pods kept in ${saved.dir} (etcd stopped ${saved.frozenS.toFixed(1)} s)`);
        }
      }
      const createS = (Date.now() - t0) / 1000;
      if (!heartbeats && !restored && reached.nodes >= 1000) {
        log('  a node agent’s heartbeat, on the Node and on its Lease (1,000 each)');
        heartbeats = await measureHeartbeats(client, pids(), MESHGATE_NS);
      }
      const churn = startChurn(client, reached.nodes);
      const webhook = await runReplica(
        tree,
        'webhook',
        webhookArgs(config, cp.kubeconfigPath, ports.webhook, keys),
        ports.webhook,
        daemonLog,
        reached.nodes,
        pids(),
        () => webhookConfigs(client, ports.webhook, 'create'),
      );
      log(`  webhook: ${describe(webhook)}`);
      const repair = await runReplica(
        tree,
        'repair',
        repairArgs(config, cp.kubeconfigPath, ports.repair, keys),
        ports.repair,
        daemonLog,
        reached.nodes,
        pids(),
      );
      log(`  repair controller: ${describe(repair)}`);
      const churned = await churn.stop();
      log(
        `  churn meanwhile: ${churned.nodePatches} Node status reports, ${churned.pods} pods, ${churned.failures} failed${churned.firstFailure ? ` (first: ${churned.firstFailure})` : ''}`,
      );
      steps.push({ ...reached, guarded: guardedOf(reached.pods), createS, webhook, repair });
      const spent = Date.now() > started + budgetMs - MEASURE_RESERVE_MS;
      const last = size === sizes.at(-1) || reached !== size || spent;
      await webhookConfigs(client, ports.webhook, 'delete');
      // Kept between steps (nothing of the bench writes then), before the next step grows it.
      if (flags['scale-save'] && !restored) {
        const saved = saveSnapshot(pids().etcd!, flags['scale-save'], reached);
        log(`  etcd's data kept in ${saved.dir} (etcd stopped ${saved.frozenS.toFixed(1)} s meanwhile)`);
      }
      if (last) {
        cli = await cliRuns(tree, cp.kubeconfigPath, config, log);
        if (beforeTree) cli.push(...(await cliRuns(beforeTree, cp.kubeconfigPath, config, log)));
      }
      if (last) {
        if (size !== sizes.at(-1) && !stoppedAt)
          stoppedAt = `after ${size.nodes} Nodes, ${size.pods} pods: the time budget (${budgetMs / 60_000} min) is spent`;
        break;
      }
    }
    const report = scaleReport(steps, target, heartbeats, cli, stoppedAt);
    for (const line of report.lines) log(line);
    writeFileSync(
      join(resultsDir, 'scale.json'),
      `${JSON.stringify({ when: new Date().toISOString(), kubernetes: cp.versions.kubernetesVersion, target, steps, heartbeats, cli, stoppedAt, projected: projectTo(steps, target) }, null, 2)}\n`,
    );
    log(`wrote ${join(resultsDir, 'scale.json')}`);
    log(report.last);
  } finally {
    daemonLog.end();
    client.close();
    await cp.stop();
    rmSync(work, { recursive: true, force: true });
    restored?.remove();
    before?.remove();
  }
}

const guardedOf = (pods: number) => Math.round((pods * GUARDED_NAMESPACES) / NAMESPACES);

function describe(f: ReplicaFigures): string {
  const cpu = f.startCpu
    ? ` (CPU meanwhile: its own ${f.startCpu.replicaS.toFixed(1)} s, apiserver ${f.startCpu.apiserverS.toFixed(1)} s, etcd ${f.startCpu.etcdS.toFixed(1)} s)`
    : '';
  const ready = f.readyS === undefined ? `NOT READY (${f.exited})` : `ready in ${f.readyS.toFixed(1)} s${cpu}`;
  const kinds = Object.entries(f.reviews?.byKind ?? {})
    .map(
      ([k, r]) =>
        `${k}: p50 ${r.p50Ms.toFixed(1)}, worst ${r.maxMs.toFixed(1)}${r.failed ? `, ${r.failed} failed` : ''}`,
    )
    .join('; ');
  const reviews = f.reviews
    ? `; reviews in the first ${WINDOW_S} s: ${f.reviews.count} (${f.reviews.failed} failed), p50 ${f.reviews.p50Ms.toFixed(1)} ms, p99 ${f.reviews.p99Ms.toFixed(1)} ms, worst ${f.reviews.maxMs.toFixed(1)} ms (${kinds})`
    : '';
  return `${ready}, peak ${f.peakMiB.toFixed(1)} MiB, steady ${f.steadyMiB.toFixed(1)} MiB, heap ${f.heapMiB?.toFixed(1) ?? '?'} MiB${reviews}`;
}
