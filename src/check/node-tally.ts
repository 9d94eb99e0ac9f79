/**
 * The node checks judged one Node at a time as the list streams (judge-nodes.ts has the per-Node summary): counts,
 * and the first ITEMS_KEPT problem Nodes per check (kept.ts). Nothing per Node is kept here, so 15,000 Nodes cost
 * the four checks a few counters; the caller keeps each Node's fact for the pods' judgement (the webhook's own
 * cache keeps the same). Pure.
 */
import { isReadError, type AgentPod, type Read, type WorkloadStatus } from './facts.ts';
import { Kept } from './kept.ts';
import type { NodeFact } from '../facts/node-facts.ts';
import { result, type CheckResult, type Item } from './report.ts';

/** A Node as `check` keeps it: reduced as it is read (judge-nodes.ts summarizeNode), judged by the tallies. */
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

/** node_agent_on_every_node: a ready agent pod on each Node. */
export class CoverageTally {
  readonly #ds: Read<WorkloadStatus>;
  readonly #pods: AgentPod[] | { error: string };
  /** Each node's agent pod, a ready one first: the agents are one per Node, the only per-Node state here. */
  readonly #byNode = new Map<string, AgentPod>();
  readonly #items = new Kept<Item>();
  #nodes = 0;

  constructor(ds: Read<WorkloadStatus>, pods: AgentPod[] | { error: string }) {
    this.#ds = ds;
    this.#pods = pods;
    if (!isReadError(pods))
      for (const p of pods) if (p.node && (!this.#byNode.has(p.node) || p.ready)) this.#byNode.set(p.node, p);
  }

  add(n: NodeSummary): void {
    this.#nodes++;
    if (this.#ds === undefined || isReadError(this.#ds) || isReadError(this.#pods)) return;
    const p = this.#byNode.get(n.name);
    if (!p)
      this.#items.add({
        name: n.name,
        status: 'fail',
        message: 'runs no node agent pod: its verdict is never refreshed',
      });
    else if (!p.ready)
      this.#items.add({
        name: n.name,
        status: 'fail',
        message: `node agent pod ${p.name} is not ready (${p.phase ?? 'unknown phase'})`,
      });
  }

  result(): CheckResult {
    const ds = this.#ds;
    if (ds === undefined || isReadError(ds))
      return { code: 'node_agent_on_every_node', status: 'skip', message: 'not checked: no node agent DaemonSet' };
    if (isReadError(this.#pods))
      return result(
        'node_agent_on_every_node',
        'warn',
        `the node agent's pods could not be listed: ${this.#pods.error}`,
      );
    const { items, total, omitted } = this.#items;
    if (total)
      return result(
        'node_agent_on_every_node',
        'fail',
        `${total} of ${this.#nodes} nodes have no ready node agent`,
        items,
        { count: omitted, of: 'nodes' },
      );
    return result('node_agent_on_every_node', 'ok', `a ready node agent runs on each of the ${this.#nodes} nodes`);
  }
}

const minutes = (ms: number) => `${Math.round(ms / 60_000)} min`;

/** node_verdict_fresh: each published verdict's heartbeat within cni.maxVerdictAgeSeconds. */
export class FreshnessTally {
  readonly #maxAgeMs: number;
  readonly #items = new Kept<Item>();
  #published = 0;

  constructor(maxAgeMs: number) {
    this.#maxAgeMs = maxAgeMs;
  }

  add(n: NodeSummary): void {
    if (!n.hasCondition) return;
    this.#published++;
    const bound = `(bound: cni.maxVerdictAgeSeconds = ${minutes(this.#maxAgeMs)})`;
    if (n.heartbeatAgeMs === undefined)
      this.#items.add({
        name: n.name,
        status: 'fail',
        reason: 'stale_verdict',
        message: 'the verdict has no heartbeat',
      });
    else if (n.heartbeatAgeMs > this.#maxAgeMs)
      this.#items.add({
        name: n.name,
        status: 'fail',
        reason: 'stale_verdict',
        message: `last heartbeat ${minutes(n.heartbeatAgeMs)} ago ${bound}`,
      });
  }

  /** @param leasesError why the agents' Leases could not be read: stale findings are then warnings, not failures */
  result(leasesError?: string): CheckResult {
    const published = this.#published;
    if (published === 0)
      return { code: 'node_verdict_fresh', status: 'skip', message: 'not checked: no node has published a verdict' };
    const { items, total, omitted } = this.#items;
    if (total && leasesError) {
      const why = `the node agents' Leases could not be read (${leasesError}): heartbeats on the condition alone`;
      const warned = items.map((i) => ({ ...i, status: 'warn' as const }));
      return result('node_verdict_fresh', 'warn', `${total} of ${published} verdicts look stale; ${why}`, warned, {
        count: omitted,
        of: 'nodes',
      });
    }
    if (total)
      return result('node_verdict_fresh', 'fail', `${total} of ${published} verdicts are stale`, items, {
        count: omitted,
        of: 'nodes',
      });
    return result(
      'node_verdict_fresh',
      'ok',
      `all ${published} verdicts re-confirmed within ${minutes(this.#maxAgeMs)}`,
    );
  }
}

/** node_verified: each Node's verdict as the webhook reads it. */
export class VerdictTally {
  readonly #items = new Kept<Item>();
  #nodes = 0;

  add(n: NodeSummary): void {
    this.#nodes++;
    if (!n.fact.verified)
      this.#items.add({ name: n.name, status: 'fail', reason: n.fact.reason, message: n.fact.message });
  }

  result(): CheckResult {
    const nodes = this.#nodes;
    if (nodes === 0) return result('node_verified', 'warn', 'the cluster has no Nodes');
    const { items, total, omitted } = this.#items;
    const verified = nodes - total;
    if (total) {
      const none = verified === 0 ? ': no pod can use CNI mode' : '';
      return result('node_verified', 'fail', `${verified} of ${nodes} nodes verified${none}`, items, {
        count: omitted,
        of: 'nodes',
      });
    }
    return result('node_verified', 'ok', `all ${nodes} nodes verified`);
  }
}

/**
 * mesh_plugin_consistent. `pluginType`: the plugin meshgate is configured for (cni.pluginType); `meshPlugins`: the
 * plugin types of every mesh profile — a chain running another one means the wrong mesh.
 */
export class PluginTally {
  readonly #pluginType: string;
  readonly #others: readonly string[];
  readonly #items = new Kept<Item>();
  #withEvidence = 0;

  constructor(pluginType: string, meshPlugins: readonly string[]) {
    this.#pluginType = pluginType;
    this.#others = meshPlugins.filter((p) => p && p !== pluginType);
  }

  add(n: NodeSummary): void {
    if (n.checkedPlugin === undefined) return;
    this.#withEvidence++;
    const pluginType = this.#pluginType;
    if (n.checkedPlugin !== pluginType) {
      this.#items.add({
        name: n.name,
        status: 'fail',
        reason: 'plugin_mismatch',
        message: `its node agent checks for ${n.checkedPlugin}, meshgate is configured for ${pluginType}`,
      });
      return;
    }
    const foreign = (n.chain ?? []).filter((p) => this.#others.includes(p));
    if (foreign.length && !(n.chain ?? []).includes(pluginType)) {
      this.#items.add({
        name: n.name,
        status: 'fail',
        reason: 'other_mesh_plugin',
        message:
          `its CNI chain runs ${foreign.join(', ')}, not ${pluginType}: ` +
          'is meshgate configured for the right mesh?',
      });
    }
  }

  result(): CheckResult {
    const pluginType = this.#pluginType;
    if (this.#withEvidence === 0)
      return { code: 'mesh_plugin_consistent', status: 'skip', message: 'not checked: no node has published evidence' };
    const { items, total, omitted } = this.#items;
    if (total)
      return result(
        'mesh_plugin_consistent',
        'fail',
        `${total} of ${this.#withEvidence} nodes disagree with mesh CNI plugin ${pluginType}`,
        items,
        { count: omitted, of: 'nodes' },
      );
    return result(
      'mesh_plugin_consistent',
      'ok',
      `every node agent checks for ${pluginType}, the configured mesh CNI plugin`,
    );
  }
}
