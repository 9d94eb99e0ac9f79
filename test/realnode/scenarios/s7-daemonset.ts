// S7: a DaemonSet in an opted-in namespace. The DaemonSet controller pins each pod to its node before admission
// (a required node-affinity term on metadata.name), so meshgate knows the node: rn-1 (verified) gets a CNI-mode pod
// at once. rn-2 (unverified) gets a CNI-mode pod that meshgate holds to verified nodes by affinity, so the scheduler
// keeps it Pending (a FailedScheduling Event says why) — or, with the agent's --taint-unverified, the DaemonSet does
// not target rn-2 while the taint is there. It is never refused: a refused create stops the DaemonSet controller's
// slow-start batch, so rn-1's pod waited out the controller's exponential backoff whenever rn-2 came first in its
// node order (1 in 8 syncs, or 7 in 8 when rn-2 registered first: Go's map order for two nodes); a CI run failed
// that way. Then rn-2's mesh plugin is installed (istio-cni chained, as its installer does), the agent verifies
// rn-2, and the DaemonSet must have a redirected pod there within FIXED_DEADLINE_MS. The fix comes after a quiet
// period, when no event of the DaemonSet's own pods would wake any controller: only a change of the node can.
// Measured twice: (A) the chart's nodeAgent.taintUnverified, as the verdict; (B) the other setting, for comparison.
import {
  apps,
  core,
  nodeCondition,
  podTemplate,
  removeWorkload,
  type Scenario,
  type ScenarioContext,
  unredirectedDetail,
  visibleEvents,
  waitRight,
  sleep,
  watchNamespace,
} from './common.ts';
import { appRunning, type PodMonitor, redirected } from '../harness/monitor.ts';
import { OPT_IN_LABELS } from '../harness/mesh.ts';
import { UNVERIFIED_TAINT, VERIFIED_LABEL } from '../../../src/contract/node.ts';
import type { V1Pod } from '@kubernetes/client-node';

const NS = 's7';
/** rn-1's pod must be up first; 60 s bounds a stuck one (it takes seconds). */
const START_DEADLINE_MS = 60_000;
/** No event of the DaemonSet's pods for this long before rn-2 is fixed. */
const QUIET_MS = 5_000;
/** After rn-2 is fixed: a DaemonSet should catch up in seconds; 45 s is generous. */
const FIXED_DEADLINE_MS = 45_000;

interface Phase {
  taint: boolean;
  fixedToRunningMs?: number;
  /** Refusals after rn-2's chain was fixed. */
  late: number;
  seen: string[];
}

const podOn = (m: PodMonitor, app: string, node: string) =>
  m
    .current(NS)
    .some(
      (p) =>
        p.metadata?.labels?.app === app &&
        !p.metadata?.deletionTimestamp &&
        p.spec?.nodeName === node &&
        appRunning(p) &&
        redirected(m.pods.get(p.metadata!.uid!)?.redirection),
    );

const dsPods = (m: PodMonitor, app: string) =>
  m.current(NS).filter((p) => p.metadata?.labels?.app === app && !p.metadata?.deletionTimestamp);

/** The node a DaemonSet pod is pinned to (its first term's metadata.name field). */
const pinnedTo = (p: V1Pod) =>
  p.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms?.[0]?.matchFields?.find(
    (f) => f.key === 'metadata.name',
  )?.values?.[0];

/** Every required term also requires meshgate.io/cni-verified=true, so only a verified node can take the pod. */
const heldToVerified = (p: V1Pod) =>
  (p.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? []).every((t) =>
    t.matchExpressions?.some((e) => e.key === VERIFIED_LABEL && e.operator === 'In' && e.values?.[0] === 'true'),
  );

/** What each of the DaemonSet's pods is doing, for a failure message. */
function describePods(m: PodMonitor, app: string): string {
  const pods = dsPods(m, app);
  if (pods.length === 0) return 'none';
  return pods
    .map((p) => {
      const states = [...(p.status?.initContainerStatuses ?? []), ...(p.status?.containerStatuses ?? [])]
        .map(
          (c) =>
            `${c.name} ${Object.keys(c.state ?? {})[0] ?? '?'}${c.restartCount ? ` (${c.restartCount} restarts)` : ''}`,
        )
        .join(', ');
      const judged = m.pods.get(p.metadata!.uid!)?.redirection;
      return (
        `${p.metadata?.name} for ${pinnedTo(p) ?? '?'} on ${p.spec?.nodeName ?? '(unbound)'} ${p.status?.phase}` +
        `${states ? ` [${states}]` : ''}${judged ? ` redirected: ${redirected(judged) ? 'yes' : 'no'}` : ''}`
      );
    })
    .join('; ');
}

/** rn-2 unverified (no istio-cni) with its agent tainting or not; DaemonSet `name` created; rn-2 fixed; measured. */
async function phase(
  ctx: ScenarioContext,
  m: PodMonitor,
  name: string,
  taint: boolean,
  failures: string[],
): Promise<Phase> {
  const { cluster, mesh } = ctx;
  const rn2 = cluster.node('rn-2');
  rn2.writeConflist(rn2.standardChain(false));
  await mesh.restartAgent(rn2, { taintUnverified: taint });
  await mesh.waitVerdict('rn-2', false);
  const tainted = async () =>
    ((await core(cluster).readNode({ name: 'rn-2' })).spec?.taints ?? []).some((t) => t.key === UNVERIFIED_TAINT.key);
  if (taint && (await waitRight(Date.now(), 10_000, tainted)) === undefined)
    failures.push(`${name}: the agent did not taint unverified rn-2`);
  const t0 = Date.now();
  await apps(cluster).createNamespacedDaemonSet({
    namespace: NS,
    body: {
      metadata: { name },
      spec: { selector: { matchLabels: { app: name } }, template: podTemplate(cluster, name) },
    } as never,
  });
  if ((await waitRight(t0, START_DEADLINE_MS, () => podOn(m, name, 'rn-1'))) === undefined)
    failures.push(
      `${name}: no redirected pod on verified rn-1 ${START_DEADLINE_MS / 1000} s after the DaemonSet was created; ` +
        `its pods: ${describePods(m, name)}`,
    );
  await sleep(QUIET_MS);
  if (m.all().some((p) => p.firstSeen >= t0 && p.node === 'rn-2'))
    failures.push(`${name}: a pod was bound to unverified rn-2`);
  const events = (await visibleEvents(cluster, NS, t0)).filter(
    (e) => e.startsWith('Event DaemonSet') || e.startsWith('Event Pod FailedScheduling'),
  );
  const refusals = Number(/FailedCreate ×(\d+)/.exec(events.join('\n'))?.[1] ?? 0);
  const seen = [
    ...events,
    `${await nodeCondition(cluster, 'rn-2')}${(await tainted()) ? `; taint ${UNVERIFIED_TAINT.key}:${UNVERIFIED_TAINT.effect}` : ''}`,
  ];
  if (refusals > 0)
    failures.push(`${name}: meshgate refused ${refusals} of the DaemonSet's pods (FailedCreate), which stalls it`);
  if (!taint) {
    // The pod for rn-2 exists, held by meshgate's affinity, and says why it waits.
    const waiting = dsPods(m, name).filter((p) => !p.spec?.nodeName && pinnedTo(p) === 'rn-2');
    if (waiting.length !== 1 || !waiting.every(heldToVerified))
      failures.push(
        `${name}: expected one pod for rn-2, unbound and held to verified nodes by affinity; its pods: ${describePods(m, name)}`,
      );
    if (!events.some((e) => e.startsWith('Event Pod FailedScheduling') && e.includes('affinity')))
      failures.push(`${name}: no FailedScheduling Event tells why the pod for rn-2 waits`);
  }
  const fixedAt = Date.now();
  rn2.writeConflist(rn2.standardChain(true));
  await mesh.waitVerdict('rn-2', true);
  const fixedToRunningMs = await waitRight(fixedAt, FIXED_DEADLINE_MS, () => podOn(m, name, 'rn-2'));
  // Refusals after the fix: a create (with --taint-unverified, the taint's removal wakes the DaemonSet controller)
  // that reached meshgate while it still read rn-2's MeshCNIVerified condition as False would send the controller
  // back into its backoff; the agent writes the condition before it removes the taint or sets the label.
  const late = mesh.webhook.reviews.filter(
    (r) => r.at >= fixedAt && r.verdict.kind === 'deny' && 'message' in r.verdict && r.verdict.message.includes('rn-2'),
  );
  const ds = await apps(cluster).readNamespacedDaemonSet({ namespace: NS, name });
  seen.push(
    `DaemonSet ${name} (${taint ? 'with' : 'without'} --taint-unverified): desired ${ds.status?.desiredNumberScheduled}, ready ${ds.status?.numberReady}; ` +
      `rn-2's pod ${fixedToRunningMs === undefined ? `not Running ${FIXED_DEADLINE_MS / 1000} s after rn-2 was fixed` : `Running ${(fixedToRunningMs / 1000).toFixed(1)} s after rn-2 was fixed`}`,
  );
  if (late.length)
    seen.push(
      `${late.length} refusal(s) for rn-2 after its chain was fixed: ${late[0].verdict.kind === 'deny' ? late[0].verdict.message.slice(0, 160) : ''}`,
    );
  await removeWorkload(cluster, NS, 'DaemonSet', name);
  return { taint, fixedToRunningMs, late: late.length, seen };
}

export const s7: Scenario = {
  id: 'S7',
  title: 'DaemonSet pod pre-bound to an unverified node',
  namespaces: [NS],
  async run(ctx) {
    const { mesh } = ctx;
    return watchNamespace(ctx, NS, OPT_IN_LABELS, async ({ m, failures }) => {
      const a = await phase(ctx, m, 'agent', mesh.chart.taintUnverified, failures);
      // Until rn-2 is fixed the cluster is right (rn-2's pod refused with its reason); "right again" is counted
      // from the fix: rn-2 verified, its DaemonSet pod still missing.
      const rightMs = a.fixedToRunningMs;
      if (a.fixedToRunningMs === undefined) {
        failures.push(
          `with the chart's defaults (nodeAgent.taintUnverified ${a.taint}) the DaemonSet had no redirected pod on rn-2 ${FIXED_DEADLINE_MS / 1000} s after rn-2 was verified` +
            (a.late
              ? `; ${a.late} refusal(s) came after the fix, while meshgate still read rn-2's MeshCNIVerified condition as False`
              : ''),
        );
      }
      const b = await phase(ctx, m, 'agent-other', !a.taint, []);
      await m.settled();
      failures.push(...unredirectedDetail(m));
      return { rightMs, seen: [...a.seen, ...b.seen.map((s) => `(for comparison) ${s}`)] };
    });
  },
};
