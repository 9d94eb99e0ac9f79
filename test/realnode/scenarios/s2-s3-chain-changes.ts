// S2 and S3: rn-1's chain loses the mesh plugin after it was verified, at the moment a Deployment scales up.
//   S2  the primary CNI rewrites its own file without the plugin (10-meshgate-e2e.conflist: bridge + portmap)
//   S3  a file that sorts first appears (00-multus.conf: a bridge network, standing in for Multus' file; there is
//       no multus binary here) — containerd loads only the first file
// Both nodes run istio-cni here (two verified nodes, one of which breaks), so pods always have somewhere to go.
// Pods admitted in the window before the node agent withdraws rn-1 start on a chain without istio-cni: their
// validator (istio-validation, meshgate's image) must fail them before the proxy and the app start. The repair
// controller deletes them (and, after enough failures, quarantines rn-1); their replacements are admitted after the
// withdrawal and pinned to rn-2. After RESTORE_AFTER_MS the mesh plugin's installer puts the plugin back (istio-cni
// chains itself into the file that sorts first); rn-1 is verified again unless the repair controller holds it.
import {
  core,
  nodeCondition,
  oneLine,
  scale,
  type Scenario,
  type ScenarioContext,
  sleep,
  unredirectedDetail,
  visibleEvents,
  waitRight,
  workloadRight,
  watchNamespace,
  baseline,
} from './common.ts';
import type { PodMonitor } from '../harness/monitor.ts';
import { OPT_IN_LABELS } from '../harness/mesh.ts';
import { bridgePlugin, CONFLIST_NAME, meshPlugin, portmapPlugin } from '../harness/cni.ts';
import { writeFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { VERIFIED_LABEL } from '../harness/agent.ts';

const BEFORE = 2;
const AFTER = 6;
/** How long the plugin stays out of the chain: long enough for pods to be admitted, fail and be repaired meanwhile. */
const RESTORE_AFTER_MS = 10_000;
/** Repair is rate-limited (10 deletions a minute) and the kubelet backs off restarts: 150 s bounds a slow recovery. */
const DEADLINE_MS = 150_000;

export interface ChainChange {
  describe: string;
  /** Before the baseline: lay out rn-1's dir as the change needs it (rn-1 must end up verified). */
  setup?(ctx: ScenarioContext): void;
  brk(ctx: ScenarioContext): void;
  restore(ctx: ScenarioContext): void;
}

export interface RaceOptions {
  /** The namespace's labels (default OPT_IN_LABELS; the ambient line: AMBIENT_OPT_IN). */
  labels?: Record<string, string>;
  /**
   * Whether rn-2 chains the plugin too, a second verified node for the pods to go to (default true). The ambient
   * line has one ambient node: its pods wait Pending for rn-1 instead.
   */
  secondNode?: boolean;
}

export async function chainRace(ctx: ScenarioContext, ns: string, change: ChainChange, opts: RaceOptions = {}) {
  const { cluster, mesh } = ctx;
  if (opts.secondNode ?? true) {
    const rn2 = cluster.node('rn-2');
    rn2.writeConflist(rn2.standardChain(true));
    await mesh.waitVerdict('rn-2', true);
  }
  if (change.setup) {
    change.setup(ctx);
    await mesh.waitVerdict('rn-1', true);
  }
  return watchNamespace(ctx, ns, opts.labels ?? OPT_IN_LABELS, async (w) => {
    const { m, failures, seen } = w;
    await baseline(cluster, w, ns, BEFORE);
    const t0 = Date.now();
    change.brk(ctx);
    await scale(cluster, ns, 'web', AFTER);
    const withdrawn = await waitRight(
      t0,
      30_000,
      async () => (await core(cluster).readNode({ name: 'rn-1' })).metadata?.labels?.[VERIFIED_LABEL] === 'false',
    );
    if (withdrawn === undefined)
      failures.push(`the node agent did not withdraw rn-1 within 30 s of: ${change.describe}`);
    else seen.push(`${await nodeCondition(cluster, 'rn-1')} (agent withdrew after ${(withdrawn / 1000).toFixed(1)} s)`);
    // Right again is watched from t0 on, while the plugin is still missing: the restore only bounds how long pods
    // pinned to verified nodes have to wait if no node stays verified.
    const right = waitRight(t0, DEADLINE_MS, () => workloadRight(m, ns, 'web', AFTER));
    await sleep(Math.max(0, RESTORE_AFTER_MS - (Date.now() - t0)));
    change.restore(ctx);
    const rightMs = await right;
    await m.settled();
    // rn-1 after the restore: verified again, or still withdrawn by the repair controller (quarantine).
    await mesh.waitVerdict('rn-1', true, 5_000).catch(() => undefined);
    if (rightMs === undefined)
      failures.push(`${AFTER} redirected replicas not running ${DEADLINE_MS / 1000}s after the change${stuck(m, ns)}`);
    failures.push(...unredirectedDetail(m));
    const failedValidation = await validationFailures(ctx, ns);
    seen.push(...failedValidation.slice(0, 1));
    const events = await visibleEvents(cluster, ns, t0);
    seen.push(...events);
    if (failedValidation.length && !events.some((e) => e.includes('MeshRedirectFailed')))
      failures.push('pods failed validation but no repair Event (MeshRedirectFailed) was recorded');
    const where: Record<string, number> = {};
    for (const p of m.ran())
      where[`${p.mode ?? 'no'} mode on ${p.node}`] = (where[`${p.mode ?? 'no'} mode on ${p.node}`] ?? 0) + 1;
    seen.push(
      `ran: ${Object.entries(where)
        .map(([k, v]) => `${v} in ${k}`)
        .join(', ')}; after the restore: ${await nodeCondition(cluster, 'rn-1')}`,
    );
    return { rightMs };
  });
}

/** Why the workload is not right: pods not running, with their last state, for the failure line. */
function stuck(m: PodMonitor, ns: string): string {
  const pods = m
    .current(ns)
    .filter((p) => !(p.status?.containerStatuses ?? []).some((s) => s.name === 'app' && s.state?.running));
  if (!pods.length) return '';
  return `; not running: ${pods.map((p) => `${p.metadata!.name}@${p.spec?.nodeName ?? '-'} ${p.status?.phase}${(p.status?.initContainerStatuses ?? []).map((s) => ` ${s.name}:${s.state?.waiting?.reason ?? (s.state?.terminated ? `exit ${s.state.terminated.exitCode}` : Object.keys(s.state ?? {})[0])}`).join('')}`).join('; ')}`;
}

/** meshgate's validation container in each mesh's pods. */
const VALIDATORS = ['istio-validation', 'linkerd-network-validator'];

/** Termination messages of validators that failed (what `kubectl describe pod` shows), still visible on live pods. */
async function validationFailures(ctx: ScenarioContext, ns: string): Promise<string[]> {
  const pods = (await core(ctx.cluster).listNamespacedPod({ namespace: ns })).items;
  const out: string[] = [];
  for (const p of pods) {
    const s = p.status?.initContainerStatuses?.find((x) => VALIDATORS.includes(x.name));
    const t = s?.lastState?.terminated ?? s?.state?.terminated;
    if (t && t.exitCode !== 0)
      out.push(`pod ${p.metadata!.name} ${s!.name} exit ${t.exitCode}: ${oneLine(t.message ?? t.reason ?? '', 160)}`);
  }
  return out;
}

/** A bridge network in a .conf that sorts before every other file: what installing Multus (00-multus.conf) does. */
const MULTUS_CONF = '00-multus.conf';

export const s2: Scenario = {
  id: 'S2',
  title: 'chain overwritten after verification while pods are created',
  namespaces: ['s2'],
  run: (ctx) =>
    chainRace(ctx, 's2', {
      describe: `rn-1's ${CONFLIST_NAME} rewritten without the mesh plugin`,
      brk: ({ cluster }) => void cluster.node('rn-1').writeConflist(cluster.node('rn-1').standardChain(false)),
      restore: ({ cluster }) => void cluster.node('rn-1').writeConflist(cluster.node('rn-1').standardChain(true)),
    }),
};

export const s3: Scenario = {
  id: 'S3',
  title: 'a file that sorts first appears (00-multus.conf)',
  namespaces: ['s3'],
  run: (ctx) =>
    chainRace(ctx, 's3', {
      describe: `${MULTUS_CONF} written into rn-1's conf dir`,
      brk: ({ cluster }) => {
        const n = cluster.node('rn-1');
        const tmp = join(n.cni.confDir, `.${MULTUS_CONF}.tmp`);
        writeFileSync(tmp, JSON.stringify({ cniVersion: '0.3.1', name: 'multus-stand-in', ...bridgePlugin(n.cni) }));
        renameSync(tmp, join(n.cni.confDir, MULTUS_CONF));
      },
      // The mesh plugin's installer (istio-cni's, linkerd-cni's) chains itself into the first file, turning a .conf
      // into a .conflist.
      restore: ({ cluster }) => {
        const n = cluster.node('rn-1');
        n.writeConflist([bridgePlugin(n.cni), portmapPlugin(), meshPlugin(n.cni)], '00-multus.conflist');
        rmSync(join(n.cni.confDir, MULTUS_CONF), { force: true });
      },
    }),
};
