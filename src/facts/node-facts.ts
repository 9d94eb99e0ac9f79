/**
 * What the admission path knows about nodes: a verdict per node and the kubelet version, kept in memory and
 * fed by a watch (kube/node-cache.ts) or a static file (facts/node-state.ts). Lookups are O(1); the aggregate
 * questions the decision core asks ("is any node verified?", "do all kubelets support native sidecars?") are
 * answered from counters kept up to date on every change, never by scanning 5,000 nodes per review.
 */
import { NATIVE_SIDECAR_MIN_MINOR, NODE_CONDITION, NODE_VERIFIED_LABEL } from '../inject/constants.ts';

export interface NodeFact {
  name: string;
  verified: boolean;
  /** Stable code from the node agent (condition reason), or why meshgate does not trust the node. */
  reason: string;
  message: string;
  kubeletVersion?: string;
}

export interface NodeFacts {
  get(name: string): NodeFact | undefined;
  anyVerified(): boolean;
  /** Whether every node (or every verified node) runs a kubelet with native sidecars; undefined if none known. */
  nativeSidecars(scope: 'all' | 'verified'): boolean | undefined;
  synced(): boolean;
  size(): number;
}

/** kubelet minor version, e.g. "v1.34.1" → 34; undefined when unparsable (treated as not supporting). */
export function kubeletMinor(version: string | undefined): number | undefined {
  const m = /^v?1\.(\d+)/.exec(version ?? '');
  return m ? Number(m[1]) : undefined;
}

export function supportsNativeSidecars(version: string | undefined): boolean {
  const minor = kubeletMinor(version);
  return minor !== undefined && minor >= NATIVE_SIDECAR_MIN_MINOR;
}

interface NodeLike {
  metadata?: { name?: string; labels?: Record<string, string> };
  status?: {
    conditions?: Array<{ type?: string; status?: string; reason?: string; message?: string }>;
    nodeInfo?: { kubeletVersion?: string };
  };
}

/**
 * A node is verified only when the agent's label says `true` and its condition, if present, does not say
 * otherwise: a label alone can be set by anyone with node patch rights, the condition needs nodes/status.
 */
export function factFromNode(node: NodeLike): NodeFact {
  const name = node.metadata?.name ?? '';
  const label = node.metadata?.labels?.[NODE_VERIFIED_LABEL];
  const cond = node.status?.conditions?.find((c) => c.type === NODE_CONDITION);
  const kubeletVersion = node.status?.nodeInfo?.kubeletVersion;
  if (label === undefined) {
    return { name, verified: false, reason: 'not_published', message: 'the node agent has not published a verdict for this node', kubeletVersion };
  }
  if (label !== 'true') {
    return { name, verified: false, reason: cond?.reason ?? 'label_false', message: cond?.message ?? `label ${NODE_VERIFIED_LABEL}=${label}`, kubeletVersion };
  }
  if (cond && cond.status !== 'True') {
    return { name, verified: false, reason: cond.reason ?? 'condition_false', message: cond.message ?? `condition ${NODE_CONDITION} is ${cond.status}`, kubeletVersion };
  }
  return { name, verified: true, reason: cond?.reason ?? 'verified', message: cond?.message ?? 'verified', kubeletVersion };
}

/** The in-memory store behind every NodeFacts source. */
export class NodeFactStore implements NodeFacts {
  #facts = new Map<string, NodeFact>();
  #verified = 0;
  #oldKubelets = 0;
  #oldVerifiedKubelets = 0;
  #synced = false;

  #count(f: NodeFact, sign: 1 | -1): void {
    const old = !supportsNativeSidecars(f.kubeletVersion);
    if (f.verified) this.#verified += sign;
    if (old) this.#oldKubelets += sign;
    if (old && f.verified) this.#oldVerifiedKubelets += sign;
  }

  upsert(f: NodeFact): void {
    const prev = this.#facts.get(f.name);
    if (prev) this.#count(prev, -1);
    this.#facts.set(f.name, f);
    this.#count(f, 1);
  }

  delete(name: string): void {
    const prev = this.#facts.get(name);
    if (!prev) return;
    this.#count(prev, -1);
    this.#facts.delete(name);
  }

  replaceAll(facts: Iterable<NodeFact>): void {
    this.#facts.clear();
    this.#verified = this.#oldKubelets = this.#oldVerifiedKubelets = 0;
    for (const f of facts) this.upsert(f);
  }

  markSynced(): void {
    this.#synced = true;
  }

  get(name: string): NodeFact | undefined {
    return this.#facts.get(name);
  }

  anyVerified(): boolean {
    return this.#verified > 0;
  }

  nativeSidecars(scope: 'all' | 'verified'): boolean | undefined {
    if (scope === 'all') return this.#facts.size === 0 ? undefined : this.#oldKubelets === 0;
    return this.#verified === 0 ? undefined : this.#oldVerifiedKubelets === 0;
  }

  synced(): boolean {
    return this.#synced;
  }

  size(): number {
    return this.#facts.size;
  }
}
