/**
 * `meshgate check --pre`: before installing, with read-only credentials, what installing meshgate with this
 * configuration would meet — the Kubernetes version and features it needs, the mesh's control plane (versions,
 * revisions, the images it injects against config.recognisedImages), the nodes' container runtimes and libcni lines,
 * the namespaces the chart's entries would guard and at which level, and the existing pods there that would be
 * refused or adjusted when recreated, by reason. Reads (kube-reader.ts, mesh-reader.ts), then pure judges.
 */
import type { Compiled } from '../config/compile.ts';
import { expectationsOf, NodeFactStore } from '../facts/node-facts.ts';
import { isReadError, type WebhookConfig } from './facts.ts';
import {
  judgeFeatures,
  judgeGuarded,
  judgeKubeVersion,
  judgeMesh,
  judgeRuntimes,
  type NodeInfo,
} from './judge-preflight.ts';
import { optedInNamespaces } from './judge-namespaces.ts';
import { summarizeNode } from './judge-nodes.ts';
import type { NodeSummary } from './node-tally.ts';
import type { KubeReader } from './kube-reader.ts';
import { listGuardedPods } from './list-pods.ts';
import type { MeshReader } from './mesh-reader.ts';
import { PreflightTally } from './preflight-pods.ts';
import { chartEntries } from './profile-entries.ts';
import { CHECK_CODES, result, type CheckResult, type InstalledNames, type Report } from './report.ts';

export interface PreflightOptions {
  cfg: Compiled;
  names: InstalledNames;
  configSource: string;
  now: () => number;
  server?: string;
}

type Reader = Pick<KubeReader, 'serverVersion' | 'nodes' | 'namespaces' | 'pods' | 'replicaSetOwner'>;
type Mesh = Pick<MeshReader, 'admissionResources' | 'survey'>;

export async function runPreflight(reader: Reader, mesh: Mesh, o: PreflightOptions): Promise<Report> {
  const { cfg } = o;
  const server = o.server ?? (await reader.serverVersion());
  const expect = expectationsOf(cfg.config.cni);
  const infos: NodeInfo[] = [];
  const summaries: NodeSummary[] = [];
  const nodesError = await reader.nodes((n) => {
    const info = n.status?.nodeInfo;
    infos.push({
      name: n.metadata?.name ?? '',
      kubeletVersion: info?.kubeletVersion ?? '',
      containerRuntimeVersion: info?.containerRuntimeVersion ?? '',
    });
    summaries.push(summarizeNode(n, expect, o.now()));
  });
  const [admission, survey] = await Promise.all([mesh.admissionResources(), mesh.survey()]);
  const results: CheckResult[] = [
    judgeKubeVersion(server),
    judgeFeatures(server, admission, infos),
    judgeMesh(cfg, survey),
    judgeRuntimes(nodesError ?? infos),
    ...(await judgePods(reader, o, summaries)),
  ];
  const order = (code: string) => CHECK_CODES.indexOf(code as never);
  results.sort((a, b) => order(a.code) - order(b.code));
  return {
    context: {
      mesh: cfg.config.mesh,
      names: o.names,
      configSource: o.configSource,
      view: 'preflight',
      server,
      checkedAt: new Date(o.now()).toISOString(),
    },
    results,
  };
}

async function judgePods(reader: Reader, o: PreflightOptions, nodes: NodeSummary[]): Promise<CheckResult[]> {
  const namespaces = await reader.namespaces();
  if (isReadError(namespaces))
    return (['namespaces_guarded', 'pods_would_refuse', 'pods_would_adjust'] as const).map((code) =>
      result(code, 'warn', `Namespaces could not be listed: ${namespaces.error}`),
    );
  const entries: WebhookConfig = {
    kind: 'mutating',
    name: o.names.webhookConfig,
    webhooks: chartEntries(o.cfg.config, o.names.webhookConfig),
  };
  const opted = optedInNamespaces(namespaces, entries, { ...entries, kind: 'validating' });
  const facts = new NodeFactStore();
  facts.replaceAll(nodes.map((n) => n.fact));
  facts.markSynced();
  const tally = new PreflightTally(opted, facts, o.cfg);
  const errors = await listGuardedPods(reader, opted, (p) => void tally.add(p));
  const rsOwners = new Map(
    await Promise.all(
      tally
        .replicaSets()
        .map(
          async (rs) => [`${rs.namespace}/${rs.name}`, await reader.replicaSetOwner(rs.namespace, rs.name)] as const,
        ),
    ),
  );
  const pods = tally.results(rsOwners);
  if (errors.length)
    for (const r of pods)
      if (r.status === 'ok')
        Object.assign(r, { status: 'warn', message: `${r.message}; some pods could not be listed: ${errors[0]}` });
  return [judgeGuarded(opted, o.cfg.config.enforcement.default), ...pods];
}
