/**
 * `meshgate check` end to end: read the facts through the API (kube-reader.ts), judge them (judge-*.ts, pure), and
 * return the report in the catalogue's order. Read-only; the only connections besides the apiserver are TLS
 * handshakes with the webhook's endpoints (tls-probe.ts), which the caller chooses (`probe`).
 * At cluster scale (15,000 Nodes, 150,000 pods): every list is paged and reduced as it is read (a Node to its
 * summary, a pod to nothing unless flagged), lookups per flagged workload run a few at a time, `audit` reads only
 * what the audit report judges (no agent pods, certificates or workloads), and `onProgress` hears each object read.
 */
import type { Compiled } from '../config/compile.ts';
import { expectationsOf, NodeFactStore } from '../facts/node-facts.ts';
import { isReadError, type Read, type ServiceEndpoints, type TlsProbe } from './facts.ts';
import { judgeCaBundles, judgeCertificates } from './judge-certs.ts';
import { judgeNamespaces, judgeSelectorsAgree, optedInNamespaces } from './judge-namespaces.ts';
import {
  judgeAgentCoverage,
  judgeDaemonSet,
  judgeFreshness,
  judgePluginConsistency,
  judgeVerdicts,
  summarizeNode,
  type NodeSummary,
} from './judge-nodes.ts';
import { judgeEnforcement } from './judge-levels.ts';
import { POD_CHECKS, PodTally } from './judge-pods.ts';
import { listGuardedPods } from './list-pods.ts';
import { judgeRepairController } from './judge-repair.ts';
import {
  endpointsOf,
  entriesOf,
  judgeEndpoints,
  judgeFailurePolicy,
  judgePresence,
  type WebhookEndpoint,
} from './judge-webhook.ts';
import type { KubeReader } from './kube-reader.ts';
import { CHECK_CODES, result, type CheckResult, type InstalledNames, type Report } from './report.ts';

export interface CheckOptions {
  cfg: Compiled;
  names: InstalledNames;
  /** Where the config came from, for the report's header. */
  configSource: string;
  /** The plugin type of every mesh profile (a node whose chain runs another mesh's plugin means the wrong mesh). */
  meshPlugins: readonly string[];
  /** A TLS handshake with an endpoint, or undefined when it must not be dialled from here. */
  probe: (e: WebhookEndpoint) => Promise<TlsProbe> | undefined;
  now: () => number;
  /** The apiserver's version when the caller already asked (the CLI does, before reading the config). */
  server?: string;
  /** Only what the audit report (report.ts auditReport) judges: the namespaces, their pods and the Nodes. */
  audit?: boolean;
  /** Each Node and pod read, and each namespace listed (`of` namespaces in all): the CLI's progress line. */
  onProgress?: (p: CheckProgress) => void;
}

export interface CheckProgress {
  nodes: number;
  pods: number;
  namespaces: { done: number; of: number };
}

/** ReplicaSets looked up at once (one GET each, for the flagged pods' Deployments): a handful keeps P&F content. */
const LOOKUPS = 8;

type Reader = Omit<KubeReader, 'read'>;

export async function runCheck(reader: Reader, o: CheckOptions): Promise<Report> {
  const { names, cfg } = o;
  const ns = names.namespace;
  const server = o.server ?? (await reader.serverVersion());
  const [mutating, validating] = await Promise.all([
    reader.webhookConfig('mutating', names.webhookConfig),
    reader.webhookConfig('validating', names.webhookConfig),
  ]);
  const progress: CheckProgress = { nodes: 0, pods: 0, namespaces: { done: 0, of: 0 } };
  const tick = o.onProgress ? () => o.onProgress?.(progress) : () => undefined;
  const expect = expectationsOf(cfg.config.cni);
  const leases = await reader.nodeLeases(ns);
  const nodes: NodeSummary[] = [];
  const nodesError = await reader.nodes((n) => {
    const name = (n as { metadata?: { name?: string } }).metadata?.name ?? '';
    nodes.push(summarizeNode(n, expect, o.now(), isReadError(leases) ? undefined : leases.get(name)));
    progress.nodes++;
    tick();
  });
  const context = { mesh: cfg.config.mesh, names, configSource: o.configSource, server };
  if (o.audit) {
    const results = await judgeWorkloads(reader, o, mutating, validating, nodes, progress, tick);
    return { context: { ...context, checkedAt: new Date(o.now()).toISOString() }, results: sorted(results) };
  }
  const endpoints = endpointsOf([mutating, validating]);
  const services = new Map<string, Read<ServiceEndpoints>>();
  const probes = new Map<string, TlsProbe>();
  await Promise.all(
    endpoints.map(async (e) => {
      if (e.service) services.set(e.key, await reader.service(e.service.namespace, e.service.name, e.service.port));
      const p = await o.probe(e);
      if (p) probes.set(e.key, p);
    }),
  );
  const secret = await reader.secret(ns, names.tlsSecret);
  const results: CheckResult[] = [
    judgePresence('mutating', names.webhookConfig, mutating),
    judgePresence('validating', names.webhookConfig, validating),
    judgeFailurePolicy(mutating, validating),
    judgeEndpoints(endpoints, services, probes),
    judgeCaBundles({ mutating, validating, probes, secret, now: o.now() }),
    ...judgeCertificates({ mutating, validating, probes, secret, now: o.now() }),
  ];

  const ds = await reader.daemonSet(ns, names.nodeAgent);
  const agents = ds && !isReadError(ds) ? await reader.agentPods(ns, ds.selector) : [];
  results.push(judgeDaemonSet(ds, `${ns}/${names.nodeAgent}`));
  if (nodesError) {
    for (const code of [
      'node_agent_on_every_node',
      'node_verdict_fresh',
      'node_verified',
      'mesh_plugin_consistent',
    ] as const) {
      results.push(result(code, 'warn', `Nodes could not be listed: ${nodesError.error}`));
    }
  } else {
    results.push(
      judgeAgentCoverage(ds, agents, nodes),
      judgeFreshness(nodes, expect.maxVerdictAgeMs, isReadError(leases) ? leases.error : undefined),
      judgeVerdicts(nodes),
      judgePluginConsistency(nodes, expect.pluginType, o.meshPlugins),
    );
  }

  results.push(judgeAppPrivileges(cfg.config.apps));
  results.push(...(await judgeWorkloads(reader, o, mutating, validating, nodes, progress, tick)));
  results.push(
    judgeRepairController(await reader.deployment(ns, names.repairController), `${ns}/${names.repairController}`),
  );
  return { context: { ...context, checkedAt: new Date(o.now()).toISOString() }, results: sorted(results) };
}

/** In the catalogue's order. */
function sorted(results: CheckResult[]): CheckResult[] {
  const order = (code: string) => CHECK_CODES.indexOf(code as never);
  return results.sort((a, b) => order(a.code) - order(b.code));
}

/** `fn` over `items`, at most `n` at once, results in order. */
async function pool<T, R>(items: readonly T[], n: number, fn: (t: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, worker));
  return out;
}

async function judgeWorkloads(
  reader: Reader,
  o: CheckOptions,
  mutating: Awaited<ReturnType<Reader['webhookConfig']>>,
  validating: typeof mutating,
  nodes: NodeSummary[],
  progress: CheckProgress,
  tick: () => void,
): Promise<CheckResult[]> {
  const haveWebhooks = entriesOf([mutating, validating]).length > 0;
  const codes = ['namespaces_opted_in', 'enforcement_level', 'webhook_selectors_agree', ...POD_CHECKS] as const;
  if (!haveWebhooks) {
    const none = 'not checked: no webhooks, so no namespace is opted in';
    return codes.map((code) => ({ code, status: 'skip', message: none }));
  }
  const namespaces = await reader.namespaces();
  if (isReadError(namespaces)) {
    return codes.map((code) => result(code, 'warn', `Namespaces could not be listed: ${namespaces.error}`));
  }
  const opted = optedInNamespaces(namespaces, mutating, validating);
  const facts = new NodeFactStore();
  facts.replaceAll(nodes.map((n) => n.fact));
  facts.markSynced();
  const tally = new PodTally(opted, facts, o.cfg, new Map(namespaces.map((n) => [n.name, n.labels])));
  const guarded = opted.filter((x) => x.mutating.length);
  progress.namespaces.of = guarded.length;
  const errors = await listGuardedPods(
    reader,
    guarded,
    (p) => {
      tally.add(p);
      progress.pods++;
      tick();
    },
    {
      onNamespace: () => {
        progress.namespaces.done++;
        tick();
      },
    },
  );
  const rsOwners = new Map(
    await pool(
      tally.replicaSets(),
      LOOKUPS,
      async (rs) => [`${rs.namespace}/${rs.name}`, await reader.replicaSetOwner(rs.namespace, rs.name)] as const,
    ),
  );
  const podResults = tally.results(rsOwners, guarded.length > 0);
  if (errors.length) {
    for (const r of podResults)
      if (r.status === 'ok')
        Object.assign(r, { status: 'warn', message: `${r.message}; some pods could not be listed: ${errors[0]}` });
  }
  return [
    judgeNamespaces(opted, haveWebhooks),
    judgeEnforcement(opted, tally.wouldRefuse(), o.cfg.config.enforcement.default),
    judgeSelectorsAgree(opted, mutating, validating),
    ...podResults,
  ];
}

/** apps.privileges relaxed anywhere (docs/security.md): a warning naming where, so it is not forgotten. */
export function judgeAppPrivileges(apps: {
  readonly privileges: string;
  readonly restrictedNamespaces?: readonly string[];
  readonly baselineNamespaces: readonly string[];
}): CheckResult {
  if (apps.privileges === 'baseline')
    return result(
      'app_privileges',
      'warn',
      'apps.privileges is baseline: in every guarded namespace, containers that could become the proxy are admitted',
    );
  if (apps.baselineNamespaces.length)
    return result(
      'app_privileges',
      'warn',
      `apps.baselineNamespaces relaxes ${apps.baselineNamespaces.length} namespace(s) to baseline: ` +
        apps.baselineNamespaces.join(', '),
    );
  if (apps.privileges === 'restricted')
    return result('app_privileges', 'ok', 'apps.privileges is restricted in every guarded namespace');
  const restricted = apps.restrictedNamespaces ?? [];
  return result(
    'app_privileges',
    'ok',
    "apps.privileges is node: admission refuses what the spec states, the node side what only the node sees (an image's USER, capabilities, set-user-ID binaries)" +
      (restricted.length ? `; restricted at admission in ${restricted.join(', ')}` : ''),
  );
}
