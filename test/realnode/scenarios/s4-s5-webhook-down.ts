// S4 and S5: meshgate's webhook is down (its server stopped: the apiserver's calls are refused) while a Deployment
// in an opted-in namespace scales up, then it comes back on the same address after OUTAGE_MS.
//   S4  the chart's recommended policies: mutating Ignore, validating Fail. Istio still injects istio-init (its own
//       webhook is up), meshgate's mutation is skipped, and the validating webhook refuses every pod: nothing runs
//       unjudged. The ReplicaSet retries (with backoff) until meshgate answers again.
//   S5  both Fail: opted-in pods are refused as in S4, while meshgate's own namespace (even labelled
//       meshgate.io/inject=enabled by mistake) and kube-system are never sent to the webhook, so their pods start
//       during the outage.
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import {
  apps,
  appContainer,
  createDeployment,
  oneLine,
  refusal,
  scale,
  type Scenario,
  type ScenarioContext,
  sleep,
  unredirectedDetail,
  visibleEvents,
  waitRight,
  workloadRight,
  core,
  watchNamespace,
  baseline,
} from './common.ts';
import { appRunning } from '../harness/monitor.ts';
import { OPT_IN_LABELS } from '../harness/mesh.ts';
import { MESH_NAMESPACE } from '../harness/webhook.ts';

/** Deployments in meshgate's own namespace and in kube-system, created during the S5 outage. */
const SYSTEM_WORKLOADS: Array<[string, string]> = [
  [MESH_NAMESPACE, 'meshgate-webhook'],
  ['kube-system', 'system-workload'],
];
const BEFORE = 2;
const AFTER = 4;
/** A webhook Deployment's restart: long enough for the ReplicaSet controller to retry and back off a few times. */
const OUTAGE_MS = 6_000;
/** The ReplicaSet controller's retry backoff after the outage dominates; 120 s bounds it. */
const DEADLINE_MS = 120_000;

async function outage(ctx: ScenarioContext, ns: string, policy: 'Ignore' | 'Fail', system: boolean) {
  const { cluster, mesh } = ctx;
  await mesh.webhook.register({ mutating: policy, validating: 'Fail' });
  try {
    return await watchNamespace(ctx, ns, OPT_IN_LABELS, async (w) => {
      const { m, failures, seen } = w;
      await baseline(cluster, w, ns, BEFORE);
      const t0 = Date.now();
      await mesh.webhook.down();
      await scale(cluster, ns, 'web', AFTER);
      const refused = await refusal(cluster, ns, {
        metadata: { name: 'during-outage' },
        spec: { containers: [appContainer(cluster)] },
      });
      if (refused === undefined) failures.push('a pod was admitted into an opted-in namespace while meshgate was down');
      else seen.push(`admission: ${oneLine(refused, 200)}`);
      if (system) {
        // meshgate's own namespace, labelled as if opted in by mistake, and kube-system: never sent to the webhook.
        await labelMeshNamespace(ctx, { 'meshgate.io/inject': 'enabled' });
        for (const [namespace, name] of SYSTEM_WORKLOADS) await createDeployment(cluster, namespace, name, 1);
        const sysMs = await waitRight(t0, OUTAGE_MS + 30_000, async () =>
          (
            await Promise.all(
              SYSTEM_WORKLOADS.map(async ([namespace, name]) =>
                (
                  await core(cluster).listNamespacedPod({ namespace, labelSelector: `app=${name}` })
                ).items.some(appRunning),
              ),
            )
          ).every(Boolean),
        );
        if (sysMs === undefined)
          failures.push("meshgate's own or kube-system pods did not start while meshgate was down");
        else seen.push(`meshgate and kube-system pods Running ${(sysMs / 1000).toFixed(1)} s into the outage`);
      }
      await sleep(Math.max(0, OUTAGE_MS - (Date.now() - t0)));
      const admittedDuringOutage = m.all().filter((p) => p.namespace === ns && p.firstSeen >= t0).length;
      if (admittedDuringOutage > 0)
        failures.push(`${admittedDuringOutage} pods were admitted into ${ns} while meshgate was down`);
      await mesh.webhook.up();
      const upAt = Date.now();
      const rightMs = await waitRight(t0, DEADLINE_MS, () => workloadRight(m, ns, 'web', AFTER));
      await m.settled();
      if (rightMs === undefined)
        failures.push(`${AFTER} redirected replicas not running ${DEADLINE_MS / 1000}s after the outage began`);
      else seen.push(`recovered ${((rightMs - (upAt - t0)) / 1000).toFixed(1)} s after meshgate came back`);
      failures.push(...unredirectedDetail(m));
      const events = await visibleEvents(cluster, ns, t0);
      seen.push(...events);
      if (!events.some((e) => e.includes('FailedCreate')))
        failures.push('no FailedCreate Event on the ReplicaSet: the outage left no visible reason');
      return { rightMs };
    });
  } finally {
    await mesh.webhook.up();
    await mesh.webhook.register(mesh.chart.webhook);
  }
}

async function labelMeshNamespace({ cluster }: ScenarioContext, labels: Record<string, string | null>): Promise<void> {
  await core(cluster).patchNamespace(
    { name: MESH_NAMESPACE, body: { metadata: { labels } } },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
}

export const s4: Scenario = {
  id: 'S4',
  title: 'webhook down, failurePolicy Ignore (mutating Ignore, validating Fail)',
  namespaces: ['s4'],
  run: (ctx) => outage(ctx, 's4', 'Ignore', false),
};

export const s5: Scenario = {
  id: 'S5',
  title: "webhook down, failurePolicy Fail: meshgate's own and system pods still start",
  namespaces: ['s5'],
  run: async (ctx) => {
    try {
      return await outage(ctx, 's5', 'Fail', true);
    } finally {
      for (const [namespace, name] of SYSTEM_WORKLOADS)
        await apps(ctx.cluster)
          .deleteNamespacedDeployment({ namespace, name })
          .catch(() => undefined);
      await labelMeshNamespace(ctx, { 'meshgate.io/inject': null });
    }
  },
};
