/**
 * The pods that carry meshgate's label (meshgate.io/redirect) and still run unmeshed: a label copied into a pod
 * created while the webhooks could not review it says nothing about its containers. The sweep (sweep.ts) lists only
 * pods without the label — what can be unmeshed without having claimed otherwise, by selector, so a sweep reads no
 * longer every pod of every opted-in namespace (issue 32) — and takes the labelled ones from here: the repair
 * controller's own pod watch (src/repair/failed/watch.ts) hands each labelled pod over as it arrives, it is judged
 * at once (judge.ts) and kept only when flagged. A pod whose admission mark verifies (src/mark/mark.ts: meshgate's
 * mutating webhook admitted it as meshed, and its validating webhook checked the pod and the mark at CREATE) and
 * that carries no recorded refusal (meshgate.io/would-deny) is not judged again: at 90,000 guarded pods that is
 * the difference between a few µs and a few hundred per pod while a fresh replica reads them all. Holds: per flagged pod (normally none) its name, UID, labels and
 * what to do about it — never the pod: a configuration that makes every pod look unmeshed (the mesh's images not
 * recognised) must cost a few hundred bytes per pod, not the pod's tens of KiB.
 */
import type { Compiled } from '../../config/compile.ts';
import { podRecord, type PodLike } from '../../check/records.ts';
import { judgeUnmeshed, type UnmeshedAction } from './judge.ts';
import type { KeyRing } from '../../mark/keys.ts';
import { WOULD_DENY_LABEL } from '../../admission/level.ts';
import { markTrust, type PodForRepair } from '../failed/decide.ts';
import { configForNamespace } from '../../config/per-namespace.ts';
import type { ProxyIds } from '../../mesh/istio-openshift.ts';

export interface Flagged {
  namespace: string;
  name: string;
  uid: string;
  labels?: Record<string, string>;
  action: Exclude<UnmeshedAction, { action: 'none' }>;
}

export class LabelledUnmeshed {
  readonly #cfg: Compiled;
  readonly #keys: () => KeyRing | undefined;
  readonly #idsOf: ((namespace: string) => ProxyIds | undefined) | undefined;
  readonly #flagged = new Map<string, Flagged>();
  /** Pods judged in full, and pods passed on their mark: for tests and the bench's logs. */
  readonly stats = { judged: 0, marked: 0 };

  /**
   * `keys`: the admission mark's keys as loaded now (none: every pod is judged). `idsOf`: on Istio on OpenShift
   * (`proxy.idsFrom: openshift`), the proxy's IDs of a namespace from the namespace watch (src/config/per-namespace.ts).
   */
  constructor(
    cfg: Compiled,
    keys: () => KeyRing | undefined = () => undefined,
    idsOf?: (namespace: string) => ProxyIds | undefined,
  ) {
    this.#cfg = cfg;
    this.#keys = keys;
    this.#idsOf = idsOf;
  }

  /** A labelled pod as the watch delivers it (added or modified). */
  observe(object: unknown): void {
    const pod = object as PodLike & { metadata?: { namespace?: string; uid?: string } };
    const uid = pod.metadata?.uid;
    if (!uid) return;
    const p = podRecord(pod.metadata?.namespace ?? '', pod);
    if (p.labels?.[WOULD_DENY_LABEL] === undefined && markTrust(object as PodForRepair, this.#keys()) === undefined) {
      this.stats.marked++;
      this.#flagged.delete(uid);
      return;
    }
    // A namespace the watch has not delivered yet (OpenShift only): judged on the pod's next event rather than with
    // the wrong proxy IDs, which would take the real proxy for an impostor.
    const here = configForNamespace(this.#cfg, p.namespace, this.#idsOf);
    if (!here.ok) return;
    this.stats.judged++;
    const action = judgeUnmeshed(p, here.cfg);
    if (action.action === 'none') this.#flagged.delete(uid);
    else this.#flagged.set(uid, { namespace: p.namespace, name: p.name, uid, labels: p.labels, action });
  }

  forget(uid: string): void {
    this.#flagged.delete(uid);
  }

  /** The labelled pods judged unmeshed when last seen. */
  flagged(): Iterable<Flagged> {
    return this.#flagged.values();
  }
}
