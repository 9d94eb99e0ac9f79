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
import { judgeDaemonSet, summarizeNode } from './judge-nodes.ts';
import type { NodeSummary } from './node-tally.ts';
import { CoverageTally, FreshnessTally, PluginTally, VerdictTally } from './node-tally.ts';
import { WOULD_DENY_LABEL } from '../admission/level.ts';
import type { PodRecord } from './facts.ts';
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
import { AUDIT_CODES, CHECK_CODES, result, type CheckResult, type InstalledNames, type Report } from './report.ts';

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

/** What the check reads (the single-Node reads are explain's). */
type Reader = Omit<KubeReader, 'read' | 'node' | 'nodeLease'>;

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
  const context = { mesh: cfg.config.mesh, names, configSource: o.configSource, server };
  const read = { progress, tick };
  if (o.audit) {
    const results = await judgeWorkloads(reader, o, mutating, validating, read);
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

  // The agents first: each Node is then judged as it streams past, and only its fact is kept (for the pods).
  const ds = await reader.daemonSet(ns, names.nodeAgent);
  const agents = ds && !isReadError(ds) ? await reader.agentPods(ns, ds.selector) : [];
  results.push(judgeDaemonSet(ds, `${ns}/${names.nodeAgent}`));
  const expect = expectationsOf(cfg.config.cni);
  const leases = await reader.nodeLeases(ns);
  const coverage = new CoverageTally(ds, agents);
  const fresh = new FreshnessTally(expect.maxVerdictAgeMs);
  const verdicts = new VerdictTally();
  const plugins = new PluginTally(expect.pluginType, o.meshPlugins);
  const { facts, error: nodesError } = await readNodes(reader, o, leases, read, (s) => {
    for (const t of [coverage, fresh, verdicts, plugins]) t.add(s);
  });
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
      coverage.result(),
      fresh.result(isReadError(leases) ? leases.error : undefined),
      verdicts.result(),
      plugins.result(),
    );
  }

  results.push(judgeAppPrivileges(cfg.config.apps));
  results.push(...(await judgeWorkloads(reader, o, mutating, validating, read, facts)));
  results.push(
    judgeRepairController(await reader.deployment(ns, names.repairController), `${ns}/${names.repairController}`),
  );
  return { context: { ...context, checkedAt: new Date(o.now()).toISOString() }, results: sorted(results) };
}

interface Reading {
  progress: CheckProgress;
  tick: () => void;
}

/**
 * Every Node, a page at a time and one at a time (raw-list.ts): each summarised (judge-nodes.ts), handed to
 * `each`, and dropped; only its fact is kept, for the pods' posture (the webhook's node cache keeps the same).
 */
async function readNodes(
  reader: Reader,
  o: CheckOptions,
  leases: Awaited<ReturnType<Reader['nodeLeases']>>,
  { progress, tick }: Reading,
  each: (s: NodeSummary) => void = () => undefined,
): Promise<{ facts: NodeFactStore; error?: { error: string } }> {
  const expect = expectationsOf(o.cfg.config.cni);
  const facts = new NodeFactStore();
  const error = await reader.nodes((n) => {
    const name = (n as { metadata?: { name?: string } }).metadata?.name ?? '';
    const s = summarizeNode(n, expect, o.now(), isReadError(leases) ? undefined : leases.get(name));
    facts.upsert(s.fact);
    each(s);
    progress.nodes++;
    tick();
  });
  facts.markSynced();
  return { facts, ...(error ? { error } : {}) };
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

/**
 * The namespaces and their pods. `facts`: the Nodes' facts, read already by the full check; `check --audit` reads
 * them here only if a guarded namespace is below enforce (the only pods whose posture it judges), and in namespaces
 * at enforce lists only the pods with a recorded refusal (meshgate.io/would-deny, filtered by the apiserver): those
 * are all the audit report can list there.
 */
async function judgeWorkloads(
  reader: Reader,
  o: CheckOptions,
  mutating: Awaited<ReturnType<Reader['webhookConfig']>>,
  validating: typeof mutating,
  read: Reading,
  facts?: NodeFactStore,
): Promise<CheckResult[]> {
  const haveWebhooks = entriesOf([mutating, validating]).length > 0;
  const all = ['namespaces_opted_in', 'enforcement_level', 'webhook_selectors_agree', ...POD_CHECKS] as const;
  const codes = o.audit ? all.filter((c) => AUDIT_CODES.includes(c)) : all;
  if (!haveWebhooks) {
    const none = 'not checked: no webhooks, so no namespace is opted in';
    return codes.map((code) => ({ code, status: 'skip', message: none }));
  }
  const namespaces = await reader.namespaces();
  if (isReadError(namespaces)) {
    return codes.map((code) => result(code, 'warn', `Namespaces could not be listed: ${namespaces.error}`));
  }
  const opted = optedInNamespaces(namespaces, mutating, validating);
  const guarded = opted.filter((x) => x.mutating.length);
  const below = guarded.filter((x) => x.level !== 'enforce');
  const nodes =
    facts ??
    (below.length
      ? (await readNodes(reader, o, await reader.nodeLeases(o.names.namespace), read)).facts
      : new NodeFactStore());
  const labels = new Map(namespaces.map((n) => [n.name, n.labels]));
  const tally = new PodTally(opted, nodes, o.cfg, labels, o.audit ? ['pods_would_be_refused'] : POD_CHECKS);
  const { progress, tick } = read;
  progress.namespaces.of = guarded.length;
  const each = (p: PodRecord) => {
    tally.add(p);
    progress.pods++;
    tick();
  };
  const onNamespace = () => {
    progress.namespaces.done++;
    tick();
  };
  const errors = o.audit
    ? [
        ...(await listGuardedPods(reader, below, each, { onNamespace })),
        ...(await listGuardedPods(
          reader,
          guarded.filter((x) => x.level === 'enforce'),
          each,
          { onNamespace, also: WOULD_DENY_LABEL },
        )),
      ]
    : await listGuardedPods(reader, guarded, each, { onNamespace });
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
  const out = [
    judgeNamespaces(opted, haveWebhooks),
    judgeEnforcement(opted, tally.wouldRefuse(), o.cfg.config.enforcement.default),
    judgeSelectorsAgree(opted, mutating, validating),
    ...podResults,
  ];
  return out.filter((r) => (codes as readonly string[]).includes(r.code));
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
