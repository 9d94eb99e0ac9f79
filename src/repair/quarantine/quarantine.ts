/**
 * Node quarantine: when redirect validation fails for `threshold` distinct pods on one node within `windowMs`, the
 * repair controller withdraws the node's verification — the quarantine mark with the failing pods, label "false",
 * condition MeshCNIVerified False (`node_quarantined`), optionally the unverified taint, and a Warning Event on the
 * Node — so the webhook refuses CNI pods there and the scheduler puts them elsewhere. Deleting failed pods alone
 * only lets the scheduler pick the same node again, for ever.
 * The node is given back (the mark removed; its agent then publishes its own verdict again) only as
 * src/repair/quarantine/decide.ts says: after its hold, a fresh agent verdict, and a probe pod that passed.
 * Failures are counted on every replica; only the leader acts (reads and writes the API). One node is handled at a
 * time per node; API failures are counted and retried at the next tick, never thrown.
 */
import type { Logger } from 'pino';
import { describeMark, type QuarantineHistory, type QuarantineMark } from '../../node/quarantine.ts';
import type { ObservedFailure } from '../failed/controller.ts';
import { FailureWindow } from '../failed/failure-window.ts';
import { extendedHold, failedProbeHold, withdrawalHold, type Hold, type HoldOffOptions } from '../failed/hold-off.ts';
import type { RepairMetrics } from '../metrics.ts';
import type { NodeView } from './node-view.ts';
import { decideQuarantine, type ProbeView, type QuarantineStep } from './decide.ts';
import { errorFields } from '../../log/fields.ts';
import type { EventReason } from '../../contract/reasons.ts';

export interface QuarantineApi {
  readNode(name: string): Promise<NodeView | undefined>;
  /** Writes the mark and the history, label "false", the taint when the mark says so, then the condition. */
  withdraw(node: NodeView, mark: QuarantineMark, history: QuarantineHistory): Promise<NodeView>;
  /** Removes the mark (the node agent gives the verdict back) and writes the history. */
  release(node: NodeView, history: QuarantineHistory): Promise<NodeView>;
  nodeEvent(node: NodeView, type: 'Normal' | 'Warning', reason: EventReason, message: string): Promise<void>;
  readProbe(node: string): Promise<ProbeView | undefined>;
  createProbe(node: string): Promise<void>;
  deleteProbe(node: string): Promise<void>;
}

export interface QuarantineOptions {
  /** Distinct failed pods on one node within the window that withdraw it (default 3). */
  threshold: number;
  /** default 10 min */
  windowMs: number;
  holdOff: HoldOffOptions;
  /** Also add the unverified taint (keeps every pod without a toleration off the node). */
  taint: boolean;
  probeTimeoutMs: number;
  /** Events only: nothing is withdrawn. */
  dryRun: boolean;
  isLeader?: () => boolean;
  now?: () => number;
  metrics?: RepairMetrics;
  logger?: Logger;
}

const iso = (ms: number) => new Date(ms).toISOString();

type Action = 'read_node' | 'withdraw' | 'release' | 'probe' | 'event';

export class NodeQuarantine {
  readonly #api: QuarantineApi;
  readonly #o: QuarantineOptions;
  readonly #window: FailureWindow;
  /** Withdrawn nodes (carrying a mark), as the node watch and our own writes last showed them. */
  readonly #withdrawn = new Map<string, NodeView>();
  readonly #busy = new Map<string, Promise<void>>();
  readonly #again = new Set<string>();
  /** Nodes a dry run already reported as "would withdraw". */
  readonly #dryRunReported = new Set<string>();

  constructor(api: QuarantineApi, opts: QuarantineOptions) {
    this.#api = api;
    this.#o = opts;
    this.#window = new FailureWindow(opts.windowMs);
  }

  #now(): number {
    return (this.#o.now ?? Date.now)();
  }

  /** A validation failure from the pod watch (every replica). */
  recordFailure(f: ObservedFailure): Promise<void> {
    if (!this.#window.add(f, this.#now())) return Promise.resolve();
    return this.#act(f.node);
  }

  /**
   * A Node as the watch of unverified nodes delivers it. An event older than what we wrote ourselves (numeric
   * resourceVersions, as etcd issues them) is ignored, so a late event cannot bring back an outdated mark.
   */
  upsertNode(v: NodeView): void {
    const known = this.#withdrawn.get(v.name);
    if (known && older(v.resourceVersion, known.resourceVersion)) return;
    if (v.mark) this.#withdrawn.set(v.name, v);
    else this.#withdrawn.delete(v.name);
    this.#o.metrics?.nodesWithdrawn.set(this.#withdrawn.size);
  }

  /** The watch's full list: every withdrawn node there is. */
  replaceNodes(views: NodeView[]): void {
    this.#withdrawn.clear();
    for (const v of views) if (v.mark) this.#withdrawn.set(v.name, v);
    this.#o.metrics?.nodesWithdrawn.set(this.#withdrawn.size);
  }

  removeNode(name: string): void {
    this.#withdrawn.delete(name);
    this.#o.metrics?.nodesWithdrawn.set(this.#withdrawn.size);
  }

  /** Leader: every withdrawn node, and every node whose failures reached the threshold. */
  async tick(): Promise<void> {
    const names = new Set([
      ...this.#withdrawn.keys(),
      ...this.#window.nodesWithAtLeast(this.#o.threshold, this.#now()),
    ]);
    for (const name of names) await this.#act(name);
  }

  /** One step for one node at a time; a request while it runs makes it run once more. */
  async #act(name: string): Promise<void> {
    const running = this.#busy.get(name);
    if (running) {
      this.#again.add(name);
      return running;
    }
    const run = (async () => {
      do {
        this.#again.delete(name);
        await this.#step(name);
      } while (this.#again.has(name));
    })().finally(() => this.#busy.delete(name));
    this.#busy.set(name, run);
    return run;
  }

  async #step(name: string): Promise<void> {
    if (this.#o.isLeader && !this.#o.isLeader()) return;
    const now = this.#now();
    let view = this.#withdrawn.get(name);
    if (!view) {
      if (this.#window.recent(name, now).length < this.#o.threshold) return;
      view = await this.#call('read_node', () => this.#api.readNode(name));
      if (!view) return;
      if (view.mark) this.upsertNode(view);
    }
    if (!view.mark) {
      // Failures a past withdrawal already answered never count again.
      const fresh = this.#window.recent(name, now, view.history.clearedThrough);
      if (fresh.length >= this.#o.threshold) await this.#withdraw(view, fresh, now);
      return;
    }
    const mark = view.mark.ok ? view.mark.mark : undefined;
    if (mark) {
      const fresh = this.#window.recent(name, now, Date.parse(mark.lastFailureAt));
      if (fresh.length > 0) return this.#extend(view, mark, fresh, now);
    }
    const probe = await this.#call('probe', () => this.#api.readProbe(name));
    const step = decideQuarantine(view, probe ?? undefined, now, { probeTimeoutMs: this.#o.probeTimeoutMs });
    await this.#apply(view, step, now);
  }

  async #apply(view: NodeView, step: QuarantineStep, now: number): Promise<void> {
    const m = this.#o.metrics;
    const mark = view.mark?.ok ? view.mark.mark : undefined;
    this.#o.logger?.debug({ node: view.name, step }, 'node quarantine step');
    // A dry run writes nothing and starts no probe: only #withdraw reports, once per node, what it would do.
    if (this.#o.dryRun) return;
    switch (step.do) {
      case 'rewrite_mark':
        return this.#withdraw(view, this.#window.recent(view.name, now), now);
      case 'reassert':
        if (mark) await this.#write(view, mark, view.history);
        return;
      case 'create_probe':
        if (await this.#call('probe', () => this.#api.createProbe(view.name).then(() => true))) {
          m?.nodeProbes.inc({ result: 'started' });
          await this.#event(
            view,
            'Normal',
            'NodeProbeStarted',
            'the node agent re-verified this node after its validation failures: ' +
              'a probe pod now checks that the runtime really redirects pods here',
          );
        }
        return;
      case 'cancel_probe':
        m?.nodeProbes.inc({ result: 'cancelled' });
        await this.#call('probe', () => this.#api.deleteProbe(view.name));
        return;
      case 'release': {
        m?.nodeProbes.inc({ result: 'passed' });
        await this.#call('probe', () => this.#api.deleteProbe(view.name));
        if (this.#o.dryRun || !mark) return;
        const history = {
          withdrawals: view.history.withdrawals,
          clearedThrough: Math.max(Date.parse(mark.lastFailureAt), view.history.clearedThrough ?? 0),
        };
        const written = await this.#call('release', () => this.#api.release(view, history));
        if (!written) return;
        this.#withdrawn.delete(view.name);
        m?.nodesWithdrawn.set(this.#withdrawn.size);
        m?.nodeRestorations.inc();
        const held = Math.round((now - Date.parse(mark.since)) / 1000);
        this.#o.logger?.info({ node: view.name, withdrawnSeconds: held }, 'node verification given back');
        await this.#event(
          view,
          'Normal',
          'NodeVerdictRestored',
          'a probe pod passed redirect validation on this node after its node agent re-verified it: ' +
            `the verification withdrawn at ${mark.since} (${mark.failureCount} failed pods) ` +
            'is given back to the node agent',
        );
        return;
      }
      case 'probe_failed': {
        m?.nodeProbes.inc({ result: 'failed' });
        await this.#call('probe', () => this.#api.deleteProbe(view.name));
        if (!mark) return;
        const failure = { pod: `probe on ${view.name}`, reason: step.reason, at: iso(now) };
        const next = {
          ...this.#held(mark, failedProbeHold(mark, now, this.#o.holdOff)),
          lastFailureAt: iso(now),
          failureCount: mark.failureCount + 1,
          failures: [...mark.failures, failure],
        };
        if (await this.#write(view, next, view.history)) {
          await this.#event(
            view,
            'Warning',
            'NodeProbeFailed',
            `the probe pod failed redirect validation on this node (${step.reason}` +
              `${step.detail ? `: ${step.detail}` : ''}); ` +
              `it stays withdrawn until ${next.holdUntil}`,
          );
        }
        return;
      }
      case 'probe_inconclusive': {
        m?.nodeProbes.inc({ result: 'inconclusive' });
        await this.#call('probe', () => this.#api.deleteProbe(view.name));
        if (!mark) return;
        const next = this.#held(mark, extendedHold(mark, now, this.#o.holdOff));
        if (await this.#write(view, next, view.history)) {
          await this.#event(
            view,
            'Warning',
            'NodeProbeInconclusive',
            `the probe pod proved nothing (${step.detail}); ` +
              `the node stays withdrawn and is probed again after ${next.holdUntil}`,
          );
        }
        return;
      }
      default:
        return; // none, hold, await_agent, wait_probe: time or another component must act first
    }
  }

  #held(mark: QuarantineMark, h: Hold): QuarantineMark {
    return { ...mark, level: h.level, holdUntil: iso(h.holdUntil), hold: h.hold };
  }

  async #withdraw(view: NodeView, fresh: ObservedFailure[], now: number): Promise<void> {
    const h = withdrawalHold(view.history.withdrawals, now, this.#o.holdOff);
    const last = fresh.reduce((t, f) => Math.max(t, f.at), 0) || now;
    const mark: QuarantineMark = {
      since: iso(now),
      lastFailureAt: iso(last),
      holdUntil: iso(h.holdUntil),
      hold: h.hold,
      level: h.level,
      taint: this.#o.taint,
      failureCount: fresh.length,
      failures: fresh.map((f) => ({ pod: f.pod, reason: f.reason, at: iso(f.at) })),
    };
    const text = describeMark({ ok: true, mark });
    if (this.#o.dryRun) {
      if (this.#dryRunReported.has(view.name)) return;
      this.#dryRunReported.add(view.name);
      await this.#event(view, 'Warning', 'NodeVerdictWithdrawn', `(dry run: not withdrawn) ${text}`);
      return;
    }
    if (!(await this.#write(view, mark, { withdrawals: h.withdrawals, clearedThrough: view.history.clearedThrough })))
      return;
    this.#o.metrics?.nodeWithdrawals.inc({ hold: h.hold });
    this.#o.logger?.warn(
      { node: view.name, failures: fresh.length, holdUntil: mark.holdUntil, hold: h.hold, level: h.level },
      'node verification withdrawn',
    );
    await this.#event(view, 'Warning', 'NodeVerdictWithdrawn', text);
  }

  async #extend(view: NodeView, mark: QuarantineMark, fresh: ObservedFailure[], now: number): Promise<void> {
    const last = fresh.reduce((t, f) => Math.max(t, f.at), 0);
    const next: QuarantineMark = {
      ...this.#held(mark, extendedHold(mark, now, this.#o.holdOff)),
      lastFailureAt: iso(Math.max(last, Date.parse(mark.lastFailureAt))),
      failureCount: mark.failureCount + fresh.length,
      failures: [...mark.failures, ...fresh.map((f) => ({ pod: f.pod, reason: f.reason, at: iso(f.at) }))],
    };
    if (this.#o.dryRun || !(await this.#write(view, next, view.history))) return;
    await this.#event(
      view,
      'Warning',
      'NodeQuarantineExtended',
      'redirect validation failed again on this withdrawn node ' +
        `(${fresh.map((f) => `${f.pod}: ${f.reason}`).join(', ')}); ` +
        `it stays withdrawn until ${next.holdUntil} and needs a new node agent verdict and probe`,
    );
  }

  /** Writes a mark; the Node as written becomes our view of it. */
  async #write(view: NodeView, mark: QuarantineMark, history: QuarantineHistory): Promise<boolean> {
    if (this.#o.dryRun) return false;
    const written = await this.#call('withdraw', () => this.#api.withdraw(view, mark, history));
    if (!written) return false;
    this.#withdrawn.set(view.name, written);
    this.#o.metrics?.nodesWithdrawn.set(this.#withdrawn.size);
    return true;
  }

  async #event(view: NodeView, type: 'Normal' | 'Warning', reason: EventReason, message: string): Promise<void> {
    await this.#call('event', () => this.#api.nodeEvent(view, type, reason, message).then(() => true));
  }

  /** Runs an API call; a failure is logged and counted, never thrown (retried at the next tick). */
  async #call<T>(action: Action, fn: () => Promise<T>): Promise<T | undefined> {
    try {
      return await fn();
    } catch (err) {
      this.#o.metrics?.errors.inc({ action });
      this.#o.logger?.error({ action, err: errorFields(err) }, 'node quarantine call failed');
      return undefined;
    }
  }
}

/** Whether resourceVersion `a` is older than `b`, when both are the integers etcd issues; unknown otherwise (false). */
function older(a: string | undefined, b: string | undefined): boolean {
  if (!a || !b || !/^\d+$/.test(a) || !/^\d+$/.test(b)) return false;
  return BigInt(a) < BigInt(b);
}
