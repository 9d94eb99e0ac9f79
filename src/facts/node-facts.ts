/**
 * What the admission path knows about nodes: a verdict per node and the kubelet version, kept in memory and
 * fed by a watch (kube/node-cache.ts) or a static file (facts/node-state.ts). Lookups are O(1); the aggregate
 * questions the decision core asks ("is any node verified?", "do all kubelets support native sidecars?") are
 * answered from counters kept up to date on every change, never by scanning 5,000 nodes per review. How a Node
 * becomes a fact: judge-node.ts.
 */
import { NATIVE_SIDECAR_MIN_MINOR } from '../contract/names.ts';
import { aged, laterBeat, type NodeFact } from './judge-node.ts';

export {
  aged,
  expectationsOf,
  factFromNode,
  judgeNode,
  laterBeat,
  NODE_REASONS,
  type NodeExpectations,
  type NodeFact,
} from './judge-node.ts';

export interface NodeFacts {
  get(name: string): NodeFact | undefined;
  anyVerified(): boolean;
  /** Whether every node (or every verified node) runs a kubelet with native sidecars; undefined if none known. */
  nativeSidecars(scope: 'all' | 'verified'): boolean | undefined;
  synced(): boolean;
  size(): number;
  /**
   * Every node's fact, for the metrics' counts by reason at scrape time (server/metrics.ts); never on the admission
   * path.
   */
  facts(): Iterable<NodeFact>;
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

/**
 * The in-memory store behind every NodeFacts source. Per node it holds the fact as judged from its Node (a few
 * short fields; shared strings) and, where agents renew Leases, the last renewal time: a fact is read as its
 * heartbeat makes it (the later of the condition's and the Lease's), aged `stale_verdict` once that is older than
 * `maxAgeMs` — kept apart in `#stale`, so a renewal that comes back restores the verdict. Without `maxAgeMs` (a
 * static file, the CLI's one-off reads) facts are kept as given.
 */
export class NodeFactStore implements NodeFacts {
  #facts = new Map<string, NodeFact>();
  /** The aged form of verified facts whose heartbeat got too old (few: nodes whose agent stopped). */
  #stale = new Map<string, NodeFact>();
  /** When each node's agent last renewed its Lease, ms since the epoch. */
  #leases = new Map<string, number>();
  readonly #maxAgeMs: number | undefined;
  readonly #now: () => number;
  #verified = 0;
  #oldKubelets = 0;
  #oldVerifiedKubelets = 0;
  #synced = false;

  constructor(o: { maxAgeMs?: number; now?: () => number } = {}) {
    this.#maxAgeMs = o.maxAgeMs;
    this.#now = o.now ?? Date.now;
  }

  #count(f: NodeFact, sign: 1 | -1): void {
    const old = !supportsNativeSidecars(f.kubeletVersion);
    if (f.verified) this.#verified += sign;
    if (old) this.#oldKubelets += sign;
    if (old && f.verified) this.#oldVerifiedKubelets += sign;
  }

  /** Counts the node's fact as it reads now, `#stale` updated; the caller uncounted the previous reading. */
  #place(f: NodeFact, now: number): void {
    const a =
      this.#maxAgeMs === undefined
        ? f
        : aged(f, this.#maxAgeMs, now, laterBeat(f.heartbeatAt, this.#leases.get(f.name)));
    if (a === f) this.#stale.delete(f.name);
    else this.#stale.set(f.name, a);
    this.#count(a, 1);
  }

  #uncount(name: string): void {
    const prev = this.get(name);
    if (prev) this.#count(prev, -1);
  }

  upsert(f: NodeFact): void {
    this.#uncount(f.name);
    this.#facts.set(f.name, f);
    this.#place(f, this.#now());
  }

  delete(name: string): void {
    this.#uncount(name);
    this.#facts.delete(name);
    this.#stale.delete(name);
  }

  replaceAll(facts: Iterable<NodeFact>): void {
    this.#facts.clear();
    this.#stale.clear();
    this.#verified = this.#oldKubelets = this.#oldVerifiedKubelets = 0;
    for (const f of facts) this.upsert(f);
  }

  /** The node agent renewed its Lease at `at` (ms): a verified fact reads as alive again. */
  renewed(name: string, at: number | undefined): void {
    if (at === undefined) this.#leases.delete(name);
    else this.#leases.set(name, at);
    this.#rejudge(name);
  }

  /** Every Lease renewal at once (a relist of the Leases). */
  replaceLeases(leases: Map<string, number>): void {
    const before = this.#leases;
    this.#leases = leases;
    for (const name of new Set([...before.keys(), ...leases.keys()])) this.#rejudge(name);
  }

  #rejudge(name: string): void {
    const f = this.#facts.get(name);
    if (!f?.verified) return;
    this.#uncount(name);
    this.#place(f, this.#now());
  }

  /**
   * Re-judges the verified facts by age: a node whose agent stopped heartbeating gets no watch event, so the
   * cache ages its facts itself (O(verified nodes), every few seconds, never per review). `maxAgeMs` for a store
   * made without one.
   */
  expireStale(maxAgeMs: number | undefined, now: number): number {
    const max = this.#maxAgeMs ?? maxAgeMs;
    if (max === undefined) return 0;
    let expired = 0;
    for (const f of this.#facts.values()) {
      if (!f.verified || this.#stale.has(f.name)) continue;
      const a = aged(f, max, now, laterBeat(f.heartbeatAt, this.#leases.get(f.name)));
      if (a === f) continue;
      this.#count(f, -1);
      this.#stale.set(f.name, a);
      this.#count(a, 1);
      expired++;
    }
    return expired;
  }

  markSynced(): void {
    this.#synced = true;
  }

  get(name: string): NodeFact | undefined {
    return this.#stale.get(name) ?? this.#facts.get(name);
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

  *facts(): Iterable<NodeFact> {
    for (const f of this.#facts.values()) yield this.#stale.get(f.name) ?? f;
  }
}
