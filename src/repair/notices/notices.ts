/**
 * Adds one Event per pod and notice (src/repair/notices/notice.ts) — held Pending by meshgate, or admitted below enforce —
 * fed by the repair controller's pod watches on every replica; only the leader writes Events, and a new leader
 * writes those not yet written by it (so a handover may repeat one: Events are reports, not state). Only a pod's
 * name, UID and its notice are kept (a notice is at most a few KiB: the recorded refusal is cut to 1 KiB), and the
 * entry goes with the pod.
 */
import type { Logger } from 'pino';
import type { RepairApi } from '../failed/controller.ts';
import type { PodForRepair } from '../failed/decide.ts';
import { noticeFor, type Notice, type NoticeReason } from './notice.ts';

interface Due {
  pod: PodForRepair;
  notice: Notice;
}

export interface NoticeOptions {
  /** meshgate's own and the system namespaces: never guarded, never noticed. */
  excludedNamespaces: readonly string[];
  isLeader?: () => boolean;
  logger?: Logger;
}

export class PodNotices {
  readonly #api: Pick<RepairApi, 'event'>;
  readonly #o: NoticeOptions;
  /** The pods with a notice due (name and UID only) and the notice, as last seen, by UID. */
  readonly #due = new Map<string, Due>();
  /** "uid/reason" of the Events written. */
  readonly #sent = new Set<string>();
  readonly stats: Record<NoticeReason, number> = { MeshPodHeld: 0, MeshWouldDeny: 0 };

  constructor(api: Pick<RepairApi, 'event'>, o: NoticeOptions) {
    this.#api = api;
    this.#o = o;
  }

  /** A pod as a watch delivers it (added or modified). */
  async observe(pod: PodForRepair): Promise<void> {
    const uid = pod.metadata?.uid ?? '';
    if (!uid) return;
    const notice = noticeFor(pod, this.#o.excludedNamespaces);
    const { name, namespace } = pod.metadata ?? {};
    if (notice) this.#due.set(uid, { pod: { metadata: { name, namespace, uid } }, notice });
    else this.#due.delete(uid);
    await this.#act(uid);
  }

  /** The pod is gone. */
  forget(uid: string): void {
    this.#due.delete(uid);
    for (const reason of Object.keys(this.stats)) this.#sent.delete(`${uid}/${reason}`);
  }

  /** Writes the Events still due (on becoming leader). */
  async resync(): Promise<void> {
    for (const uid of [...this.#due.keys()]) await this.#act(uid);
  }

  async #act(uid: string): Promise<void> {
    const due = this.#due.get(uid);
    if (!due || (this.#o.isLeader && !this.#o.isLeader())) return;
    const { pod, notice: n } = due;
    if (this.#sent.has(`${uid}/${n.reason}`)) return;
    this.#sent.add(`${uid}/${n.reason}`);
    try {
      await this.#api.event(pod, 'Warning', n.reason, n.message);
      this.stats[n.reason]++;
    } catch (err) {
      this.#sent.delete(`${uid}/${n.reason}`); // written at the next update or resync
      this.#o.logger?.error({ err: (err as Error).message, reason: n.reason }, 'pod notice failed');
    }
  }
}
