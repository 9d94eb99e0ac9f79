/**
 * The pods that carry meshgate's label (meshgate.io/redirect) and still run unmeshed: a label copied into a pod
 * created while the webhooks could not review it says nothing about its containers. The sweep (sweep.ts) lists only
 * pods without the label — what can be unmeshed without having claimed otherwise, by selector, so a sweep reads no
 * longer every pod of every opted-in namespace (issue 32) — and takes the labelled ones from here: the repair
 * controller's own pod watch (src/repair/failed/watch.ts) hands each labelled pod over as it arrives, it is judged
 * at once (judge.ts) and kept only when flagged. Holds: the flagged pods (normally none), by UID.
 */
import type { Compiled } from '../../config/compile.ts';
import type { PodRecord } from '../../check/facts.ts';
import { podRecord, type PodLike } from '../../check/records.ts';
import { judgeUnmeshed } from './judge.ts';

export class LabelledUnmeshed {
  readonly #cfg: Compiled;
  readonly #flagged = new Map<string, PodRecord>();

  constructor(cfg: Compiled) {
    this.#cfg = cfg;
  }

  /** A labelled pod as the watch delivers it (added or modified). */
  observe(object: unknown): void {
    const pod = object as PodLike & { metadata?: { namespace?: string; uid?: string } };
    const uid = pod.metadata?.uid;
    if (!uid) return;
    const p = podRecord(pod.metadata?.namespace ?? '', pod);
    if (judgeUnmeshed(p, this.#cfg).action === 'none') this.#flagged.delete(uid);
    else this.#flagged.set(uid, p);
  }

  forget(uid: string): void {
    this.#flagged.delete(uid);
  }

  /** The labelled pods judged unmeshed when last seen. */
  flagged(): Iterable<PodRecord> {
    return this.#flagged.values();
  }
}
