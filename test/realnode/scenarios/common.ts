// What every scenario of the matrix shares: its context and result row, workloads (a Deployment whose app is the
// pause image: the workload itself does nothing, its pod's network is what is judged), waiting for "the cluster is
// right again", what a person sees (admission messages, Events, the Node condition), and the reset that puts both
// nodes back to their standard chains between scenarios.
import { AppsV1Api, CoreV1Api, PatchStrategy, setHeaderOptions, type V1Pod } from '@kubernetes/client-node';
import { describeError } from '../../e2e/harness/wait.ts';
import { CONFLIST_NAME } from '../harness/cni.ts';
import type { RealCluster } from '../harness/cluster.ts';
import { PAUSE_UID, pauseRef } from '../harness/images.ts';
import { cannotBecomeProxy } from '../harness/pods.ts';
import type { MeshStack } from '../harness/mesh.ts';
import { APP_CONTAINER, appRunning, PodMonitor, redirected } from '../harness/monitor.ts';
import { CONDITION_TYPE } from '../../../src/contract/node.ts';
import { QUARANTINE_ANNOTATION, QUARANTINE_HISTORY_ANNOTATION } from '../../../src/node/quarantine.ts';
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';

export interface ScenarioContext {
  cluster: RealCluster;
  mesh: MeshStack;
}

export interface ScenarioResult {
  id: string;
  title: string;
  /** Pods the apiserver admitted (unique UIDs seen in the scenario's namespaces). */
  created: number;
  /** Pods whose app container ran. */
  running: number;
  /** Pods whose app ran without redirection (judged in their netns), or could not be judged. */
  unredirected: number;
  /**
   * Connections that got past their (redirected) pod's proxy from an app that became it, before the node stopped
   * the app (S9's node side on a runtime without meshgate's NRI plugin): the window docs/security.md states,
   * measured. Not a failure of meshgate's guarantee, so not in `unredirected`; an app that got past and was not
   * stopped is counted there.
   */
  windowEscapes?: number;
  /** From the disturbance until the cluster is right again; undefined: not within the scenario's deadline. */
  rightMs?: number;
  /** What a person sees: admission messages, Events (reason ×count), the Node condition. */
  seen: string[];
  /** Why the scenario failed; empty when it passed. */
  failures: string[];
  durationMs: number;
}

export interface Scenario {
  id: string;
  title: string;
  /** Namespaces the scenario creates; the runner deletes them (and waits for their pods) afterwards. */
  namespaces: string[];
  run(ctx: ScenarioContext): Promise<ScenarioRow>;
}

export const core = (c: RealCluster) => c.cp.kc.makeApiClient(CoreV1Api);
export const apps = (c: RealCluster) => c.cp.kc.makeApiClient(AppsV1Api);
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

/**
 * The workload container: the pause image (nothing to start, nothing to crash); the proxy is what Istio injects.
 * It shows it cannot become the proxy, as `apps.privileges: restricted` asks (docs/security.md): the pause image's
 * own user 65535 made explicit, no escalation, no capabilities.
 */
export function appContainer(c: RealCluster) {
  return {
    name: APP_CONTAINER,
    image: pauseRef(c.bins.pauseVersion),
    imagePullPolicy: 'Never',
    securityContext: cannotBecomeProxy(PAUSE_UID),
  };
}

/** A pod template: the app only; Istio's injector and meshgate add the rest in opted-in namespaces. */
export function podTemplate(c: RealCluster, app: string) {
  return { metadata: { labels: { app } }, spec: { containers: [appContainer(c)], terminationGracePeriodSeconds: 2 } };
}

export async function createDeployment(
  c: RealCluster,
  namespace: string,
  name: string,
  replicas: number,
): Promise<void> {
  await apps(c).createNamespacedDeployment({
    namespace,
    body: {
      metadata: { name },
      spec: { replicas, selector: { matchLabels: { app: name } }, template: podTemplate(c, name) },
    } as never,
  });
}

export async function scale(c: RealCluster, namespace: string, name: string, replicas: number): Promise<void> {
  await apps(c).patchNamespacedDeploymentScale({ namespace, name, body: { spec: { replicas } } }, merge);
}

/** Creates a pod and returns undefined, or the apiserver's refusal (the admission message a person sees). */
export async function refusal(c: RealCluster, namespace: string, body: V1Pod): Promise<string | undefined> {
  try {
    await core(c).createNamespacedPod({ namespace, body });
    return undefined;
  } catch (err) {
    const text = describeError(err);
    try {
      return (JSON.parse(text.replace(/^HTTP \d+: /, '')) as { message?: string }).message ?? text;
    } catch {
      return text;
    }
  }
}

/** `n` replicas of app=`name` exist (not terminating), all with their app running, every one judged redirected. */
export function workloadRight(m: PodMonitor, namespace: string, name: string, n: number): boolean {
  // A pod the kubelet rejected (phase Failed, e.g. NodeAffinity after the node's label changed) is not counted by
  // its ReplicaSet either, which replaces it; its Event stays visible.
  const pods = m
    .current(namespace)
    .filter((p) => p.metadata?.labels?.app === name && !p.metadata?.deletionTimestamp && p.status?.phase !== 'Failed');
  if (pods.length !== n) return false;
  return pods.every((p) => appRunning(p) && redirected(m.pods.get(p.metadata!.uid!)?.redirection));
}

/** Polls `right` until true (returns ms since `since`) or the deadline (undefined). */
export async function waitRight(
  since: number,
  deadlineMs: number,
  right: () => boolean | Promise<boolean>,
): Promise<number | undefined> {
  for (;;) {
    if (await right()) return Date.now() - since;
    if (Date.now() - since > deadlineMs) return undefined;
    await sleep(300);
  }
}

/**
 * Events of the namespace (and of `nodes`) since `since`, as "Kind Reason ×n: first message" lines, newest kinds
 * of trouble only: the routine ones (Scheduled, Pulled, Created, Started, SuccessfulCreate, ScalingReplicaSet,
 * Killing, MissingClusterDNS: the test kubelets have no cluster DNS) are left out.
 */
export async function visibleEvents(
  c: RealCluster,
  namespace: string,
  since: number,
  nodes: string[] = [],
): Promise<string[]> {
  const routine = new Set([
    'Scheduled',
    'Pulled',
    'Created',
    'Started',
    'SuccessfulCreate',
    'SuccessfulDelete',
    'ScalingReplicaSet',
    'Killing',
    'MissingClusterDNS',
    'SandboxChanged',
  ]);
  const lists = [await core(c).listNamespacedEvent({ namespace })];
  // Node events may be recorded in any namespace (the kubelet uses default): look everywhere.
  for (const node of nodes)
    lists.push(
      await core(c).listEventForAllNamespaces({
        fieldSelector: `involvedObject.kind=Node,involvedObject.name=${node}`,
      }),
    );
  const groups = new Map<string, { n: number; message: string }>();
  for (const e of lists.flatMap((l) => l.items)) {
    const at = new Date(e.lastTimestamp ?? e.eventTime ?? e.metadata?.creationTimestamp ?? 0).getTime();
    if (at < since - 1000 || routine.has(e.reason ?? '')) continue;
    if (e.involvedObject.kind === 'Node' && !nodes.includes(e.involvedObject.name ?? '')) continue;
    const key = `${e.involvedObject.kind} ${e.reason}`;
    const g = groups.get(key) ?? { n: 0, message: e.message ?? '' };
    g.n += e.count ?? 1;
    groups.set(key, g);
  }
  return [...groups].map(([k, g]) => `Event ${k} ×${g.n}: ${oneLine(g.message)}`);
}

/** The node's MeshCNIVerified condition as a person reads it with kubectl describe node. */
export async function nodeCondition(c: RealCluster, node: string): Promise<string> {
  const n = await core(c).readNode({ name: node });
  const cond = n.status?.conditions?.find((x) => x.type === CONDITION_TYPE);
  return cond
    ? `Node ${node} ${CONDITION_TYPE}=${cond.status} (${cond.reason}): ${oneLine(cond.message ?? '')}`
    : `Node ${node}: no ${CONDITION_TYPE} condition`;
}

export const oneLine = (s: string, max = 240) => {
  const t = s.replace(/\s+/g, ' ').trim();
  return t.length > max ? `${t.slice(0, max - 1)}…` : t;
};

/**
 * Deletes a scenario's namespace. Resolves `terminating` once every pod in it is marked for deletion (so the
 * repair controller, which leaves terminating pods alone, cannot act on them in the next scenario), and `gone` when
 * the kubelets have removed them (60 s at most each).
 */
export function removeNamespace(
  c: RealCluster,
  namespace: string,
): { terminating: Promise<void>; gone: Promise<void> } {
  const deleted = core(c)
    .deleteNamespace({ name: namespace })
    .catch(() => undefined);
  const until = async (done: (pods: V1Pod[]) => boolean) => {
    await deleted;
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      const pods = await core(c)
        .listNamespacedPod({ namespace })
        .then(
          (l) => l.items,
          () => [],
        );
      if (done(pods)) return;
      await sleep(200);
    }
  };
  const terminating = until((pods) => pods.every((p) => p.metadata?.deletionTimestamp));
  return { terminating, gone: terminating.then(() => until((pods) => pods.length === 0)) };
}

/**
 * Both nodes back to the start: rn-1 bridge+portmap+istio-cni, rn-2 bridge+portmap, no other file in either conf
 * dir, every agent reading its own node's dir, both verdicts published again, and a repair controller that
 * remembers nothing. A node the repair controller withdrew (its quarantine mark) is handed back as an operator
 * would: removing the mark (and its flap history, so scenarios do not add up), then its agent publishes afresh.
 */
export async function resetNodes(ctx: ScenarioContext): Promise<void> {
  // The ambient line: istio-cni's agent and ztunnel back up if a scenario killed them (A4) or a reboot did (A3).
  await ctx.mesh.ambient?.ensureUp();
  for (const n of ctx.cluster.nodes) {
    for (const f of readdirSync(n.cni.confDir))
      if (f !== CONFLIST_NAME) rmSync(join(n.cni.confDir, f), { force: true, recursive: true });
    n.writeConflist(n.standardChain(n.mesh));
    const annotations = (await core(ctx.cluster).readNode({ name: n.name })).metadata?.annotations ?? {};
    const marks = [QUARANTINE_ANNOTATION, QUARANTINE_HISTORY_ANNOTATION].filter((a) => a in annotations);
    if (marks.length)
      await core(ctx.cluster).patchNode(
        { name: n.name, body: { metadata: { annotations: Object.fromEntries(marks.map((a) => [a, null])) } } },
        merge,
      );
    await ctx.mesh.restartAgent(n, {}, marks.length > 0);
  }
  await ctx.mesh.restartRepair();
  for (const n of ctx.cluster.nodes) await ctx.mesh.waitVerdict(n.name, n.mesh);
}

/** A scenario's row before the runner adds its id, title and duration. */
export type ScenarioRow = Omit<ScenarioResult, 'id' | 'title' | 'durationMs'>;

/** What a scenario gathers while its namespace is watched: the monitor, and what failed and was seen so far. */
export interface Watch {
  m: PodMonitor;
  failures: string[];
  seen: string[];
}

/**
 * The frame of a scenario's run: namespace `ns` created with `labels`, its pods watched by a PodMonitor while `body`
 * runs (stopped after it, whatever happens). The row: the monitor's counts, what `body` found failing and saw, and
 * what it returns on top (rightMs; counts of its own where it judged more than the monitor did).
 */
export async function watchNamespace(
  ctx: ScenarioContext,
  ns: string,
  labels: Record<string, string>,
  body: (w: Watch) => Promise<Partial<ScenarioRow>>,
): Promise<ScenarioRow> {
  await ctx.mesh.namespace(ns, labels);
  const w: Watch = { m: new PodMonitor(ctx.cluster, [ns]), failures: [], seen: [] };
  w.m.start();
  try {
    const row = await body(w);
    return { ...counts(w.m), seen: w.seen, failures: w.failures, ...row };
  } finally {
    await w.m.stop();
  }
}

/**
 * The baseline of a scenario: Deployment web of `replicas` pods, right (each app running, redirected) within 60 s,
 * or a failure saying `what` did not start.
 */
export async function baseline(
  c: RealCluster,
  { m, failures }: Watch,
  ns: string,
  replicas: number,
  what = `${replicas} redirected replicas`,
): Promise<void> {
  await createDeployment(c, ns, 'web', replicas);
  if ((await waitRight(Date.now(), 60_000, () => workloadRight(m, ns, 'web', replicas))) === undefined)
    failures.push(`baseline: ${what} did not start`);
}

/** Counts for the result row from a monitor: created, ran, ran without redirection (or not judged). */
export function counts(m: PodMonitor): Pick<ScenarioResult, 'created' | 'running' | 'unredirected'> {
  return { created: m.all().length, running: m.ran().length, unredirected: m.unredirected().length };
}

/** One line per pod that ran without redirection, for the failure list. */
export function unredirectedDetail(m: PodMonitor): string[] {
  return m
    .unredirected()
    .map(
      (p) =>
        `pod ${p.namespace}/${p.name} on ${p.node} (mode ${p.mode ?? 'none'}) ran without redirection: ${p.judgeError ?? `rules=${p.redirection?.rules} dial=${p.redirection?.dial}`}`,
    );
}

/** Deletes a Deployment or DaemonSet and waits (60 s at most) until its pods are gone. */
export async function removeWorkload(
  c: RealCluster,
  namespace: string,
  kind: 'Deployment' | 'DaemonSet',
  name: string,
): Promise<void> {
  if (kind === 'Deployment')
    await apps(c)
      .deleteNamespacedDeployment({ namespace, name })
      .catch(() => undefined);
  else
    await apps(c)
      .deleteNamespacedDaemonSet({ namespace, name })
      .catch(() => undefined);
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const left = (await core(c).listNamespacedPod({ namespace, labelSelector: `app=${name}` })).items.length;
    if (left === 0) return;
    await sleep(300);
  }
}
