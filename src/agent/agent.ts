/**
 * The node agent's loop: something may have changed (a watch event, the periodic resync, a failed publish
 * to retry) → wait out the debounce window → read the conf and bin dirs → verify → publish on the Node only
 * when it does not already say exactly that (label, condition, taint, evidence minus its time).
 *
 * Why it is safe to restart or crash at any moment: the agent only ever publishes a verdict computed from the
 * files (never "unknown" while starting, nothing on shutdown), and it first reads what the Node already says,
 * so a restart on an unchanged node writes nothing and never flips verified → unverified by itself.
 *
 * Latency: an event starts the debounce window (default 100 ms); events inside it are coalesced, not extending
 * it, so a stream of writes cannot postpone the verdict. Events during a verification mark it dirty and cause
 * one more run. See test/agent/latency.test.ts for the measured figures.
 */
import { readSnapshot as readSnapshotFromDisk } from '../cni/snapshot.ts';
import type { Runtime, Snapshot, Verdict } from '../cni/types.ts';
import { verifyChain } from '../cni/verify.ts';
import { DirWatcher, type WatchFactory, type Watcher } from './dir-watcher.ts';
import { desiredState, isUpToDate, type PublishedState } from './node-state.ts';
import type { NodePublisher } from './publisher.ts';

export interface AgentConfig {
  nodeName: string;
  confDir: string;
  binDirs: readonly string[];
  pluginType: string;
  runtime: Runtime;
  maxConfNum: number;
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
}

/** pino's call shape, so a pino logger fits and tests can pass a silent one. */
export interface AgentLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface AgentDeps {
  publisher: NodePublisher;
  log: AgentLog;
  now?: () => Date;
  /** Defaults to fs.watch-based DirWatcher; tests pass a no-op one to prove the resync alone suffices. */
  watch?: WatchFactory;
  readSnapshot?: (confDir: string, binDirs: readonly string[]) => Promise<Snapshot>;
}

/** Retry delays after a failed read/publish: doubling from 1 s up to 30 s (the apiserver may be restarting). */
const RETRY_MIN_MS = 1_000;
const RETRY_MAX_MS = 30_000;

export class NodeAgent {
  readonly #config: AgentConfig;
  readonly #deps: Required<AgentDeps>;
  #watchers: Watcher[] = [];
  #published: PublishedState | undefined;
  #lastVerdict: Verdict | undefined;
  #debounce: NodeJS.Timeout | undefined;
  #retry: NodeJS.Timeout | undefined;
  #resync: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #dirty = false;
  #retryMs = RETRY_MIN_MS;
  #stopped = false;

  constructor(config: AgentConfig, deps: AgentDeps) {
    this.#config = config;
    this.#deps = { now: () => new Date(), watch: DirWatcher.create, readSnapshot: readSnapshotFromDisk, ...deps };
  }

  /** The verdict of the last verification (published or already on the Node). */
  get lastVerdict(): Verdict | undefined {
    return this.#lastVerdict;
  }

  /** Arms the watches and the resync, and runs the first verification; resolves once that has run. */
  async start(): Promise<void> {
    const { confDir, binDirs, resyncMs } = this.#config;
    const onError = (err: Error) => this.#deps.log.warn({ err: err.message }, 'watch failed; relying on resync');
    for (const dir of [confDir, ...binDirs]) this.#watchers.push(this.#deps.watch(dir, (why) => this.trigger(why), onError));
    this.#resync = setInterval(() => {
      this.#published = undefined; // re-read the Node too: someone may have edited or removed our marks
      this.trigger('resync');
    }, resyncMs);
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
    for (const w of this.#watchers) w.close();
    for (const t of [this.#debounce, this.#retry]) clearTimeout(t);
    clearInterval(this.#resync);
    await this.#running;
  }

  async #run(why: string): Promise<void> {
    this.#debounce = undefined;
    this.#dirty = false;
    const run = this.#reconcile(why);
    this.#running = run;
    await run;
    this.#running = undefined;
    if (this.#dirty) this.trigger('changed during verification');
  }

  async #reconcile(why: string): Promise<void> {
    const { nodeName, confDir, binDirs, taintUnverified } = this.#config;
    const { publisher, log } = this.#deps;
    try {
      for (const w of this.#watchers) w.ensure();
      const snapshot = await this.#deps.readSnapshot(confDir, binDirs);
      const verdict = verifyChain(snapshot, { ...this.#config, now: this.#deps.now });
      this.#lastVerdict = verdict;
      this.#published ??= await publisher.read(nodeName);
      if (!isUpToDate(this.#published, verdict, taintUnverified)) {
        await publisher.publish(nodeName, verdict, taintUnverified);
        this.#published = desiredState(verdict, taintUnverified);
        log.info({ why, verified: verdict.verified, reason: verdict.reason, file: verdict.evidence.file }, verdict.message);
      }
      this.#retryMs = RETRY_MIN_MS;
    } catch (err) {
      this.#published = undefined; // we do not know what the Node says any more: re-read before the next write
      log.error({ why, err: (err as Error).message, retryInMs: this.#retryMs }, 'verification not published; will retry');
      if (!this.#stopped) {
        clearTimeout(this.#retry);
        this.#retry = setTimeout(() => this.trigger('retry'), this.#retryMs);
        this.#retryMs = Math.min(this.#retryMs * 2, RETRY_MAX_MS);
      }
    }
  }
}
