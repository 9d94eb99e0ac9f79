/**
 * The node facts `meshgate explain KIND/NAME` judges with, read as narrowly as the objects allow (issue 32): a pod
 * bound to a node (spec.nodeName, or pinned by node affinity) needs that Node's fact only — one GET of the Node and
 * one of its agent's Lease, whatever the cluster's size. Only a template no node is chosen for yet (a Deployment, an
 * unscheduled pod) needs what the webhook asks of every node (is any verified, do all kubelets have native
 * sidecars): the Nodes are then read a page at a time and counted as they stream, and no Node's fact is kept but
 * those named. Lease renewals age the facts as the webhook ages them.
 */
import {
  expectationsOf,
  factFromNode,
  supportsNativeSidecars,
  type NodeFact,
  type NodeFacts,
} from '../facts/node-facts.ts';
import type { Compiled } from '../config/compile.ts';
import type { KubeReader } from '../check/kube-reader.ts';
import { parsePod } from '../pod/parse.ts';
import { targetNode } from '../policy/target-node.ts';

/** What explain's decisions ask: the named nodes' facts, and counts over every node when some template needs them. */
export class ExplainNodes implements NodeFacts {
  readonly #named = new Map<string, NodeFact>();
  #all = 0;
  #verified = 0;
  #oldKubelets = 0;
  #oldVerifiedKubelets = 0;

  /** A node's fact: kept when named, counted always. */
  add(f: NodeFact, keep: boolean): void {
    if (keep) this.#named.set(f.name, f);
    const old = !supportsNativeSidecars(f.kubeletVersion);
    this.#all++;
    if (f.verified) this.#verified++;
    if (old) this.#oldKubelets++;
    if (old && f.verified) this.#oldVerifiedKubelets++;
  }

  get(name: string): NodeFact | undefined {
    return this.#named.get(name);
  }

  anyVerified(): boolean {
    return this.#verified > 0;
  }

  nativeSidecars(scope: 'all' | 'verified'): boolean | undefined {
    if (scope === 'all') return this.#all === 0 ? undefined : this.#oldKubelets === 0;
    return this.#verified === 0 ? undefined : this.#oldVerifiedKubelets === 0;
  }

  synced(): boolean {
    return true;
  }

  size(): number {
    return this.#all;
  }

  facts(): Iterable<NodeFact> {
    return this.#named.values();
  }
}

/** The node a template is bound or pinned to, if any (policy/target-node.ts, as the decision reads it). */
export function templateNode(template: { metadata?: unknown; spec?: unknown }): string | undefined {
  const parsed = parsePod({ metadata: template.metadata ?? {}, spec: template.spec ?? {} }, 'template');
  return parsed.ok ? targetNode(parsed.pod)?.name : undefined;
}

type Reader = Pick<KubeReader, 'node' | 'nodeLease' | 'nodeLeases' | 'nodes'>;

/**
 * The facts for templates targeting `nodes` (a node name each, or undefined where none is chosen): the named Nodes
 * by GET when every template names one, else every Node streamed and counted.
 */
export async function explainNodes(
  reader: Reader,
  cfg: Compiled,
  targets: ReadonlyArray<string | undefined>,
  /** Each Node read (the CLI's progress line on a terminal). */
  onNode: () => void = () => undefined,
): Promise<ExplainNodes> {
  const out = new ExplainNodes();
  const expect = expectationsOf(cfg.config.cni);
  const ns = cfg.config.meshNamespace;
  const now = Date.now();
  const named = new Set(targets.filter((t): t is string => t !== undefined));
  if (!targets.includes(undefined)) {
    for (const name of named) {
      const node = await reader.node(name);
      if (node === undefined) continue;
      if ('error' in node) throw new Error(`Node ${name} could not be read: ${node.error}`);
      const lease = await reader.nodeLease(ns, name);
      out.add(factFromNode(node, expect, now, typeof lease === 'number' ? lease : undefined), true);
      onNode();
    }
    return out;
  }
  const leases = await reader.nodeLeases(ns);
  const err = await reader.nodes((n) => {
    const name = n.metadata?.name ?? '';
    out.add(factFromNode(n, expect, now, leases instanceof Map ? leases.get(name) : undefined), named.has(name));
    onNode();
  });
  if (err) throw new Error(`Nodes could not be listed: ${err.error}`);
  return out;
}
