/**
 * Judges the node side: the node agent DaemonSet and a ready agent pod on every Node, then each Node's verdict as
 * the webhook reads it (facts/node-facts.ts factFromNode: condition, evidence for the configured plugin, fresh
 * heartbeat), and whether the chains the agents saw belong to the mesh meshgate is configured for. Pure; each Node
 * is reduced to a `NodeSummary` as it is read and judged by the tallies of node-tally.ts, then dropped.
 */
import { EVIDENCE_ANNOTATION, verdictCondition, type VerdictNode } from '../contract/node.ts';
import { factFromNode, laterBeat, type NodeExpectations } from '../facts/node-facts.ts';
import { isReadError, type AgentPod, type Read, type WorkloadStatus } from './facts.ts';
import { CoverageTally, FreshnessTally, type NodeSummary, PluginTally, VerdictTally } from './node-tally.ts';
import { result, type CheckResult } from './report.ts';

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

/** node_agent_on_every_node over Nodes already read (run.ts feeds a CoverageTally as they stream). */
export function judgeAgentCoverage(
  ds: Read<WorkloadStatus>,
  pods: AgentPod[] | { error: string },
  nodes: Iterable<NodeSummary>,
): CheckResult {
  const t = new CoverageTally(ds, pods);
  for (const n of nodes) t.add(n);
  return t.result();
}

/** @param leasesError why the agents' Leases could not be read: stale findings are then warnings, not failures */
export function judgeFreshness(nodes: Iterable<NodeSummary>, maxAgeMs: number, leasesError?: string): CheckResult {
  const t = new FreshnessTally(maxAgeMs);
  for (const n of nodes) t.add(n);
  return t.result(leasesError);
}

export function judgeVerdicts(nodes: Iterable<NodeSummary>): CheckResult {
  const t = new VerdictTally();
  for (const n of nodes) t.add(n);
  return t.result();
}

/**
 * @param pluginType  the plugin meshgate is configured for (cni.pluginType)
 * @param meshPlugins the plugin types of every mesh profile: a chain running another one means the wrong mesh
 */
export function judgePluginConsistency(
  nodes: Iterable<NodeSummary>,
  pluginType: string,
  meshPlugins: readonly string[],
): CheckResult {
  const t = new PluginTally(pluginType, meshPlugins);
  for (const n of nodes) t.add(n);
  return t.result();
}
