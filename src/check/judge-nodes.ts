/**
 * Judges the node side: the node agent DaemonSet and a ready agent pod on every Node, then each Node's verdict as
 * the webhook reads it (facts/node-facts.ts factFromNode: condition, evidence for the configured plugin, fresh
 * heartbeat), and whether the chains the agents saw belong to the mesh meshgate is configured for. Pure; Nodes
 * are reduced to a `NodeSummary` as they are read, so thousands of Nodes cost a few hundred bytes each.
 */
import { EVIDENCE_ANNOTATION, verdictCondition, type VerdictNode } from '../contract/node.ts';
import { factFromNode, laterBeat, type NodeExpectations, type NodeFact } from '../facts/node-facts.ts';
import { isReadError, type AgentPod, type Read, type WorkloadStatus } from './facts.ts';
import { result, type CheckResult, type Item } from './report.ts';

export interface NodeSummary {
  name: string;
  /** The verdict as the webhook judges it. */
  fact: NodeFact;
  /**
   * Age of the agent's heartbeat (the later of the MeshCNIVerified condition's and its Lease's, src/contract/node.ts);
   * undefined when there is neither.
   */
  heartbeatAgeMs?: number;
  hasCondition: boolean;
  /** From the evidence annotation: the plugin the agent checked for, and the chain it found. */
  checkedPlugin?: string;
  chain?: string[];
}

/** @param leaseAt when the node's agent last renewed its Lease (ms), if it keeps one */
export function summarizeNode(node: VerdictNode, expect: NodeExpectations, now: number, leaseAt?: number): NodeSummary {
  const { condition, heartbeatAt: conditionAt } = verdictCondition(node);
  const heartbeatAt = condition ? laterBeat(conditionAt, leaseAt) : undefined;
  const summary: NodeSummary = {
    name: node.metadata?.name ?? '',
    fact: factFromNode(node, expect, now, leaseAt),
    hasCondition: condition !== undefined,
  };
  if (heartbeatAt !== undefined) summary.heartbeatAgeMs = now - heartbeatAt;
  try {
    const ev = JSON.parse(node.metadata?.annotations?.[EVIDENCE_ANNOTATION] ?? '') as {
      pluginType?: unknown;
      plugins?: unknown;
    };
    if (typeof ev?.pluginType === 'string') summary.checkedPlugin = ev.pluginType;
    if (Array.isArray(ev?.plugins)) summary.chain = ev.plugins.filter((p): p is string => typeof p === 'string');
  } catch {
    // No readable evidence: factFromNode already says evidence_missing for a verified condition.
  }
  return summary;
}

export function judgeDaemonSet(ds: Read<WorkloadStatus>, name: string): CheckResult {
  if (ds === undefined)
    return result('node_agent_ready', 'fail', `DaemonSet ${name} does not exist: no node is ever verified`);
  if (isReadError(ds)) return result('node_agent_ready', 'warn', `DaemonSet ${name} could not be read: ${ds.error}`);
  const what = `DaemonSet ${ds.namespace}/${ds.name}`;
  if (ds.desired === 0)
    return result('node_agent_ready', 'fail', `${what} schedules no pod (nodeSelector matches no node?)`);
  if (ds.ready < ds.desired)
    return result('node_agent_ready', 'fail', `${what}: ${ds.ready} of ${ds.desired} pods ready`);
  if (ds.updated < ds.desired)
    return result(
      'node_agent_ready',
      'warn',
      `${what}: all ${ds.desired} pods ready, ${ds.updated} updated (a rollout is in progress)`,
    );
  return result('node_agent_ready', 'ok', `${what}: ${ds.ready} of ${ds.desired} pods ready and up to date`);
}

export function judgeAgentCoverage(
  ds: Read<WorkloadStatus>,
  pods: AgentPod[] | { error: string },
  nodes: readonly NodeSummary[],
): CheckResult {
  if (ds === undefined || isReadError(ds))
    return { code: 'node_agent_on_every_node', status: 'skip', message: 'not checked: no node agent DaemonSet' };
  if (isReadError(pods))
    return result('node_agent_on_every_node', 'warn', `the node agent's pods could not be listed: ${pods.error}`);
  const byNode = new Map<string, AgentPod>();
  for (const p of pods) if (p.node && (!byNode.has(p.node) || p.ready)) byNode.set(p.node, p);
  const items: Item[] = [];
  for (const n of nodes) {
    const p = byNode.get(n.name);
    if (!p)
      items.push({ name: n.name, status: 'fail', message: 'runs no node agent pod: its verdict is never refreshed' });
    else if (!p.ready)
      items.push({
        name: n.name,
        status: 'fail',
        message: `node agent pod ${p.name} is not ready (${p.phase ?? 'unknown phase'})`,
      });
  }
  if (items.length)
    return result(
      'node_agent_on_every_node',
      'fail',
      `${items.length} of ${nodes.length} nodes have no ready node agent`,
      items,
    );
  return result('node_agent_on_every_node', 'ok', `a ready node agent runs on each of the ${nodes.length} nodes`);
}

const minutes = (ms: number) => `${Math.round(ms / 60_000)} min`;

/** @param leasesError why the agents' Leases could not be read: stale findings are then warnings, not failures */
export function judgeFreshness(nodes: readonly NodeSummary[], maxAgeMs: number, leasesError?: string): CheckResult {
  const published = nodes.filter((n) => n.hasCondition);
  if (published.length === 0)
    return { code: 'node_verdict_fresh', status: 'skip', message: 'not checked: no node has published a verdict' };
  const items: Item[] = [];
  const bound = `(bound: cni.maxVerdictAgeSeconds = ${minutes(maxAgeMs)})`;
  for (const n of published) {
    if (n.heartbeatAgeMs === undefined)
      items.push({ name: n.name, status: 'fail', reason: 'stale_verdict', message: 'the verdict has no heartbeat' });
    else if (n.heartbeatAgeMs > maxAgeMs) {
      items.push({
        name: n.name,
        status: 'fail',
        reason: 'stale_verdict',
        message: `last heartbeat ${minutes(n.heartbeatAgeMs)} ago ${bound}`,
      });
    }
  }
  if (items.length && leasesError) {
    const why = `the node agents' Leases could not be read (${leasesError}): heartbeats on the condition alone`;
    const warned = items.map((i) => ({ ...i, status: 'warn' as const }));
    return result(
      'node_verdict_fresh',
      'warn',
      `${items.length} of ${published.length} verdicts look stale; ${why}`,
      warned,
    );
  }
  if (items.length)
    return result('node_verdict_fresh', 'fail', `${items.length} of ${published.length} verdicts are stale`, items);
  return result(
    'node_verdict_fresh',
    'ok',
    `all ${published.length} verdicts re-confirmed within ${minutes(maxAgeMs)}`,
  );
}

export function judgeVerdicts(nodes: readonly NodeSummary[]): CheckResult {
  if (nodes.length === 0) return result('node_verified', 'warn', 'the cluster has no Nodes');
  const items: Item[] = nodes
    .filter((n) => !n.fact.verified)
    .map((n) => ({ name: n.name, status: 'fail', reason: n.fact.reason, message: n.fact.message }));
  const verified = nodes.length - items.length;
  if (items.length) {
    const none = verified === 0 ? ': no pod can use CNI mode' : '';
    return result('node_verified', 'fail', `${verified} of ${nodes.length} nodes verified${none}`, items);
  }
  return result('node_verified', 'ok', `all ${nodes.length} nodes verified`);
}

/**
 * @param pluginType  the plugin meshgate is configured for (cni.pluginType)
 * @param meshPlugins the plugin types of every mesh profile: a chain running another one means the wrong mesh
 */
export function judgePluginConsistency(
  nodes: readonly NodeSummary[],
  pluginType: string,
  meshPlugins: readonly string[],
): CheckResult {
  const withEvidence = nodes.filter((n) => n.checkedPlugin !== undefined);
  if (withEvidence.length === 0)
    return { code: 'mesh_plugin_consistent', status: 'skip', message: 'not checked: no node has published evidence' };
  const others = meshPlugins.filter((p) => p && p !== pluginType);
  const items: Item[] = [];
  for (const n of withEvidence) {
    if (n.checkedPlugin !== pluginType) {
      items.push({
        name: n.name,
        status: 'fail',
        reason: 'plugin_mismatch',
        message: `its node agent checks for ${n.checkedPlugin}, meshgate is configured for ${pluginType}`,
      });
      continue;
    }
    const foreign = (n.chain ?? []).filter((p) => others.includes(p));
    if (foreign.length && !(n.chain ?? []).includes(pluginType)) {
      items.push({
        name: n.name,
        status: 'fail',
        reason: 'other_mesh_plugin',
        message:
          `its CNI chain runs ${foreign.join(', ')}, not ${pluginType}: ` +
          'is meshgate configured for the right mesh?',
      });
    }
  }
  if (items.length)
    return result(
      'mesh_plugin_consistent',
      'fail',
      `${items.length} of ${withEvidence.length} nodes disagree with mesh CNI plugin ${pluginType}`,
      items,
    );
  return result(
    'mesh_plugin_consistent',
    'ok',
    `every node agent checks for ${pluginType}, the configured mesh CNI plugin`,
  );
}
