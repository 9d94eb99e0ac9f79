/**
 * The repair controller's decisions applied: every watch event of a meshgate pod goes through `observe`; pods whose
 * validation container failed are remembered as candidates, and — only while this replica is the leader
 * (src/kube/lease.ts) — deleted so their controller recreates them, with an Event either way. Deletes carry a UID
 * precondition (never a newer pod of the same name) and are rate-limited so a broken node cannot make meshgate
 * delete a whole fleet at once. Pods whose admission mark does not verify are only counted
 * (meshgate_repair_untrusted_failures_total), never acted on. `resync` replays the candidates: on becoming leader (a pod that failed while
 * another replica led and was not handled) and periodically (deletions the rate limit postponed).
 */
import type { Logger } from 'pino';
import type { KeyRing } from '../../mark/keys.ts';
import { decideRepair, type PodForRepair, type RepairAction, type ValidatorWatch } from './decide.ts';
import type { RepairMetrics } from '../metrics.ts';
import { errorFields } from '../../log/fields.ts';
import type { EventReason } from '../../contract/reasons.ts';

export interface RepairApi {
  /** `gracePeriodSeconds`: shorter than the pod's own (the capture repair's); undefined: the pod's. */
  deletePod(namespace: string, name: string, uid: string, gracePeriodSeconds?: number): Promise<void>;
  event(pod: PodForRepair, type: 'Warning' | 'Normal', reason: EventReason, message: string): Promise<void>;
}

export interface RepairOptions {
  validator: ValidatorWatch;
  /** What a pod must pass to be acted on or counted (src/repair/failed/decide.ts): the keys are read at each decision. */
  trust: { excludedNamespaces: readonly string[]; keys: () => KeyRing | undefined };
  /** At most this many deletions per minute (default 10): repair must never become an outage of its own. */
  maxDeletesPerMinute: number;
  dryRun: boolean;
  /** Whether this replica may act now; default always (a single replica without leader election). */
  isLeader?: () => boolean;
  metrics?: RepairMetrics;
  logger?: Logger;
  now?: () => number;
  /**
   * Every failed validation seen, on every replica (leader or not), once per pod and termination: the node
   * quarantine (src/repair/quarantine/quarantine.ts) counts them per node.
   */
  onFailure?: (f: ObservedFailure) => void;
}

/** A pod's validation failure as the watch delivered it. */
export interface ObservedFailure {
  node: string;
  uid: string;
  /** namespace/name */
  pod: string;
  reason: string;
  /** When it failed: the termination's finishedAt, else when it was seen (ms since the epoch). */
  at: number;
}

/** The window of --max-deletes-per-minute. */
const MINUTE_MS = 60_000;

export class RepairController {
  #api: RepairApi;
  #o: RepairOptions;
  #deletes: number[] = [];
  /** Pod UIDs already acted on: a watch delivers many updates of one crash-looping pod. */
  #handled = new Set<string>();
  /** Pods with a failed validator, by UID, as last seen: what a new leader or a resync acts on. */
  #candidates = new Map<string, PodForRepair>();
  /** Pods with a failed validator but no admission mark that verifies, already counted (once each). */
  #untrusted = new Set<string>();
  readonly stats = { deleted: 0, reported: 0, throttled: 0 };

  constructor(api: RepairApi, opts: RepairOptions) {
    this.#api = api;
    this.#o = opts;
  }

  /** A pod as the watch delivers it (added or modified). */
  async observe(pod: PodForRepair): Promise<void> {
    const uid = pod.metadata?.uid ?? '';
    const d = this.#decide(pod);
    if (d.action === 'untrusted') this.#noteUntrusted(uid, d);
    if (d.action === 'none' || d.action === 'untrusted') this.#candidates.delete(uid);
    else this.#candidates.set(uid, pod);
    // Only a failure that proves the redirect missing counts against the node; "could not check" does not.
    if ((d.action === 'report' || d.action === 'delete') && d.counted && d.node && this.#o.onFailure) {
      const now = (this.#o.now ?? Date.now)();
      this.#o.onFailure({
        node: d.node,
        uid,
        pod: `${pod.metadata?.namespace}/${pod.metadata?.name}`,
        reason: d.reason,
        at: Math.min(d.failedAt ?? now, now),
      });
    }
    this.#o.metrics?.candidates.set(this.#candidates.size);
    await this.#act(pod);
  }

  #decide(pod: PodForRepair): RepairAction {
    const t = this.#o.trust;
    return decideRepair(pod, this.#o.validator, { excludedNamespaces: t.excludedNamespaces, keys: t.keys() });
  }

  /** Counted and logged once per pod: a flood of look-alike pods must not flood the log. */
  #noteUntrusted(uid: string, d: Extract<RepairAction, { action: 'untrusted' }>): void {
    if (this.#untrusted.has(uid)) return;
    this.#untrusted.add(uid);
    this.#o.metrics?.untrusted.inc({ why: d.why });
    this.#o.logger?.debug({ uid, node: d.node, why: d.why, message: d.message }, 'failed validator not trusted');
  }

  /** Acts on every remembered candidate (no-op unless leader). */
  async resync(): Promise<void> {
    for (const pod of [...this.#candidates.values()]) await this.#act(pod);
  }

  /** The pod is gone. */
  forget(uid: string): void {
    this.#handled.delete(uid);
    this.#untrusted.delete(uid);
    this.#candidates.delete(uid);
    this.#o.metrics?.candidates.set(this.#candidates.size);
  }

  async #act(pod: PodForRepair): Promise<void> {
    if (this.#o.isLeader && !this.#o.isLeader()) return;
    const uid = pod.metadata?.uid ?? '';
    if (this.#handled.has(uid)) return;
    const d = this.#decide(pod);
    if (d.action === 'none' || d.action === 'untrusted') return;
    const ns = pod.metadata?.namespace;
    const name = pod.metadata?.name;
    if (!ns || !name) {
      // Pods come from a watch of the apiserver, which names every one: never seen, never acted on.
      this.#o.logger?.warn({ uid }, 'repair skipped: the pod has no namespace or name');
      return;
    }
    const m = this.#o.metrics;
    if (d.action === 'report') {
      this.#handled.add(uid);
      this.stats.reported++;
      m?.reported.inc({ reason: d.reason });
      await this.#call('event', () => this.#api.event(pod, 'Warning', 'MeshRedirectFailed', d.message));
      return;
    }
    const now = (this.#o.now ?? Date.now)();
    this.#deletes = this.#deletes.filter((t) => now - t < MINUTE_MS);
    if (this.#deletes.length >= this.#o.maxDeletesPerMinute) {
      this.stats.throttled++;
      m?.throttled.inc();
      this.#o.logger?.warn({ pod: `${ns}/${name}` }, 'repair throttled: too many deletions this minute');
      return;
    }
    this.#handled.add(uid);
    this.#deletes.push(now);
    this.#o.logger?.info(
      { pod: `${ns}/${name}`, node: d.node, reason: d.reason, dryRun: this.#o.dryRun },
      'repairing pod',
    );
    await this.#call('event', () =>
      this.#api.event(
        pod,
        'Warning',
        'MeshRedirectFailed',
        this.#o.dryRun ? `${d.message} (dry run: not deleted)` : d.message,
      ),
    );
    // Re-checked after the Event: a replica that lost the Lease meanwhile must not delete.
    if (this.#o.isLeader && !this.#o.isLeader()) {
      this.#handled.delete(uid);
      return;
    }
    if (!this.#o.dryRun && !(await this.#call('delete', () => this.#api.deletePod(ns, name, uid)))) {
      this.#handled.delete(uid); // retried at the next event or resync
      return;
    }
    this.stats.deleted++;
    m?.deleted.inc({ reason: d.reason });
  }

  /** Runs an API call; a failure is logged and counted, never thrown into the watch. */
  async #call(action: 'delete' | 'event', fn: () => Promise<void>): Promise<boolean> {
    try {
      await fn();
      return true;
    } catch (err) {
      this.#o.metrics?.errors.inc({ action });
      this.#o.logger?.error({ action, err: errorFields(err) }, 'repair call failed');
      return false;
    }
  }
}
