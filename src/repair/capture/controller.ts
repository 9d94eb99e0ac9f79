/**
 * What the repair controller does about a guarded ambient pod that lost ztunnel's capture while it runs
 * (src/repair/capture/judge.ts), fed by the same watch of meshgate's pods as the failed-pod repair: on every replica
 * the pods are judged (warm), and only the leader acts, once per pod:
 * - always: a Warning Event `MeshCaptureLost` on the pod, meshgate_repair_capture_lost_total, the log, and the pod in
 *   meshgate_repair_capture_lost_pods while it runs (`meshgate check` reads the same judgement);
 * - at enforce (the namespace's level, as meshgate's own webhook entries select it: src/check/judge-namespaces.ts):
 *   the pod is deleted with a 2 s grace (CAPTURE_LOST_GRACE_SECONDS; a UID precondition; --max-deletes-per-minute,
 *   a window of its own), so it stops running unredirected — recreated, it is admitted again only as meshgate would admit it then. Below enforce, or in
 *   a namespace no longer guarded (a cluster admin took it out), the Event is all.
 * A pod its controller would recreate and a bare pod alike: the promise is that a guarded pod does not run unmeshed.
 */
import type { Logger } from 'pino';
import type { Level } from '../../admission/level.ts';
import type { KeyRing } from '../../mark/keys.ts';
import { errorFields } from '../../log/fields.ts';
import type { RepairApi } from '../failed/controller.ts';
import type { RepairMetrics } from '../metrics.ts';
import { SlidingLimit } from '../rate-limit.ts';
import { judgeCapture, type RepairCapturePod } from './judge.ts';
import type { EventReason } from '../../contract/reasons.ts';

export interface CaptureOptions {
  validatorName: string;
  trust: { excludedNamespaces: readonly string[]; keys: () => KeyRing | undefined };
  /** The namespace's level as meshgate's webhooks guard it now; undefined: not guarded (any more). */
  levelOf: (namespace: string) => Promise<Level | undefined>;
  maxDeletesPerMinute: number;
  dryRun: boolean;
  isLeader?: () => boolean;
  metrics?: RepairMetrics;
  logger?: Logger;
  now?: () => number;
}

const MINUTE_MS = 60_000;

/**
 * The grace a pod that lost its capture gets to stop: 2 s, not its own (30 s by default). Every second it runs, its
 * traffic leaves unredirected; 2 s lets a process that handles SIGTERM close what it can, as a node drain's
 * `--grace-period` does, without a force delete (0 would remove the pod from the API before its node stops it).
 */
export const CAPTURE_LOST_GRACE_SECONDS = 2;

interface Lost {
  pod: RepairCapturePod;
  message: string;
  /** Whether its Event was posted (then only a deletion may still be due). */
  recorded: boolean;
}

export class CaptureRepair {
  readonly #api: RepairApi;
  readonly #o: CaptureOptions;
  readonly #limit: SlidingLimit;
  /** Pods running without capture, by UID, as last seen. */
  #lost = new Map<string, Lost>();
  /** Pods done with: recorded and, at enforce, deleted (or gone). */
  #done = new Set<string>();
  readonly stats = { recorded: 0, deleted: 0, throttled: 0 };

  constructor(api: RepairApi, opts: CaptureOptions) {
    this.#api = api;
    this.#o = opts;
    this.#limit = new SlidingLimit(opts.maxDeletesPerMinute, MINUTE_MS);
  }

  async observe(pod: RepairCapturePod): Promise<void> {
    const uid = pod.metadata?.uid ?? '';
    const j = judgeCapture(pod, this.#o.validatorName, { ...this.#o.trust, keys: this.#o.trust.keys() });
    if (j.action === 'none') {
      this.#lost.delete(uid);
      this.#gauge();
      return;
    }
    const prev = this.#lost.get(uid);
    this.#lost.set(uid, { pod, message: j.message, recorded: prev?.recorded ?? false });
    this.#gauge();
    await this.#act(uid);
  }

  forget(uid: string): void {
    this.#lost.delete(uid);
    this.#done.delete(uid);
    this.#gauge();
  }

  /** Acts on every pod still known to run without capture (a new leader; deletions the limit postponed). */
  async resync(): Promise<void> {
    for (const uid of [...this.#lost.keys()]) await this.#act(uid);
  }

  /** Pods known to run without capture now. */
  lost(): string[] {
    return [...this.#lost.values()].map((l) => `${l.pod.metadata?.namespace}/${l.pod.metadata?.name}`);
  }

  #gauge(): void {
    this.#o.metrics?.captureLostPods.set(this.#lost.size);
  }

  async #act(uid: string): Promise<void> {
    const l = this.#lost.get(uid);
    if (!l || this.#done.has(uid) || (this.#o.isLeader && !this.#o.isLeader())) return;
    const { namespace = '', name = '' } = l.pod.metadata ?? {};
    let level: Level | undefined;
    try {
      level = await this.#o.levelOf(namespace);
    } catch (err) {
      this.#o.metrics?.errors.inc({ action: 'read_namespace' });
      this.#o.logger?.warn({ err: errorFields(err), pod: `${namespace}/${name}` }, 'capture repair: level unknown');
      return;
    }
    const enforce = level === 'enforce';
    if (enforce && !this.#o.dryRun && !this.#limit.take((this.#o.now ?? Date.now)())) {
      this.stats.throttled++;
      this.#o.metrics?.throttled.inc();
      if (!l.recorded)
        await this.#record(
          l,
          'Warning',
          'MeshCaptureLost',
          `${l.message}; deletion postponed (--max-deletes-per-minute)`,
        );
      return;
    }
    if (!enforce || this.#o.dryRun) {
      const why = this.#o.dryRun
        ? 'dry run: not deleted'
        : level === undefined
          ? 'the namespace is no longer guarded by meshgate: not deleted'
          : `namespace ${namespace} is at level ${level}: not deleted (at enforce it would be)`;
      // Not done: a resync deletes it once its namespace is promoted to enforce while it still runs so.
      if (!l.recorded && (await this.#record(l, 'Warning', 'MeshCaptureLost', `${l.message}; ${why}`)))
        this.#o.metrics?.captureLost.inc({ action: 'reported' });
      return;
    }
    try {
      await this.#api.deletePod(namespace, name, uid, CAPTURE_LOST_GRACE_SECONDS);
    } catch (err) {
      this.#o.metrics?.errors.inc({ action: 'delete' });
      this.#o.logger?.error({ err: errorFields(err), pod: `${namespace}/${name}` }, 'capture repair: delete failed');
      return;
    }
    this.#done.add(uid);
    this.stats.deleted++;
    this.#o.metrics?.captureLost.inc({ action: 'deleted' });
    this.#o.logger?.warn({ pod: `${namespace}/${name}` }, 'deleted a guarded ambient pod that lost its capture');
    await this.#record(l, 'Warning', 'MeshCaptureLost', `${l.message}; deleted (namespace ${namespace} is at enforce)`);
  }

  async #record(l: Lost, type: 'Warning', reason: EventReason, message: string): Promise<boolean> {
    try {
      await this.#api.event(l.pod, type, reason, message);
      l.recorded = true;
      this.stats.recorded++;
      return true;
    } catch (err) {
      this.#o.metrics?.errors.inc({ action: 'event' });
      this.#o.logger?.error({ err: errorFields(err) }, 'capture repair: event failed');
      return false;
    }
  }
}
