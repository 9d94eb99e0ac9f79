/**
 * Validation failures per node within a sliding window, counted by distinct pod: a crash-looping pod reports its
 * failure on every restart, and one pod whose own spec breaks validation must not look like a broken node. Kept on
 * every replica (each watches the same pods), so a new leader knows the recent failures at once.
 * Memory: at most `maxPerNode` failures for each node that failed within the window; older ones are dropped.
 */
import type { ObservedFailure } from './controller.ts';

/** Failing pods kept per node: far above any sensible threshold, far below what could strain memory. */
const MAX_PER_NODE = 64;

export class FailureWindow {
  readonly #windowMs: number;
  readonly #maxPerNode: number;
  /** node → pod UID → its first failure in the window */
  readonly #byNode = new Map<string, Map<string, ObservedFailure>>();

  constructor(windowMs: number, maxPerNode = MAX_PER_NODE) {
    this.#windowMs = windowMs;
    this.#maxPerNode = maxPerNode;
  }

  /** Records a failure; false when it is outside the window or its pod already counts on that node. */
  add(f: ObservedFailure, now: number): boolean {
    if (now - f.at >= this.#windowMs) return false;
    this.#prune(f.node, now);
    const pods = this.#byNode.get(f.node) ?? new Map<string, ObservedFailure>();
    this.#byNode.set(f.node, pods);
    if (pods.has(f.uid)) return false;
    pods.set(f.uid, f);
    if (pods.size > this.#maxPerNode) {
      const oldest = [...pods.values()].reduce((a, b) => (b.at < a.at ? b : a));
      pods.delete(oldest.uid);
    }
    return true;
  }

  /** The node's failures within the window, after `after` (ms since the epoch) if given, oldest first. */
  recent(node: string, now: number, after = -Infinity): ObservedFailure[] {
    this.#prune(node, now);
    return [...(this.#byNode.get(node)?.values() ?? [])].filter((f) => f.at > after).sort((a, b) => a.at - b.at);
  }

  /** Nodes with at least `n` failures in the window. */
  nodesWithAtLeast(n: number, now: number): string[] {
    return [...this.#byNode.keys()].filter((node) => this.recent(node, now).length >= n);
  }

  #prune(node: string, now: number): void {
    const pods = this.#byNode.get(node);
    if (!pods) return;
    for (const [uid, f] of pods) if (now - f.at >= this.#windowMs) pods.delete(uid);
    if (pods.size === 0) this.#byNode.delete(node);
  }
}
