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
 * `explain` (cli.ts). A size the time budget (default 60 min for the whole run) cannot reach is projected from the
 * measured ones, and the output says which figures are projected. Prints tables, writes bench/results/scale.json,
 * and ends with one line:
 * `scale: webhook A MiB (start peak B) at N nodes P pods, repair C MiB (start peak D), per node E KB, per guarded pod F KB`.
 */
import { createWriteStream, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { group } from '../../src/kube/api/paths.ts';
import { daemonClient } from '../../test/e2e/daemon-client.ts';
import { repoRoot } from '../../test/e2e/harness/binaries.ts';
import { freePort, startControlPlane } from '../../test/e2e/harness/index.ts';
import { assertNoRouteOut } from '../../test/support/isolation.ts';
import { buildImageTree, type ImageTree } from '../footprint/image.ts';
import { round } from '../stats.ts';
import { startChurn } from './churn.ts';
import { runCli, type CliFigures } from './cli.ts';
import { measureHeartbeats, type HeartbeatFigures } from './heartbeat.ts';
import { GUARDED_NAMESPACES, MARK_KEY, NAMESPACES, OPT_IN } from './objects.ts';
import { baseConfig } from '../../test/support/config.ts';
import { DeadlinePassed, grow, prepare, type Size } from './populate.ts';
import { runReplica, WINDOW_S, type ReplicaFigures } from './replica.ts';
import { projectTo, scaleReport, type Step } from './report.ts';

const MESHGATE_NS = 'meshgate';
const WEBHOOK_CONFIG = 'meshgate';
/** Enough etcd space for 150,000 pods and their history between compactions (its default is 2 GiB). */
const ETCD_QUOTA = String(8 * 1024 ** 3);
/** Keep the last step's replicas and CLI runs inside the budget: growing stops this long before it ends. */
const MEASURE_RESERVE_MS = 12 * 60_000;

export async function scaleMain(
  flags: { 'scale-nodes'?: string; 'scale-pods'?: string; budget?: string },
  resultsDir: string,
  log: (s: string) => void,
): Promise<void> {
  assertNoRouteOut('bench --scale');
  const target: Size = { nodes: Number(flags['scale-nodes'] ?? 15_000), pods: Number(flags['scale-pods'] ?? 150_000) };
  const budgetMs = Number(flags.budget ?? 60) * 60_000;
  const started = Date.now();
  const third = (x: number) => Math.round(x / 3);
  const sizes: Size[] = [
    { nodes: 0, pods: 0 },
    { nodes: third(target.nodes), pods: 0 },
    { nodes: third(target.nodes), pods: third(target.pods) },
    { nodes: 2 * third(target.nodes), pods: 2 * third(target.pods) },
    target,
  ];
  log(`scale: in a network namespace of its own; sizes ${sizes.map((s) => `${s.nodes}/${s.pods}`).join(' → ')}`);
  const tree = await buildImageTree('this tree', repoRoot, log);
  const work = mkdtempSync(join('/dev/shm', 'meshgate-scale-'));
  // The control plane's directory (etcd's data) on tmpfs: the harness makes it under the temp dir.
  process.env.TMPDIR = '/dev/shm';
  const cp = await startControlPlane({
    withScheduler: false,
    withControllerManager: false,
    withKwok: false,
    etcdArgs: [`--quota-backend-bytes=${ETCD_QUOTA}`],
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
    let have: Size = { nodes: 0, pods: 0 };
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
      const createS = (Date.now() - t0) / 1000;
      if (!heartbeats && reached.nodes >= 1000) {
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
      if (last) cli = await cliRuns(tree, cp.kubeconfigPath, config, log);
      await webhookConfigs(client, ports.webhook, 'delete');
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

/** meshgate's two webhook configurations: the apiserver calls the measured webhook (failurePolicy Ignore otherwise). */
async function webhookConfigs(client: ReturnType<typeof daemonClient>, port: number, what: 'create' | 'delete') {
  for (const kind of ['mutatingwebhookconfigurations', 'validatingwebhookconfigurations']) {
    const path = group('admissionregistration.k8s.io/v1', kind);
    if (what === 'delete') {
      await client
        .delete(group('admissionregistration.k8s.io/v1', kind, { name: WEBHOOK_CONFIG }))
        .catch(() => undefined);
      continue;
    }
    const route = kind.startsWith('mutating') ? 'mutate' : 'validate';
    await client.create(path, {
      metadata: { name: WEBHOOK_CONFIG },
      webhooks: [
        {
          name: 'pods.meshgate.io',
          admissionReviewVersions: ['v1'],
          sideEffects: 'None',
          failurePolicy: 'Ignore',
          timeoutSeconds: 10,
          clientConfig: { url: `https://127.0.0.1:${port}/${route}` },
          namespaceSelector: { matchLabels: OPT_IN },
          rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
        },
      ],
    });
  }
}

function webhookArgs(config: string, kubeconfig: string, port: number, keys: string): string[] {
  return [
    'serve',
    `--config=${config}`,
    `--kubeconfig=${kubeconfig}`,
    `--port=${port}`,
    '--host=127.0.0.1',
    '--cert-secret=meshgate-tls',
    `--webhook-config=${WEBHOOK_CONFIG}`,
    '--drain-seconds=0',
    '--webhook-timeout-seconds=10',
    `--mark-key-dir=${keys}`,
    '--log-level=info',
  ];
}

function repairArgs(config: string, kubeconfig: string, port: number, keys: string): string[] {
  return [
    'repair-controller',
    `--config=${config}`,
    `--kubeconfig=${kubeconfig}`,
    '--lease-name=meshgate-repair-controller',
    `--port=${port}`,
    '--host=127.0.0.1',
    `--webhook-config=${WEBHOOK_CONFIG}`,
    `--mark-key-dir=${keys}`,
    '--unmeshed-pods=report',
    '--log-level=info',
  ];
}

async function cliRuns(
  tree: ImageTree,
  kubeconfig: string,
  config: string,
  log: (s: string) => void,
): Promise<CliFigures[]> {
  const common = [`--kubeconfig=${kubeconfig}`, `--config=${config}`];
  const runs = [
    ['check', ...common, '--output=json'],
    ['check', '--audit', ...common, '--output=json'],
    ['explain', 'pod/app-1', '--namespace=team-1', ...common],
  ];
  const out: CliFigures[] = [];
  for (const argv of runs) {
    const f = await runCli(tree, argv);
    log(
      `  ${f.command}: ${f.seconds.toFixed(1)} s, peak ${f.peakMiB.toFixed(1)} MiB, exit ${f.exit}${f.stderr ? `\n    ${f.stderr}` : ''}`,
    );
    out.push(f);
  }
  return out;
}
