/**
 * `meshgate explain KIND/NAME… [-n NS]` on the live cluster (issue 23 §4): reads each workload (pod, deployment,
 * statefulset, daemonset, replicaset, job, cronjob), the Nodes' published verdicts, the namespace's enforcement level
 * and what the mesh's own ConfigMaps say it injects (config.learnImages), and judges each pod (template) with the
 * same core as the webhook — after a simulation of the mesh's own injector from those ConfigMaps when the template
 * has no proxy yet (explain-judge.ts). Read-only. The outcome per object is what meshgate would do at that namespace's level:
 * admitted as is, adjusted (a patch), admitted with a record (a refusal below enforce) or refused.
 */
import { configForNamespace } from '../config/per-namespace.ts';
import { istioOpenShiftProxyIds } from '../mesh/istio-openshift.ts';
import { AdmissionregistrationV1Api, CoreV1Api, type KubeConfig, KubernetesObjectApi } from '@kubernetes/client-node';
import { installedConfigMaps, isInstalled, webhookConfigView } from '../mesh/installed.ts';
import { stringify as toYaml } from 'yaml';
import type { Compiled } from '../config/compile.ts';
import { type LearnedAmbient, withLearned } from '../config/learned.ts';
import { ENFORCEMENT_LABEL } from '../contract/names.ts';
import { reasonText } from '../contract/reasons.ts';
import { expectationsOf, factFromNode, NodeFactStore, supportsNativeSidecars } from '../facts/node-facts.ts';
import type { Decision } from '../policy/mutate/decide.ts';
import { podTemplates } from '../manifests/workloads.ts';
import type { LearnedImages } from '../mesh/learn.ts';
import { ENFORCEMENT_LEVELS, type EnforcementLevel } from '../config/types.ts';
import { UsageError } from '../util/args.ts';
import { ambientFromConfigMap, type ConfigMap, combineLearned, learnFromConfigMap } from '../kube/learned-images.ts';
import { explainTemplate, type Simulation, simulationContext } from './explain-judge.ts';
import { injectorsOf } from './explain-simulate.ts';
import { KubeReader } from '../check/kube-reader.ts';

/** `kubectl`'s names and short names of the kinds with a pod template, to their API version and kind. */
const KINDS: Readonly<Record<string, { apiVersion: string; kind: string }>> = Object.fromEntries(
  (
    [
      [['pod', 'pods', 'po'], 'v1', 'Pod'],
      [['deployment', 'deployments', 'deploy'], 'apps/v1', 'Deployment'],
      [['statefulset', 'statefulsets', 'sts'], 'apps/v1', 'StatefulSet'],
      [['daemonset', 'daemonsets', 'ds'], 'apps/v1', 'DaemonSet'],
      [['replicaset', 'replicasets', 'rs'], 'apps/v1', 'ReplicaSet'],
      [['job', 'jobs'], 'batch/v1', 'Job'],
      [['cronjob', 'cronjobs', 'cj'], 'batch/v1', 'CronJob'],
    ] as const
  ).flatMap(([names, apiVersion, kind]) => names.map((n) => [n, { apiVersion, kind }])),
);

export type Outcome = 'admitted' | 'adjusted' | 'admitted-with-record' | 'refused';

/** Exit codes: the most consequential outcome of all objects. */
export const OUTCOME_EXIT: Readonly<Record<Outcome, number>> = {
  admitted: 0,
  adjusted: 3,
  'admitted-with-record': 4,
  refused: 5,
};

export interface Explained {
  object: string;
  namespace: string;
  level: EnforcementLevel;
  outcome: Outcome;
  decision: { kind: Decision['kind']; reason: string; text: string; message?: string; changes?: string[] };
  /** Whether the mesh's injector was simulated first, by what, and what the simulation may differ in. */
  simulation?: Simulation;
  lines: string[];
}

/** Parses `KIND/NAME` as kubectl does; a usage error names what is wrong. */
export function parseRef(arg: string): { apiVersion: string; kind: string; name: string } {
  const slash = arg.indexOf('/');
  if (slash <= 0 || slash === arg.length - 1)
    throw new UsageError(`"${arg}" is not KIND/NAME (e.g. deploy/web, pod/web-1)`);
  const k = KINDS[arg.slice(0, slash).toLowerCase()];
  if (!k)
    throw new UsageError(
      `"${arg.slice(0, slash)}" is not a kind with pods (one of pod, deploy, sts, ds, rs, job, cronjob)`,
    );
  return { ...k, name: arg.slice(slash + 1) };
}

/** What meshgate would do at the namespace's level with a decision. */
export function outcomeOf(d: Decision, level: EnforcementLevel): Outcome {
  if (d.kind === 'deny') return level === 'enforce' ? 'refused' : 'admitted-with-record';
  return d.kind === 'patch' ? 'adjusted' : 'admitted';
}

function levelOf(labels: Record<string, string> | undefined, cfg: Compiled): EnforcementLevel {
  const l = labels?.[ENFORCEMENT_LABEL] as EnforcementLevel | undefined;
  return l && ENFORCEMENT_LEVELS.includes(l) ? l : cfg.config.enforcement.default;
}

/** The compiled configuration with what these ConfigMaps of the mesh name, as the webhook would learn it. */
export function withLearnedConfigMaps(cfg: Compiled, cms: readonly ConfigMap[]): Compiled {
  const all: LearnedImages[] = [];
  const ambient: LearnedAmbient[] = [];
  for (const cm of cms) {
    // A ConfigMap that says nothing usable is left out, as the webhook leaves it out.
    const l = learnFromConfigMap(cfg.profile, cm);
    if (l && !('problem' in l)) all.push(l);
    const a = cfg.config.ambient.enabled ? ambientFromConfigMap(cm) : undefined;
    if (a && !('problem' in a)) ambient.push(a);
  }
  return withLearned(cfg, combineLearned(all, ambient));
}

/**
 * Every Node's fact, read a page at a time and reduced as it comes (15,000 Nodes whole would be hundreds of MB), aged
 * by the agents' Leases in meshgate's namespace as the webhook ages them.
 */
async function nodeFacts(reader: KubeReader, cfg: Compiled): Promise<NodeFactStore> {
  const nodes = new NodeFactStore();
  const expect = expectationsOf(cfg.config.cni);
  const leases = await reader.nodeLeases(cfg.config.meshNamespace);
  const now = Date.now();
  const err = await reader.nodes((n) => {
    const name = (n as { metadata?: { name?: string } }).metadata?.name ?? '';
    nodes.upsert(factFromNode(n, expect, now, leases instanceof Map ? leases.get(name) : undefined));
  });
  if (err) throw new Error(`Nodes could not be listed: ${err.error}`);
  nodes.markSynced();
  return nodes;
}

/**
 * The ConfigMaps of config.learnImages' namespaces that an installed injector reads (src/mesh/installed.ts), as the
 * webhook learns them: what explain judges and simulates with. Where the MutatingWebhookConfigurations cannot be
 * listed, none is trusted, as in the webhook.
 */
async function meshConfigMaps(kc: KubeConfig, core: CoreV1Api, cfg: Compiled): Promise<ConfigMap[]> {
  const webhooks = await kc
    .makeApiClient(AdmissionregistrationV1Api)
    .listMutatingWebhookConfiguration()
    .catch(() => undefined);
  if (!webhooks) return [];
  const installed = installedConfigMaps(
    cfg.config.mesh,
    webhooks.items.flatMap((w) => webhookConfigView(JSON.parse(JSON.stringify(w))) ?? []),
  );
  const out: ConfigMap[] = [];
  for (const namespace of cfg.config.learnImages?.namespaces ?? []) {
    const list = await core.listNamespacedConfigMap({ namespace }).catch(() => undefined);
    for (const cm of (list?.items ?? []) as ConfigMap[])
      if (isInstalled(installed, namespace, cm.metadata?.name ?? '')) out.push(cm);
  }
  return out;
}

export async function explainLive(
  kc: KubeConfig,
  base: Compiled,
  args: readonly string[],
  namespace: string,
): Promise<Explained[]> {
  const refs = args.map(parseRef);
  const core = kc.makeApiClient(CoreV1Api);
  const objects = KubernetesObjectApi.makeApiClient(kc);
  const cms = await meshConfigMaps(kc, core, base);
  const reads = base.profile.learnFrom || base.config.ambient.enabled;
  const cfg = reads ? withLearnedConfigMaps(base, cms) : base;
  const injectors = injectorsOf(cms);
  const nodes = await nodeFacts(new KubeReader(kc), cfg);
  const ns = await core.readNamespace({ name: namespace });
  const level = levelOf(ns.metadata?.labels, cfg);
  const nsMeta = { labels: ns.metadata?.labels ?? {}, annotations: ns.metadata?.annotations ?? {} };
  // Istio on OpenShift: the namespace's proxy IDs, as the webhook reads them from its namespace cache.
  const here = configForNamespace(cfg, namespace, () => istioOpenShiftProxyIds(ns.metadata?.annotations));
  const nsCfg = here.ok ? here.cfg : cfg;
  const out: Explained[] = [];
  for (const r of refs) {
    const obj = await objects.read({ apiVersion: r.apiVersion, kind: r.kind, metadata: { name: r.name, namespace } });
    // The object as the API serves it, as JSON (the client's model classes hold Dates where JSON has strings).
    const doc = JSON.parse(JSON.stringify(obj)) as Record<string, unknown>;
    for (const t of podTemplates(doc)) {
      const ref = { ...t, namespace };
      const node = (ref.template.spec as { nodeName?: string } | undefined)?.nodeName;
      // istiod's ENABLE_NATIVE_SIDECARS=auto: the pod's node when it has one, else every node (none: assumed).
      const native = node
        ? supportsNativeSidecars(nodes.get(node)?.kubeletVersion)
        : (nodes.nativeSidecars('all') ?? true);
      const j = explainTemplate(
        ref,
        `${r.kind} ${namespace}/${r.name}`,
        nodes,
        nsCfg,
        injectors,
        simulationContext(ref, namespace, native, nsMeta),
        undefined,
        // At audit meshgate holds no pod (src/policy/redirect.ts): explain answers as that level's webhook would.
        { hold: level !== 'audit' },
      );
      const d = j.decision;
      out.push({
        object: `${r.kind.toLowerCase()}/${r.name}`,
        namespace,
        level,
        outcome: outcomeOf(d, level),
        decision: {
          kind: d.kind,
          reason: d.reason,
          text: reasonText(d.reason),
          ...(d.kind === 'deny' ? { message: d.message } : {}),
          ...(j.changes ? { changes: j.changes } : {}),
        },
        ...(j.simulation ? { simulation: j.simulation } : {}),
        lines: j.lines,
      });
    }
  }
  return out;
}

export function renderExplained(e: readonly Explained[], output: string): string {
  if (output === 'json') return `${JSON.stringify({ results: e.map(({ lines, ...r }) => r) }, null, 2)}\n`;
  if (output === 'yaml') return toYaml({ results: e.map(({ lines, ...r }) => r) });
  return e
    .map(
      (r) =>
        `${r.object} (namespace ${r.namespace}, level ${r.level}): ${r.outcome.toUpperCase()}\n` +
        r.lines.map((l) => `  ${l}\n`).join(''),
    )
    .join('');
}
