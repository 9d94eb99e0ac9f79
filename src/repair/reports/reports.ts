/**
 * Publishes the audit findings as PolicyReports (report.ts), one per namespace (issue 34 §4). Written by the repair
 * controller, which already follows every pod admitted below enforce (the would-deny watch that feeds its Events,
 * src/repair/notices/) and elects one leader: the webhook must make no API call on the admission path, and its
 * replicas would write the same report at once. Every replica keeps the findings; only the leader writes.
 *
 * Bounded: per pod only its key (namespace, group), per group one message (cut to 1 KiB) and a count; a namespace's
 * report is written at most once per FLUSH_MS (changes in between are coalesced) with one server-side apply, and
 * deleted once its last finding is gone. Without the PolicyReport CRD (wgpolicyk8s.io, installed with Kyverno or
 * from the wg-policy project) nothing is written: the first write says so in the log and meshgate tries again every
 * CRD_RETRY_MS. The record on a pod is a report, not trust (docs/security.md): so are these.
 */
import type { Logger } from 'pino';
import { readWouldDeny } from '../../admission/level.ts';
import { REASONS, type ReasonCode } from '../../contract/reasons.ts';
import type { PodForRepair } from '../failed/decide.ts';
import { type WorkloadFinding, MAX_MESSAGE, policyReport, type WorkloadRef } from './report.ts';

/** The apiserver calls the reports need (kube-api.ts). */
export interface ReportApi {
  /** Creates or replaces the namespace's report (server-side apply). */
  apply(namespace: string, report: Record<string, unknown>): Promise<void>;
  /** Deletes the namespace's report; gone already is fine. */
  remove(namespace: string): Promise<void>;
  /** The namespaces holding a report of meshgate's. */
  list(): Promise<string[]>;
}

export type ReportWrite = 'applied' | 'deleted' | 'failed' | 'no_crd';

export interface ReportOptions {
  /** meshgate's own and the system namespaces: never guarded, never reported. */
  excludedNamespaces: readonly string[];
  isLeader?: () => boolean;
  logger?: Logger;
  onWrite?: (result: ReportWrite) => void;
  now?: () => number;
  /** Default FLUSH_MS. */
  flushMs?: number;
}

/** Changes to a namespace's findings within this long make one write. */
export const FLUSH_MS = 10_000;
/** How long to wait before trying again once the apiserver said it has no PolicyReport resource. */
export const CRD_RETRY_MS = 5 * 60_000;

/** An error from the apiserver that it does not serve the resource (the CRD is not installed). */
export function isNoResource(err: unknown): boolean {
  const e = err as { code?: number; reason?: string; message?: string };
  return e?.code === 404 && (e.message ?? '').includes('the server could not find the requested resource');
}

interface Group extends WorkloadFinding {
  uids: Set<string>;
}

/** The workload a pod belongs to, as a report names it: a ReplicaSet made by a Deployment as that Deployment. */
export function reportedWorkloadOf(pod: PodForRepair): WorkloadRef {
  const meta = pod.metadata ?? {};
  const owner = (
    meta.ownerReferences as Array<{ apiVersion?: string; kind?: string; name?: string; controller?: boolean }>
  )?.find((o) => o.controller === true);
  if (!owner?.kind || !owner.name) return { apiVersion: 'v1', kind: 'Pod', name: meta.name ?? '' };
  const hash = meta.labels?.['pod-template-hash'];
  if (owner.kind === 'ReplicaSet' && hash && owner.name.endsWith(`-${hash}`))
    return { apiVersion: 'apps/v1', kind: 'Deployment', name: owner.name.slice(0, -hash.length - 1) };
  return { apiVersion: owner.apiVersion ?? 'v1', kind: owner.kind, name: owner.name };
}

export class PolicyReports {
  readonly #api: ReportApi;
  readonly #o: ReportOptions;
  /** uid → where its finding is counted. */
  readonly #pods = new Map<string, { namespace: string; key: string }>();
  /** namespace → group key → finding. */
  readonly #groups = new Map<string, Map<string, Group>>();
  readonly #dirty = new Set<string>();
  #timer?: NodeJS.Timeout;
  #flushing?: Promise<void>;
  #noCrdUntil = 0;

  constructor(api: ReportApi, o: ReportOptions) {
    this.#api = api;
    this.#o = o;
  }

  /** A pod as a watch delivers it (added or modified). */
  observe(pod: PodForRepair): void {
    const uid = pod.metadata?.uid;
    if (!uid) return;
    const namespace = pod.metadata?.namespace ?? '';
    const w = readWouldDeny(pod.metadata?.labels, pod.metadata?.annotations);
    const counted =
      w &&
      !pod.metadata?.deletionTimestamp &&
      !this.#o.excludedNamespaces.includes(namespace) &&
      Object.hasOwn(REASONS, w.reason);
    if (!counted) {
      this.forget(uid);
      return;
    }
    const workload = reportedWorkloadOf(pod);
    const reason = w.reason as ReasonCode;
    const key = `${workload.kind}/${workload.name}/${w.level}/${reason}`;
    const was = this.#pods.get(uid);
    if (was?.key === key && was.namespace === namespace) return;
    this.forget(uid);
    const groups = this.#groups.get(namespace) ?? new Map<string, Group>();
    this.#groups.set(namespace, groups);
    let g = groups.get(key);
    if (!g) {
      const since = Math.floor((this.#o.now ?? Date.now)() / 1000);
      const message = w.message.slice(0, MAX_MESSAGE);
      g = { workload, level: w.level, reason, message, pods: 0, example: '', since, uids: new Set() };
      groups.set(key, g);
    }
    g.uids.add(uid);
    g.pods = g.uids.size;
    g.example = pod.metadata?.name ?? g.example;
    this.#pods.set(uid, { namespace, key });
    this.#touch(namespace);
  }

  /** The pod is gone, or no longer carries a record. */
  forget(uid: string): void {
    const was = this.#pods.get(uid);
    if (!was) return;
    this.#pods.delete(uid);
    const groups = this.#groups.get(was.namespace);
    const g = groups?.get(was.key);
    if (g) {
      g.uids.delete(uid);
      g.pods = g.uids.size;
      if (g.pods === 0) groups?.delete(was.key);
    }
    if (groups?.size === 0) this.#groups.delete(was.namespace);
    this.#touch(was.namespace);
  }

  /** A full list (the watch's first, or after it was interrupted): pods not in it are gone. */
  replace(pods: readonly PodForRepair[]): void {
    const sink = this.list();
    for (const p of pods) sink.add(p);
    sink.done();
  }

  /**
   * A full list delivered a pod at a time (src/kube/reflector.ts): each observed as it arrives, only its UID kept
   * until the end, when the pods it did not name are forgotten.
   */
  list(): { add(pod: PodForRepair): void; done(): void } {
    const seen = new Set<string | undefined>();
    return {
      add: (p) => {
        seen.add(p.metadata?.uid);
        this.observe(p);
      },
      done: () => {
        for (const uid of [...this.#pods.keys()]) if (!seen.has(uid)) this.forget(uid);
      },
    };
  }

  /** Findings per namespace, as the reports would say them now. */
  findings(namespace: string): WorkloadFinding[] {
    return [...(this.#groups.get(namespace)?.values() ?? [])].map(({ uids: _, ...f }) => f);
  }

  /** On becoming leader: every namespace with findings, and every report of meshgate's left from before, is due. */
  async resync(): Promise<void> {
    for (const ns of this.#groups.keys()) this.#dirty.add(ns);
    try {
      for (const ns of await this.#api.list()) this.#dirty.add(ns);
    } catch (err) {
      if (!this.#noCrd(err)) this.#o.logger?.warn({ err: (err as Error).message }, 'listing PolicyReports failed');
    }
    await this.flush();
  }

  /** Writes every namespace due (leader only); returns when done. */
  flush(): Promise<void> {
    this.#flushing ??= this.#write().finally(() => (this.#flushing = undefined));
    return this.#flushing;
  }

  stop(): void {
    clearTimeout(this.#timer);
  }

  #touch(namespace: string): void {
    this.#dirty.add(namespace);
    if (this.#timer) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void this.flush();
    }, this.#o.flushMs ?? FLUSH_MS);
    this.#timer.unref?.();
  }

  async #write(): Promise<void> {
    if (this.#o.isLeader && !this.#o.isLeader()) return;
    if ((this.#o.now ?? Date.now)() < this.#noCrdUntil) return;
    for (const namespace of [...this.#dirty]) {
      this.#dirty.delete(namespace);
      const findings = this.findings(namespace);
      try {
        if (findings.length > 0) await this.#api.apply(namespace, policyReport(namespace, findings));
        else await this.#api.remove(namespace);
        this.#o.onWrite?.(findings.length > 0 ? 'applied' : 'deleted');
      } catch (err) {
        this.#dirty.add(namespace);
        if (this.#noCrd(err)) return;
        this.#o.onWrite?.('failed');
        this.#o.logger?.warn({ err: (err as Error).message, namespace }, 'writing the PolicyReport failed');
      }
    }
  }

  /** Notes a missing CRD (and when to try again); true when that is what the error says. */
  #noCrd(err: unknown): boolean {
    if (!isNoResource(err)) return false;
    if (this.#noCrdUntil === 0)
      this.#o.logger?.warn(
        'the apiserver serves no PolicyReports (wgpolicyk8s.io/v1alpha2): audit findings are not published as ' +
          `reports; install the CRD (Kyverno's, or the wg-policy project's) — retrying every ${CRD_RETRY_MS / 60_000} min`,
      );
    this.#noCrdUntil = (this.#o.now ?? Date.now)() + CRD_RETRY_MS;
    this.#o.onWrite?.('no_crd');
    setTimeout(() => void this.flush(), CRD_RETRY_MS).unref?.();
    return true;
  }
}
