/**
 * The node agent's loop: something may have changed (a watch event, the periodic resync, a failed publish
 * to retry) → wait out the debounce window → read the conf and bin dirs → verify → publish on the Node only
 * when it does not already say exactly that (label, condition, taint, evidence minus its time).
 *
 * Why it is safe to restart or crash at any moment: the agent only ever publishes a verdict computed from the
 * files (never "unknown" while starting, nothing on shutdown), and it first reads what the Node already says,
 * so a restart on an unchanged node writes nothing and never flips verified → unverified by itself.
 *
 * Quarantine (src/node/quarantine.ts): while the repair controller's mark is on the Node, the agent publishes its
 * verified verdict as withdrawn (condition False `node_quarantined`, label "false", the withdrawal's taint kept), and
 * re-reads the Node every `quarantineRecheckMs` instead of once per resync, so it publishes its own verdict again
 * soon after the mark is removed.
 *
 * Which libcni line reads the files (src/cni/libcni-line.ts): the one of the runtime its Node reports
 * (`status.nodeInfo.containerRuntimeVersion`, read with the Node on start, on every resync and before a heartbeat:
 * a runtime upgraded in place is judged by its new line within one resync), unless --libcni names one. Until the
 * Node has been read, or when its runtime is not a known release, every line must agree (the first check of a
 * start may therefore differ from what is published). The evidence records the line and the version.
 *
 * Latency: an event starts the debounce window (default 100 ms); events inside it are coalesced, not extending
 * it, so a stream of writes cannot postpone the verdict. Events during a verification mark it dirty and cause
 * one more run. See test/agent/latency.test.ts for the measured figures.
 */
import { readSnapshot as readSnapshotFromDisk } from '../cni/snapshot.ts';
import type { LibcniLine, MultusOptions, Runtime, Snapshot, ChainVerdict } from '../cni/types.ts';
import type { RedirectExpectations } from '../cni/plugin-config.ts';
import { DirWatcher, type WatchFactory } from './dir-watcher.ts';
import { judgeSnapshot } from './judge.ts';
import { type AmbientCheckConfig, readAmbientFacts } from './ambient-facts.ts';
import type { AmbientFacts } from '../cni/ambient.ts';
import { Watches } from './watches.ts';
import { desiredState, isUpToDate, type PublishedState } from './node-state.ts';
import { readMark, underQuarantine, wantsTaint } from '../node/quarantine.ts';
import type { NodePublisher } from './publisher.ts';
import { errorFields, errorText } from '../log/fields.ts';

export interface AgentConfig {
  nodeName: string;
  confDir: string;
  binDirs: readonly string[];
  pluginType: string;
  runtime: Runtime;
  /** --libcni: a line, or 'auto' (the line of the runtime the Node reports; every line when unknown). */
  libcni: LibcniLine | 'auto';
  maxConfNum: number;
  /** Multus' dirs read and watched besides the conf dir (--multus-dir); empty: none. */
  multusDirs?: readonly string[];
  /** How to follow Multus: path aliases and the OpenShift model's network (src/cni/multus.ts). */
  multus?: MultusOptions;
  /**
   * Periodic re-verification and Node re-read, in case an event was missed or someone edited the Node. Default
   * 5 min: events are rarely lost, and this bounds the background cost to one dir read and one GET per node.
   */
  resyncMs: number;
  /**
   * Coalescing window after an event. Default 100 ms: installers write then rename, or rewrite several files,
   * within a few ms; 100 ms folds such a burst into one verification and still leaves most of the 1 s budget.
   */
  debounceMs: number;
  taintUnverified: boolean;
  /** The mesh profile's ports and proxy UID (from --config/--mesh): the plugin's own config must match them. */
  expect?: RedirectExpectations;
  /** While the Node carries a quarantine mark, re-read it this often (default QUARANTINE_RECHECK_MS). */
  quarantineRecheckMs?: number;
  /** Istio ambient (config ambient.enabled): also check istio-cni's node agent and ztunnel (src/cni/ambient.ts). */
  ambient?: AmbientCheckConfig;
}

/** pino's call shape, so a pino logger fits and tests can pass a silent one. */
export interface AgentLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** The steps of one reconcile that can fail: reading the CNI dirs, then the Node, then writing to it. */
export type AgentStep = 'read_files' | 'read_node' | 'publish' | 'heartbeat';

/**
 * What the agent did, as it happens: src/agent/metrics.ts turns it into Prometheus metrics. Called synchronously
 * inside the loop; implementations must be cheap and must not throw.
 */
export interface AgentObserver {
  /** The files were read and judged (whether or not the Node needed a write). */
  checked(verdict: ChainVerdict): void;
  /** The Node was changed to say `verdict`. */
  published(verdict: ChainVerdict): void;
  /** An unchanged verdict was re-stamped (lastHeartbeatTime). */
  heartbeat(): void;
  failed(step: AgentStep, err: Error): void;
}

/** Where the loop stands, for the probes (src/agent/health.ts). Times are ms since the epoch, 0 = not yet. */
export interface AgentStatus {
  /** When the last reconcile ended, successfully or not. */
  lastAttemptAt: number;
  /** When the Node was last known to say the current verdict (published, re-stamped or found up to date). */
  lastSyncedAt: number;
  /** When a reconcile still running started; undefined when none runs. */
  runningSince: number | undefined;
  /** Why the last reconcile failed; undefined when it succeeded. */
  lastError: { step: AgentStep; message: string } | undefined;
  resyncMs: number;
}

export interface AgentDeps {
  publisher: NodePublisher;
  log: AgentLog;
  observer?: AgentObserver;
  now?: () => Date;
  /** Defaults to fs.watch-based DirWatcher; tests pass a no-op one to prove the resync alone suffices. */
  watch?: WatchFactory;
  readSnapshot?: (confDir: string, binDirs: readonly string[], extraDirs?: readonly string[]) => Promise<Snapshot>;
  /** Reads the ambient components (default readAmbientFacts); tests pass their own. */
  readAmbient?: (c: AmbientCheckConfig) => Promise<AmbientFacts>;
}

/** Retry delays after a failed read/publish: doubling from 1 s up to 30 s (the apiserver may be restarting). */
const RETRY_MIN_MS = 1_000;
const RETRY_MAX_MS = 30_000;
/**
 * An unchanged verdict is re-stamped once per resync period: a resync that fires a little early (timers drift) must
 * still heartbeat, so anything past 90 % of the period counts.
 */
const HEARTBEAT_SHARE = 0.9;
/**
 * Re-read a quarantined Node every 30 s: giving a node back waits for this at most, and only the few quarantined
 * nodes pay one GET and one directory read each time.
 */
export const QUARANTINE_RECHECK_MS = 30_000;

const NO_OBSERVER: AgentObserver = { checked() {}, published() {}, heartbeat() {}, failed() {} };

export class NodeAgent {
  readonly #config: AgentConfig;
  readonly #deps: Required<AgentDeps>;
  #watches: Watches | undefined;
  #published: PublishedState | undefined;
  /** The Node's containerRuntimeVersion as last read (undefined until the first read). */
  #runtimeVersion: string | undefined;
  #lastVerdict: ChainVerdict | undefined;
  #debounce: NodeJS.Timeout | undefined;
  #retry: NodeJS.Timeout | undefined;
  #resync: NodeJS.Timeout | undefined;
  #ambientPoll: NodeJS.Timeout | undefined;
  /** The ambient components as last read (ambient checks only). */
  #ambientFacts: AmbientFacts | undefined;
  #recheck: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #dirty = false;
  #retryMs = RETRY_MIN_MS;
  #stopped = false;
  /** When the Node last heard from this agent (publish or heartbeat); 0 = not since start. */
  #lastWriteAt = 0;
  #lastAttemptAt = 0;
  #lastSyncedAt = 0;
  #runningSince: number | undefined;
  #lastError: AgentStatus['lastError'];

  constructor(config: AgentConfig, deps: AgentDeps) {
    this.#config = config;
    this.#deps = {
      now: () => new Date(),
      watch: DirWatcher.create,
      readSnapshot: readSnapshotFromDisk,
      readAmbient: readAmbientFacts,
      observer: NO_OBSERVER,
      ...deps,
    };
  }

  status(): AgentStatus {
    return {
      lastAttemptAt: this.#lastAttemptAt,
      lastSyncedAt: this.#lastSyncedAt,
      runningSince: this.#runningSince,
      lastError: this.#lastError,
      resyncMs: this.#config.resyncMs,
    };
  }

  /** The verdict of the last verification (published or already on the Node). */
  get lastVerdict(): ChainVerdict | undefined {
    return this.#lastVerdict;
  }

  /** Arms the watches and the resync, and runs the first verification; resolves once that has run. */
  async start(): Promise<void> {
    const { confDir, binDirs, resyncMs, multusDirs = [] } = this.#config;
    const onError = (err: Error) => this.#deps.log.warn({ err: errorFields(err) }, 'watch failed; relying on resync');
    const fixed = [confDir, ...binDirs, ...multusDirs];
    this.#watches = new Watches(fixed, this.#deps.watch, (why) => this.trigger(why), onError);
    this.#watches.sync();
    this.#resync = setInterval(() => {
      this.#published = undefined; // re-read the Node too: someone may have edited or removed our marks
      this.trigger('resync');
    }, resyncMs);
    // A component that dies sends no file event: poll them (each poll publishes only a changed verdict).
    const ambient = this.#config.ambient;
    if (ambient) this.#ambientPoll = setInterval(() => this.trigger('ambient poll'), ambient.pollMs);
    await this.#run('start');
  }

  /** Something may have changed: verify after the debounce window (coalescing triggers within it). */
  trigger(why: string): void {
    if (this.#stopped) return;
    if (this.#running) {
      this.#dirty = true;
      return;
    }
    this.#debounce ??= setTimeout(() => void this.#run(why), this.#config.debounceMs);
  }

  /** Stops watching and waits for a verification in flight. Publishes nothing. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#watches?.close();
    for (const t of [this.#debounce, this.#retry, this.#recheck]) clearTimeout(t);
    clearInterval(this.#resync);
    clearInterval(this.#ambientPoll);
    await this.#running;
  }

  /** While quarantined, read the Node again soon: the mark's removal sends the agent no event. */
  #armRecheck(): void {
    clearTimeout(this.#recheck);
    this.#recheck = undefined;
    if (this.#stopped || this.#published?.quarantine === undefined) return;
    this.#recheck = setTimeout(() => {
      this.#published = undefined;
      this.trigger('quarantine recheck');
    }, this.#config.quarantineRecheckMs ?? QUARANTINE_RECHECK_MS);
  }

  async #run(why: string): Promise<void> {
    this.#debounce = undefined;
    this.#dirty = false;
    this.#runningSince = this.#deps.now().getTime();
    const run = this.#reconcile(why);
    this.#running = run;
    await run;
    this.#running = undefined;
    this.#runningSince = undefined;
    this.#lastAttemptAt = this.#deps.now().getTime();
    if (this.#dirty) this.trigger('changed during verification');
  }

  /** The verdict on a snapshot under the runtime version last read; recorded and reported as checked. */
  #judge(snapshot: Snapshot): ChainVerdict {
    const verdict = judgeSnapshot(snapshot, this.#config, this.#runtimeVersion, this.#deps.now, this.#ambientFacts);
    this.#lastVerdict = verdict;
    this.#deps.observer.checked(verdict);
    return verdict;
  }

  async #reconcile(why: string): Promise<void> {
    const { nodeName, confDir, binDirs, taintUnverified, multusDirs = [] } = this.#config;
    const { publisher, log, observer } = this.#deps;
    let step: AgentStep = 'read_files';
    try {
      this.#watches?.ensure();
      const snapshot = await this.#deps.readSnapshot(confDir, binDirs, multusDirs);
      this.#watches?.sync(snapshot);
      const ambient = this.#config.ambient;
      if (ambient) this.#ambientFacts = await this.#deps.readAmbient(ambient);
      let verdict = this.#judge(snapshot);
      step = 'read_node';
      const heartbeatDue = this.#deps.now().getTime() - this.#lastWriteAt >= this.#config.resyncMs * HEARTBEAT_SHARE;
      // A heartbeat vouches for what the Node says: read it fresh first, so the agent never refreshes a condition it
      // has not seen (the repair controller's node_quarantined one, written since the last read).
      if (heartbeatDue) this.#published = undefined;
      if (!this.#published) {
        this.#published = await publisher.read(nodeName);
        if (this.#published.runtimeVersion !== this.#runtimeVersion) {
          this.#runtimeVersion = this.#published.runtimeVersion;
          verdict = this.#judge(snapshot);
        }
      }
      const mark = readMark(this.#published.quarantine);
      const wanted = underQuarantine(verdict, mark);
      const taint = wantsTaint(taintUnverified, mark);
      if (!isUpToDate(this.#published, wanted, taint)) {
        step = 'publish';
        // The publisher re-reads the Node and applies the mark it finds there, which may be newer than ours.
        this.#published = (await publisher.publish(nodeName, verdict, taintUnverified)) ?? {
          ...desiredState(wanted, taint),
          quarantine: this.#published.quarantine,
        };
        const shown = underQuarantine(verdict, readMark(this.#published.quarantine));
        log.info(
          {
            why,
            verified: shown.verified,
            reason: shown.reason,
            agentReason: verdict.reason,
            file: verdict.evidence.file,
          },
          shown.message,
        );
        this.#lastWriteAt = this.#deps.now().getTime();
        observer.published(verdict);
      } else if (heartbeatDue) {
        // Unchanged, but alive: readers bound a verdict's age by its heartbeat (cni.maxVerdictAgeSeconds). On the
        // node's Lease, so the Node is written only when its verdict changes; while quarantined on the condition,
        // where the repair controller looks for the agent's re-verification (src/repair/quarantine/decide.ts).
        step = 'heartbeat';
        const onNode = this.#published.quarantine !== undefined;
        await publisher.heartbeat(nodeName, { onNode, nodeUid: this.#published.uid });
        this.#lastWriteAt = this.#deps.now().getTime();
        observer.heartbeat();
      }
      this.#retryMs = RETRY_MIN_MS;
      this.#armRecheck();
      this.#lastSyncedAt = this.#deps.now().getTime();
      this.#lastError = undefined;
    } catch (err) {
      this.#lastError = { step, message: errorText(err) };
      observer.failed(step, err as Error);
      this.#published = undefined; // we do not know what the Node says any more: re-read before the next write
      log.error({ why, err: errorFields(err), retryInMs: this.#retryMs }, 'verification not published; will retry');
      if (!this.#stopped) {
        clearTimeout(this.#retry);
        this.#retry = setTimeout(() => this.trigger('retry'), this.#retryMs);
        this.#retryMs = Math.min(this.#retryMs * 2, RETRY_MAX_MS);
      }
    }
  }
}
