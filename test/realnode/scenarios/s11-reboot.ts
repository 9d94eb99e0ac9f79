// S11 (issue 25): a node reboots. The runtime and the kubelet are back before the mesh's DaemonSet has rewritten its
// CNI file: at boot the node's conf dir holds the primary plugin's file without the mesh plugin, the pods' netns are
// gone, and the kubelet recreates the sandboxes of the pods bound to it — through that chain — while the Node still
// carries the verdict its agent published before the reboot. The agent (a DaemonSet pod: it comes back with the
// node) and the mesh's installer (RESTORE_AFTER_MS after the node is up) follow. No app may run unredirected in that
// window: the pods keep meshgate's validator, which the kubelet runs again in each new sandbox before the app.
// The pod monitor judges each pod once; the same pods restart here, so every app start after the reboot is judged
// again (by its container's startedAt).
import type { V1Pod } from '@kubernetes/client-node';
import { redirected } from '../harness/monitor.ts';
import { OPT_IN_LABELS } from '../harness/mesh.ts';
import { rebootNode } from '../harness/reboot.ts';
import {
  core,
  counts,
  nodeCondition,
  type Scenario,
  type ScenarioContext,
  type ScenarioRow,
  sleep,
  unredirectedDetail,
  visibleEvents,
  waitRight,
  workloadRight,
  watchNamespace,
  baseline,
} from './common.ts';

const NS = 's11';
const REPLICAS = 3;
const RESTORE_AFTER_MS = 10_000;
/** The repair controller's rate limit and the kubelet's back-off bound the recovery, as in S2. */
const DEADLINE_MS = 150_000;

const appStart = (p: V1Pod) =>
  p.status?.containerStatuses?.find((s) => s.name === 'app')?.state?.running?.startedAt?.getTime();

/**
 * The reboot race on rn-1 for pods of namespace `ns` (labelled `labels`); `restore` is the mesh's DaemonSet coming
 * back RESTORE_AFTER_MS after the node (its installer rewriting the file). Shared with the ambient line's A3.
 * `agentLateMs`: meshgate's node agent (itself a DaemonSet pod) starts that much after the kubelet, so the kubelet
 * re-admits its pods while the Node still says verified and recreates their sandboxes through the boot-time chain:
 * the other order of the race, where the pods' validator is what must fail closed.
 */
export async function rebootRace(
  ctx: ScenarioContext,
  ns: string,
  labels: Record<string, string>,
  restore: (ctx: ScenarioContext) => Promise<void>,
  agentLateMs = 0,
): Promise<ScenarioRow> {
  const { cluster, mesh } = ctx;
  const restarted = new Map<string, boolean>(); // pod uid + app start → redirected
  let watching = true;
  const rn1 = cluster.node('rn-1');
  return watchNamespace(ctx, ns, labels, async (w) => {
    const { m, failures, seen } = w;
    try {
      // rn-1 verified, rn-2 not: the replicas run on rn-1.
      await baseline(cluster, w, ns, REPLICAS);
      await m.settled();
      const t0 = Date.now();
      // Every app (re)start after the reboot, judged in its new netns.
      const rejudge = (async () => {
        while (watching) {
          for (const p of (await core(cluster).listNamespacedPod({ namespace: ns })).items) {
            const at = appStart(p);
            const key = `${p.metadata!.uid}@${at}`;
            if (at === undefined || at < t0 || restarted.has(key) || p.spec?.nodeName !== 'rn-1') continue;
            const r = await cluster.redirectionOf(p).catch(() => undefined);
            restarted.set(key, Boolean(redirected(r)));
            if (!redirected(r))
              failures.push(
                `pod ${p.metadata!.name}'s app restarted on rn-1 without redirection: ${r?.dial ?? 'not judged'}`,
              );
          }
          await sleep(300);
        }
      })();
      await rebootNode(cluster.runId, cluster.bins, rn1, () => rn1.writeConflist(rn1.standardChain(false)));
      const up = Date.now();
      await sleep(agentLateMs);
      await mesh.restartAgent(rn1, {}, true);
      seen.push(`rn-1 back (containerd and kubelet) ${((up - t0) / 1000).toFixed(1)} s after the reboot began`);
      await sleep(RESTORE_AFTER_MS);
      await restore(ctx);
      const rightMs = await waitRight(t0, DEADLINE_MS, () => workloadRight(m, ns, 'web', REPLICAS));
      await sleep(2_000);
      watching = false;
      await rejudge;
      await m.settled();
      if (rightMs === undefined)
        failures.push(`${REPLICAS} redirected replicas not running ${DEADLINE_MS / 1000}s after the reboot`);
      failures.push(...unredirectedDetail(m));
      seen.push(
        `apps restarted on rn-1 after the reboot: ${restarted.size}, all redirected: ${[...restarted.values()].every(Boolean)}`,
      );
      seen.push(...(await visibleEvents(cluster, ns, t0)));
      seen.push(await nodeCondition(cluster, 'rn-1'));
      const late = [...restarted.values()].filter((ok) => !ok).length;
      return { unredirected: counts(m).unredirected + late, rightMs };
    } finally {
      watching = false;
    }
  });
}

export const s11: Scenario = {
  id: 'S11',
  title: 'node reboot: runtime and kubelet back before the mesh rewrote its file',
  namespaces: [NS],
  run: (ctx) =>
    rebootRace(ctx, NS, OPT_IN_LABELS, async ({ cluster }) => {
      const rn1 = cluster.node('rn-1');
      rn1.writeConflist(rn1.standardChain(true));
    }),
};
