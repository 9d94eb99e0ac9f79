/**
 * The repair controller: watches meshgate's pods (label meshgate.io/redirect), deletes those whose validation
 * container failed so their controller recreates them, and records an Event either way. Deletes carry a UID
 * precondition (never a newer pod of the same name) and are rate-limited so a broken node cannot make meshgate
 * delete a whole fleet at once.
 */
import type { Logger } from 'pino';
import { decideRepair, type PodForRepair } from './decide.ts';

export interface RepairApi {
  deletePod(namespace: string, name: string, uid: string): Promise<void>;
  event(pod: PodForRepair, type: 'Warning' | 'Normal', reason: string, message: string): Promise<void>;
}

export interface RepairOptions {
  validatorName: string;
  /** At most this many deletions per minute (default 10): repair must never become an outage of its own. */
  maxDeletesPerMinute: number;
  dryRun: boolean;
  logger?: Logger;
  now?: () => number;
}

export class RepairController {
  #api: RepairApi;
  #o: RepairOptions;
  #deletes: number[] = [];
  /** Pod UIDs already acted on: a watch delivers many updates of one crash-looping pod. */
  #handled = new Set<string>();
  readonly stats = { deleted: 0, reported: 0, throttled: 0 };

  constructor(api: RepairApi, opts: RepairOptions) {
    this.#api = api;
    this.#o = opts;
  }

  async onPod(pod: PodForRepair): Promise<void> {
    const uid = pod.metadata?.uid ?? '';
    if (this.#handled.has(uid)) return;
    const d = decideRepair(pod, this.#o.validatorName);
    if (d.action === 'none') return;
    const ns = pod.metadata!.namespace!;
    const name = pod.metadata!.name!;
    if (d.action === 'report') {
      this.#handled.add(uid);
      this.stats.reported++;
      await this.#api.event(pod, 'Warning', 'MeshRedirectFailed', d.message);
      return;
    }
    const now = (this.#o.now ?? Date.now)();
    this.#deletes = this.#deletes.filter((t) => now - t < 60_000);
    if (this.#deletes.length >= this.#o.maxDeletesPerMinute) {
      this.stats.throttled++;
      this.#o.logger?.warn({ pod: `${ns}/${name}` }, 'repair throttled: too many deletions this minute');
      return;
    }
    this.#handled.add(uid);
    this.#deletes.push(now);
    this.#o.logger?.info({ pod: `${ns}/${name}`, node: d.node, reason: d.reason, dryRun: this.#o.dryRun }, 'repairing pod');
    await this.#api.event(pod, 'Warning', 'MeshRedirectFailed', this.#o.dryRun ? `${d.message} (dry run: not deleted)` : d.message);
    if (!this.#o.dryRun) await this.#api.deletePod(ns, name, uid);
    this.stats.deleted++;
  }

  forget(uid: string): void {
    this.#handled.delete(uid);
  }
}
