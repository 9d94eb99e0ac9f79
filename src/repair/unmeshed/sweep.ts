/**
 * Finds the pods of opted-in namespaces that run without meshgate's redirect (src/repair/unmeshed/judge.ts) and evicts
 * them at a bounded rate, so their controllers recreate them through the webhook — or only reports them.
 * Which namespaces are opted in is read from meshgate's own MutatingWebhookConfiguration (each entry's
 * namespaceSelector and objectSelector, evaluated as the apiserver does: src/check/judge-namespaces.ts), never from
 * anything a pod author writes. Only pods without meshgate's label meshgate.io/redirect are listed (by selector),
 * namespace by namespace, a page at a time (src/check/list-pods.ts); the labelled ones are judged as the repair
 * controller's pod watch delivers them (labelled.ts). Only the flagged ones are kept.
 * Evictions go through the Eviction API (PodDisruptionBudgets respected: a refused one is retried later), at most
 * `maxEvictionsPerMinute`, each with a Warning Event on the pod saying why and how to restart it by hand; a pod is
 * reported (one Event per pod) when it has no controller or meshgate would refuse it as it is. Leader only.
 * Pods meshgate admitted below enforce (label meshgate.io/would-deny, in a namespace at audit or warn) are left to
 * their own Event (src/repair/notices/notice.ts): recreated, they would be admitted the same way.
 */
import { configForNamespace } from '../../config/per-namespace.ts';
import type { Logger } from 'pino';
import type { Compiled } from '../../config/compile.ts';
import type { NamespaceFacts, Read, ReadError, WebhookConfig } from '../../check/facts.ts';
import { optedInNamespaces } from '../../check/judge-namespaces.ts';
import type { PodRecord } from '../../check/facts.ts';
import { listGuardedPods } from '../../check/list-pods.ts';
import type { RepairMetrics } from '../metrics.ts';
import { SlidingLimit } from '../rate-limit.ts';
import { judgeUnmeshed, type ReportWhy, type UnmeshedAction } from './judge.ts';
import type { EventReason, ReasonCode } from '../../contract/reasons.ts';
import { errorFields, errorText } from '../../log/fields.ts';
import { WOULD_DENY_LABEL } from '../../admission/level.ts';
import { REDIRECT_LABEL } from '../../contract/names.ts';
import { guardsPod } from '../../check/judge-namespaces.ts';
import type { LabelledUnmeshed } from './labelled.ts';

export interface PodRef {
  namespace: string;
  name: string;
  uid: string;
}

export interface UnmeshedApi {
  /** meshgate's MutatingWebhookConfiguration: undefined when it does not exist. */
  webhookConfig(): Promise<Read<WebhookConfig>>;
  namespaces(): Promise<NamespaceFacts[] | ReadError>;
  pods(namespace: string, each: (p: PodRecord) => void, labelSelector?: string): Promise<ReadError | undefined>;
  /** evicted; blocked: a PodDisruptionBudget refused it (429); gone: no such pod, or another one of that name. */
  evict(pod: PodRef): Promise<'evicted' | 'blocked' | 'gone'>;
  event(pod: PodRef, type: 'Warning' | 'Normal', reason: EventReason, message: string): Promise<void>;
}

export interface UnmeshedOptions {
  cfg: Compiled;
  /** false: Events only. */
  evict: boolean;
  maxEvictionsPerMinute: number;
  dryRun: boolean;
  isLeader?: () => boolean;
  now?: () => number;
  metrics?: RepairMetrics;
  logger?: Logger;
  /** Labelled pods judged unmeshed by the pod watch; undefined: none are (tests that list everything). */
  labelled?: LabelledUnmeshed;
}

/** A PodDisruptionBudget refused an eviction: ask again after this (a replacement pod needs time to get ready). */
export const BLOCKED_RETRY_MS = 10_000;
const MINUTE_MS = 60_000;

interface Candidate extends PodRef {
  reason: ReasonCode;
  message: string;
  notBefore: number;
  blockedReported: boolean;
}

export interface SweepResult {
  /** Unmeshed pods found. */
  found: number;
  /** Of which queued for eviction. */
  queued: number;
  errors: string[];
}

export class UnmeshedPods {
  readonly #api: UnmeshedApi;
  readonly #o: UnmeshedOptions;
  readonly #limit: SlidingLimit;
  /** Pods to evict, by UID, in the order found. */
  #queue = new Map<string, Candidate>();
  /** Pods that already got their Event (only those still flagged at the last sweep are kept). */
  #reported = new Set<string>();
  #timer: NodeJS.Timeout | undefined;
  #draining: Promise<void> | undefined;
  #stopped = false;
  readonly stats = { evicted: 0, blocked: 0, reported: 0, throttled: 0 };

  constructor(api: UnmeshedApi, opts: UnmeshedOptions) {
    this.#api = api;
    this.#o = opts;
    this.#limit = new SlidingLimit(opts.maxEvictionsPerMinute, MINUTE_MS);
  }

  #now(): number {
    return (this.#o.now ?? Date.now)();
  }

  #leader(): boolean {
    return !this.#o.isLeader || this.#o.isLeader();
  }

  /** Judges every guarded pod of every opted-in namespace, then evicts what it may. */
  async sweep(): Promise<SweepResult> {
    const out: SweepResult = { found: 0, queued: 0, errors: [] };
    if (!this.#leader()) return out;
    try {
      const mutating = await this.#api.webhookConfig();
      if (mutating === undefined || 'error' in mutating) {
        out.errors.push(mutating ? mutating.error : "meshgate's MutatingWebhookConfiguration does not exist");
        return this.#failed(out);
      }
      const namespaces = await this.#api.namespaces();
      if ('error' in namespaces) return this.#failed({ ...out, errors: [namespaces.error] });
      const opted = optedInNamespaces(namespaces, mutating, undefined).filter((o) => o.mutating.length > 0);
      const below = new Set(opted.filter((o) => o.level !== 'enforce').map((o) => o.namespace));
      const optedIds = new Map(opted.map((o) => [o.namespace, o.proxyIds]));
      const queue = new Map<string, Candidate>();
      const reports: Array<[PodRef, ReportWhy, string]> = [];
      const seen = new Set<string>();
      const consider = (ref: PodRef, labels: PodRecord['labels'], a: UnmeshedAction) => {
        if (below.has(ref.namespace) && labels?.[WOULD_DENY_LABEL] !== undefined) return;
        if (a.action === 'none') return;
        const { uid } = ref;
        out.found++;
        seen.add(uid);
        if (a.action === 'evict' && this.#o.evict) {
          const prev = this.#queue.get(uid);
          queue.set(uid, {
            ...ref,
            reason: a.reason,
            message: a.message,
            notBefore: prev?.notBefore ?? 0,
            blockedReported: prev?.blockedReported ?? false,
          });
          return;
        }
        if (this.#reported.has(uid)) return;
        const why: ReportWhy = a.action === 'report' ? a.why : 'not_evicting';
        reports.push([ref, why, a.action === 'report' ? a.message : a.reportOnly]);
      };
      const judge = (p: PodRecord) => {
        if (below.has(p.namespace) && p.labels?.[WOULD_DENY_LABEL] !== undefined) return;
        // On OpenShift, the namespace's proxy IDs (read with it); elsewhere the configuration itself.
        const here = configForNamespace(this.#o.cfg, p.namespace, () => optedIds.get(p.namespace));
        const uid = (p.object as { metadata?: { uid?: string } }).metadata?.uid ?? '';
        const a = judgeUnmeshed(p, here.ok ? here.cfg : this.#o.cfg);
        consider({ namespace: p.namespace, name: p.name, uid }, p.labels, a);
      };
      const also = this.#o.labelled ? `!${REDIRECT_LABEL}` : undefined;
      out.errors.push(...(await listGuardedPods(this.#api, opted, judge, { also })));
      const optedIn = new Map(opted.map((o) => [o.namespace, o]));
      for (const f of this.#o.labelled?.flagged() ?? []) {
        const o = optedIn.get(f.namespace);
        if (o && guardsPod(o.mutating, f.labels))
          consider({ namespace: f.namespace, name: f.name, uid: f.uid }, f.labels, f.action);
      }
      this.#queue = queue;
      this.#reported = new Set([...this.#reported].filter((u) => seen.has(u)));
      out.queued = queue.size;
      this.#o.metrics?.unmeshedPods.set(out.found);
      for (const [ref, why, message] of reports) {
        if (!(await this.#call('event', () => this.#api.event(ref, 'Warning', 'MeshUnmeshedPod', message)))) continue;
        this.#reported.add(ref.uid);
        this.stats.reported++;
        this.#o.metrics?.unmeshedReported.inc({ why });
      }
      if (out.errors.length) this.#o.logger?.warn({ errors: out.errors }, 'unmeshed pod sweep incomplete');
    } catch (err) {
      // A connection failure (the reader throws for those): the next sweep tries again.
      return this.#failed({ ...out, errors: [...out.errors, errorText(err)] });
    }
    await this.drain();
    return out;
  }

  #failed(out: SweepResult): SweepResult {
    this.#o.metrics?.errors.inc({ action: 'sweep' });
    this.#o.logger?.warn({ errors: out.errors }, 'unmeshed pod sweep failed');
    return out;
  }

  /** Evicts queued pods as the rate limit allows; re-arms itself for the next free slot or retry. */
  drain(): Promise<void> {
    this.#draining ??= this.#drain().finally(() => (this.#draining = undefined));
    return this.#draining;
  }

  async #drain(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#stopped || !this.#leader()) return;
    let wakeAt = Infinity;
    for (const c of [...this.#queue.values()]) {
      const now = this.#now();
      if (c.notBefore > now) {
        wakeAt = Math.min(wakeAt, c.notBefore);
        continue;
      }
      if (!this.#limit.take(now)) {
        this.stats.throttled++;
        this.#o.metrics?.evictionsThrottled.inc();
        wakeAt = Math.min(wakeAt, this.#limit.nextFreeAt(now));
        break;
      }
      if (this.#o.dryRun) {
        this.#queue.delete(c.uid);
        if (
          !this.#reported.has(c.uid) &&
          (await this.#call('event', () =>
            this.#api.event(c, 'Warning', 'MeshUnmeshedPod', `(dry run: not evicted) ${c.message}`),
          ))
        )
          this.#reported.add(c.uid);
        continue;
      }
      const result = await this.#call('evict', () => this.#api.evict(c));
      if (result === 'evicted' || result === 'gone') this.#queue.delete(c.uid);
      if (result === 'evicted') {
        this.stats.evicted++;
        this.#o.metrics?.evicted.inc({ reason: c.reason });
        this.#o.logger?.info({ pod: `${c.namespace}/${c.name}`, reason: c.reason }, 'evicted unmeshed pod');
        await this.#call('event', () => this.#api.event(c, 'Warning', 'MeshUnmeshedEvicted', c.message));
      } else if (result !== 'gone') {
        // blocked by a PodDisruptionBudget, or the call failed: ask again later.
        c.notBefore = now + BLOCKED_RETRY_MS;
        wakeAt = Math.min(wakeAt, c.notBefore);
        if (result === 'blocked') {
          this.stats.blocked++;
          this.#o.metrics?.evictionsBlocked.inc();
          if (!c.blockedReported) {
            c.blockedReported = true;
            await this.#call('event', () =>
              this.#api.event(
                c,
                'Warning',
                'MeshUnmeshedEvictionBlocked',
                `${c.message} — a PodDisruptionBudget does not allow the eviction now; ` +
                  `retrying every ${BLOCKED_RETRY_MS / 1000} s`,
              ),
            );
          }
        }
      }
    }
    if (wakeAt !== Infinity && !this.#stopped)
      this.#timer = setTimeout(() => void this.drain(), Math.max(0, wakeAt - this.#now()));
  }

  /** Pods queued for eviction (for tests and logs). */
  queued(): PodRef[] {
    return [...this.#queue.values()].map(({ namespace, name, uid }) => ({ namespace, name, uid }));
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
  }

  async #call<T>(action: 'evict' | 'event', fn: () => Promise<T>): Promise<T | undefined> {
    try {
      return (await fn()) ?? (true as T);
    } catch (err) {
      this.#o.metrics?.errors.inc({ action });
      this.#o.logger?.error({ action, err: errorFields(err) }, 'unmeshed pod call failed');
      return undefined;
    }
  }
}
