// A5 (issue 33 §6): a guarded ambient namespace taken out of ambient mode while its pods run, with the real istio-cni
// node agent and ztunnel on rn-1:
//   1. its namespace admin (a Role in the namespace that may patch the Namespace object) removes
//      istio.io/dataplane-mode: refused by the chart's enforcement policy (templates/enforcement-policy.yaml, rendered
//      by real helm for the tier's webhook entries), the label stays;
//   2. a cluster admin removes it: istio-cni's agent takes every pod out of the mesh (in-pod rules gone, its
//      ambient.istio.io/redirection removed through pods/status) while the pods keep running; meshgate's repair
//      controller records each (MeshCaptureLost) and, the namespace being at enforce, deletes it; the Deployment's
//      replacements are refused by meshgate (no longer ambient, and no proxy: proxy_missing), so none runs.
// Measured per pod, from the relabel: when its in-pod rules were gone (polled in its netns), when meshgate deleted
// it, and between the two the window it ran without capture. Passes when the admin's change is refused, every pod is
// deleted within DEADLINE_MS, each got its Event, and no pod of the namespace runs afterwards.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';
import { CoreV1Api, PatchStrategy, setHeaderOptions, type V1Pod } from '@kubernetes/client-node';
import { chartDir } from '../../chart/helm.ts';
import { EDIT_OWN_NAMESPACE, grantRole, impersonate } from '../../e2e/impersonate.ts';
import { describeError } from '../../e2e/harness/wait.ts';
import { AMBIENT_OPT_IN } from '../harness/mesh.ts';
import { MESH_NAMESPACE } from '../harness/webhook.ts';
import type { RealCluster } from '../harness/cluster.ts';
import {
  core,
  oneLine,
  type Scenario,
  sleep,
  unredirectedDetail,
  visibleEvents,
  waitRight,
  watchNamespace,
  baseline,
} from './common.ts';

const run = promisify(execFile);
const NS = 'a5';
const REPLICAS = 2;
const DATAPLANE = 'istio.io/dataplane-mode';
const TEAM = 'a5-admin';
/** From the relabel until every pod is deleted: istio-cni acts within a second, the repair controller on its watch. */
const DEADLINE_MS = 30_000;
/** How long the namespace is watched afterwards for a replacement that runs (there must be none). */
const QUIET_MS = 8_000;
/** How often the window's two ends are polled (an iptables-save of each backend, a GET): its resolution. */
const POLL_MS = 100;
const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

/** The chart's enforcement policy and binding, rendered for the tier's one webhook entry (meshgate.io/inject). */
async function enforcementPolicy(c: RealCluster): Promise<string> {
  const values = {
    mesh: 'istio',
    webhook: {
      selectors: [
        {
          name: 'pods',
          namespaceSelector: { matchExpressions: [{ key: 'meshgate.io/inject', operator: 'In', values: ['enabled'] }] },
        },
      ],
    },
    config: { ambient: { enabled: true }, enforcement: { default: 'enforce' } },
  };
  const r = await c.cp.helm([
    'template',
    'meshgate',
    chartDir,
    '--namespace',
    MESH_NAMESPACE,
    '--kube-version',
    '1.34.0',
    '--set-json',
    `webhook=${JSON.stringify(values.webhook)}`,
    '--set-json',
    `config=${JSON.stringify(values.config)}`,
    '--set',
    'mesh=istio',
    '--show-only',
    'templates/enforcement-policy.yaml',
    '--show-only',
    'templates/enforcement-policybinding.yaml',
  ]);
  if (r.code !== 0) throw new Error(`helm template: ${r.stderr}`);
  return r.stdout;
}

/**
 * Whether ztunnel's in-pod chains are still in the pod's netns; undefined once the netns is gone (containerd removes
 * its file when it stops the sandbox: nothing of the pod runs any more). The sandbox container's spec, which names
 * the path, outlives it until the sandbox is removed.
 */
async function captured(c: RealCluster, pod: V1Pod): Promise<boolean | undefined> {
  let netns: string;
  try {
    netns = await c.node(pod.spec!.nodeName!).podNetns(pod.metadata!.uid!);
  } catch {
    return undefined;
  }
  if (!existsSync(netns)) return undefined;
  let text = '';
  for (const save of ['iptables-nft-save', 'iptables-legacy-save']) {
    const out = await run('nsenter', [`--net=${netns}`, save, '-t', 'nat'], { timeout: 10_000 }).then(
      (o) => o.stdout,
      () => undefined,
    );
    // The netns went away between the check and nsenter: as gone.
    if (out === undefined) return existsSync(netns) ? true : undefined;
    text += out;
  }
  return /^:ISTIO_PRERT /m.test(text) && /^:ISTIO_OUTPUT /m.test(text);
}

export const a5: Scenario = {
  id: 'A5',
  title: 'a guarded ambient namespace relabelled out of ambient while its pods run',
  namespaces: [NS],
  async run({ cluster, mesh }) {
    if (!mesh.ambient) throw new Error('A5 needs the ambient line (harness/ambient.ts)');
    const policy = await enforcementPolicy(cluster);
    let rightMs: number | undefined;
    try {
      return await watchNamespace({ cluster, mesh }, NS, AMBIENT_OPT_IN, async (w) => {
        const { m, failures, seen } = w;
        const applied = await cluster.cp.kubectl(['apply', '-f', '-'], { input: policy });
        if (applied.code !== 0) throw new Error(`kubectl apply (enforcement policy): ${applied.stderr}`);
        await grantRole(cluster.cp.kc, NS, 'edit-own-namespace', { rules: EDIT_OWN_NAMESPACE }, { user: TEAM });
        await baseline(cluster, w, NS, REPLICAS, 'the redirected replicas');
        const team = impersonate(cluster.cp.kc, { user: TEAM }).makeApiClient(CoreV1Api);
        const patchLabel = (asTeam: boolean, dryRun?: 'All') =>
          (asTeam ? team : core(cluster))
            .patchNamespace({ name: NS, body: { metadata: { labels: { [DATAPLANE]: null } } }, dryRun }, merge)
            .then(
              () => 'allowed',
              (err) => describeError(err),
            );
        // 1. The namespace's admin: refused (the policy takes a moment to be in force: asked as a dry run until then).
        const refused = await waitRight(Date.now(), 30_000, async () => (await patchLabel(true, 'All')) !== 'allowed');
        const answer = await patchLabel(true);
        const label = (await core(cluster).readNamespace({ name: NS })).metadata?.labels?.[DATAPLANE];
        if (refused === undefined || !answer.includes('out of Istio ambient mode') || label !== 'ambient')
          failures.push(`the namespace admin's relabel was not refused: ${oneLine(answer)} (label now ${label})`);
        else seen.push(`namespace admin removes ${DATAPLANE}: ${oneLine(answer, 400)}`);

        // 2. A cluster admin: pods lose their capture; meshgate records and deletes them.
        const pods = m.current(NS).filter((p) => !p.metadata?.deletionTimestamp && p.status?.phase === 'Running');
        const t0 = Date.now();
        const byAdmin = await patchLabel(false);
        if (byAdmin !== 'allowed') failures.push(`the cluster admin's relabel failed: ${byAdmin}`);
        // Per pod, two pollers side by side (each ~every POLL_MS): its netns — when ztunnel's rules are gone from it,
        // and when the sandbox itself is (nothing of the pod runs any more) — and the pod object (its deletion).
        const deadline = t0 + DEADLINE_MS;
        const since = () => Date.now() - t0;
        const watch = async (p: V1Pod) => {
          const uid = p.metadata!.uid!;
          const netns = (async () => {
            let rulesGone: number | undefined;
            while (Date.now() < deadline) {
              const c = await captured(cluster, p);
              if (c === false) rulesGone ??= since();
              if (c === undefined) return { rulesGone, sandboxGone: since() };
              await sleep(POLL_MS);
            }
            return { rulesGone, sandboxGone: undefined };
          })();
          const deleted = (async () => {
            while (Date.now() < deadline) {
              const now = await core(cluster)
                .readNamespacedPod({ name: p.metadata!.name!, namespace: NS })
                .catch(() => undefined);
              if (!now || now.metadata?.uid !== uid || now.metadata?.deletionTimestamp) return since();
              await sleep(POLL_MS);
            }
            return undefined;
          })();
          return { pod: p, ...(await netns), deleted: await deleted };
        };
        const watched = await Promise.all(pods.map(watch));
        const deletedAt = new Map<string, number>();
        const s = (ms: number | undefined) => (ms === undefined ? '?' : `${(ms / 1000).toFixed(2)} s`);
        for (const { pod: p, rulesGone, sandboxGone, deleted } of watched) {
          if (deleted === undefined)
            failures.push(`pod ${p.metadata!.name} not deleted ${DEADLINE_MS / 1000} s after the relabel`);
          else deletedAt.set(p.metadata!.uid!, deleted);
          if (sandboxGone === undefined)
            failures.push(`pod ${p.metadata!.name}'s sandbox still there ${DEADLINE_MS / 1000} s after the relabel`);
          // Without a poll that saw the rules gone first, they went with the sandbox: no window that could be seen.
          const window = sandboxGone === undefined ? '?' : s(sandboxGone - (rulesGone ?? sandboxGone));
          seen.push(
            `pod ${p.metadata!.name}: rules gone ${rulesGone === undefined ? 'not seen before the sandbox' : `after ${s(rulesGone)}`}, ` +
              `deleted by meshgate after ${s(deleted)}, sandbox gone after ${s(sandboxGone)}: ran without capture for ` +
              `${window} (polled every ${POLL_MS} ms; the deletion's grace is 2 s)`,
          );
        }
        rightMs = deletedAt.size === pods.length ? Math.max(...deletedAt.values()) : undefined;
        // 3. The replacements: refused, none runs.
        await sleep(QUIET_MS);
        const running = m.current(NS).filter((p) => !p.metadata?.deletionTimestamp && p.status?.phase === 'Running');
        if (running.length)
          failures.push(
            `${running.length} pod(s) of ${NS} run after the relabel: ${running.map((p) => p.metadata?.name).join(', ')}`,
          );
        const events = await visibleEvents(cluster, NS, t0);
        seen.push(...events);
        const lostEvents = (await core(cluster).listNamespacedEvent({ namespace: NS })).items.filter(
          (e) => e.reason === 'MeshCaptureLost',
        );
        for (const p of pods)
          if (
            !lostEvents.some(
              (e) => e.involvedObject.uid === p.metadata!.uid || e.involvedObject.name === p.metadata!.name,
            )
          )
            failures.push(`no MeshCaptureLost Event on pod ${p.metadata!.name}`);
        if (!events.some((e) => /FailedCreate.*meshgate/.test(e)))
          failures.push("the Deployment's replacements were not refused by meshgate (no FailedCreate naming it)");
        await m.settled();
        failures.push(...unredirectedDetail(m));
        return { rightMs };
      });
    } finally {
      await cluster.cp.kubectl(['delete', '--ignore-not-found', '-f', '-'], { input: policy });
    }
  },
};
