/**
 * List-then-watch that keeps nothing itself: each object goes to the caller's handlers as it arrives, and they keep
 * only their projection of it (5,000 whole Nodes, tens of KiB each once parsed, would cost hundreds of MB; a list
 * held whole until its last page arrived cost a fresh replica 18.5 MiB per 1,000 Nodes and 33 MiB per 1,000 pods,
 * issue 32).
 * - The initial state streams (the watch-list protocol, Kubernetes ≥ 1.32 with its WatchList feature, served by
 *   1.34 by default): `watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan` makes the apiserver
 *   send every object as an ADDED event from its watch cache, then a bookmark annotated
 *   `k8s.io/initial-events-end`, and go on watching in the same response — one object parsed at a time. Where the
 *   apiserver refuses that request (400/422: the feature off), the reflector lists instead, for good: pages of
 *   LIST_PAGE, each item parsed alone as it arrives, handed over and dropped (src/kube/api/list-items.ts).
 * - A (re)list is a `ListSink` the caller opens: every object that exists is `add`ed, then `done()`; what the
 *   caller held from before and was not added is gone. A list interrupted before its end is thrown away (no done()).
 * - A watch the apiserver ends (its timeout, a restart) is resumed from the last resourceVersion seen, bookmarks
 *   included, at once; a watch that fails, or ends at once with nothing delivered, is resumed after a backoff
 *   (RETRY_MS doubling to MAX_RETRY_MS, reset once a watch delivers); a 410 Gone (the resourceVersion is too old,
 *   as an answer or an ERROR event) lists again.
 * start() resolves after the first complete list, or rejects when it fails as a call would (a refusal at once, no
 * answer after the client's attempts): the callers decide whether that stops the process.
 */
import type { KubeClient } from './api/client.ts';
import { MAX_ATTEMPTS, retryDelay } from './api/retry.ts';
import { watch, type WatchEvent } from './api/watch.ts';
import { KubeApiError, KubeTransportError } from './errors.ts';

/** Items per LIST page where the initial state cannot stream: few requests, one page's objects in memory at once. */
export const LIST_PAGE = 500;
/** The bookmark annotation that ends a watch-list's initial events (k8s.io/apimachinery metav1.InitialEventsAnnotationKey). */
export const INITIAL_EVENTS_END = 'k8s.io/initial-events-end';
/** First delay before re-watching or re-listing after a failure: the apiserver may be restarting. */
const RETRY_MS = 1000;
/** client-go's reflector backs off to 30 s. */
const MAX_RETRY_MS = 30_000;
/** A watch ended by the apiserver this soon with nothing delivered is a failure (client-go: "very short watch"). */
const SHORT_WATCH_MS = 1000;

export interface Projected {
  metadata?: {
    name?: string;
    namespace?: string;
    resourceVersion?: string;
    annotations?: Record<string, string>;
  };
}

/** One (re)list as the caller takes it: every object, then done(). */
export interface ListSink {
  add(item: unknown): void;
  done(): void;
}

export interface ReflectorOptions {
  client: KubeClient;
  /** Collection path, e.g. /api/v1/nodes or /api/v1/pods. */
  path: string;
  labelSelector?: string;
  /** e.g. `spec.nodeName=`: the apiserver sends only what matches, and a DELETED event when an object stops matching. */
  fieldSelector?: string;
  /** Opens a (re)list. */
  list: () => ListSink;
  upsert: (item: unknown) => void;
  remove: (item: unknown) => void;
  onSynced?: () => void;
  onError?: (err: unknown) => void;
  /**
   * How the initial state is read: 'auto' (watch-list, else pages), or one of them (tests, the bench; 'pages' where
   * every object must be read whole at start: the watch-list costs the apiserver 2–3 times the CPU per object,
   * src/repair/failed/watch.ts).
   */
  initial?: 'auto' | 'watch-list' | 'pages';
  /** Tests: a short server-side watch timeout, so resumption is seen within seconds. */
  watchTimeoutSeconds?: number;
}

/** A watch-list request the apiserver does not serve: its WatchList feature is off (or it predates it). */
const notServed = (err: unknown) => err instanceof KubeApiError && (err.code === 400 || err.code === 422);

export class Reflector {
  #o: ReflectorOptions;
  #stopped = false;
  #abort = new AbortController();
  #rv = '';
  #delay = RETRY_MS;
  #streams: boolean;
  #first: { resolve: () => void; reject: (err: unknown) => void } | undefined;
  /** Lists (either way) and watches made, and how the last list was read, for tests, logs and the bench. */
  readonly stats = { lists: 0, watches: 0, initial: '' as '' | 'watch-list' | 'pages' };

  constructor(opts: ReflectorOptions) {
    this.#o = opts;
    this.#streams = (opts.initial ?? 'auto') !== 'pages';
  }

  /** Resolves after the first complete list; the watch continues in the background until stop(). */
  start(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#first = { resolve, reject };
      void this.#run();
    });
  }

  stop(): void {
    this.#stopped = true;
    this.#abort.abort();
  }

  #synced(): void {
    this.stats.lists++;
    if (!this.#first) return;
    this.#first.resolve();
    this.#first = undefined;
    this.#o.onSynced?.();
  }

  async #run(): Promise<void> {
    let relist = true;
    let attempt = 0;
    while (!this.#stopped) {
      try {
        if (relist && !this.#streams) {
          await this.#listPages();
          relist = false;
        }
        relist = await this.#watchOnce(relist);
        continue;
      } catch (err) {
        if (this.#stopped) return;
        if (relist && this.#streams && notServed(err) && this.#o.initial !== 'watch-list') {
          this.#streams = false;
          continue;
        }
        if (this.#first) {
          // The first list fails as a call would: refused at once, or no answer after the client's attempts.
          const wait = retryDelay('GET', err, ++attempt, { maxAttempts: MAX_ATTEMPTS });
          if (wait === undefined || this.#stopped) {
            this.#first.reject(err);
            this.#first = undefined;
            this.stop();
            return;
          }
          await this.#sleep(wait);
          continue;
        }
        if (err instanceof KubeApiError && err.code === 410) relist = true;
        this.#o.onError?.(err);
      }
      await this.#sleep(this.#delay);
      this.#delay = Math.min(MAX_RETRY_MS, this.#delay * 2);
    }
  }

  /**
   * The initial state a page at a time (where it cannot stream), each item parsed alone as it arrives; the client
   * retries a page's request until an item of it has been handed over (a later failure lists again).
   */
  async #listPages(): Promise<void> {
    const sink = this.#o.list();
    const query = { labelSelector: this.#o.labelSelector, fieldSelector: this.#o.fieldSelector };
    const { resourceVersion } = await this.#o.client.listItems(this.#o.path, LIST_PAGE, query, (item) =>
      sink.add(item),
    );
    this.#rv = resourceVersion ?? this.#rv;
    this.stats.initial = 'pages';
    sink.done();
    this.#synced();
  }

  /**
   * One watch: from the last resourceVersion, or (`initial`) streaming the initial state first. True when it ended
   * in 410 Gone (list again).
   */
  async #watchOnce(initial: boolean): Promise<boolean> {
    let gone = false;
    let failure: Error | undefined;
    let events = 0;
    let sink = initial ? this.#o.list() : undefined;
    const started = Date.now();
    this.stats.watches++;
    const query = initial
      ? { sendInitialEvents: true, resourceVersionMatch: 'NotOlderThan', resourceVersion: this.#rv || undefined }
      : { resourceVersion: this.#rv };
    await watch<Projected & { code?: number; message?: string }>(
      this.#o.client,
      this.#o.path,
      (e: WatchEvent<Projected & { code?: number; message?: string }>) => {
        if (e.type === 'ERROR') {
          gone = e.object.code === 410;
          if (!gone) failure = new Error(`watch ${this.#o.path}: ${e.object.code} ${e.object.message ?? ''}`);
          return;
        }
        events++;
        this.#delay = RETRY_MS;
        const rv = e.object.metadata?.resourceVersion;
        // An initial event carries its object's own resourceVersion, not the stream's: the bookmark says where it is.
        if (rv && (!sink || e.type === 'BOOKMARK')) this.#rv = rv;
        if (sink) {
          if (e.type === 'ADDED' || e.type === 'MODIFIED') sink.add(e.object);
          else if (e.type === 'BOOKMARK' && e.object.metadata?.annotations?.[INITIAL_EVENTS_END] === 'true') {
            sink.done();
            sink = undefined;
            this.stats.initial = 'watch-list';
            this.#synced();
          }
          return;
        }
        if (e.type === 'ADDED' || e.type === 'MODIFIED') this.#o.upsert(e.object);
        else if (e.type === 'DELETED') this.#o.remove(e.object);
      },
      {
        query: { ...query, labelSelector: this.#o.labelSelector, fieldSelector: this.#o.fieldSelector },
        signal: this.#abort.signal,
        timeoutSeconds: this.#o.watchTimeoutSeconds,
      },
    );
    if (failure) throw failure;
    // Ended before the initial state did: that list is incomplete, so it is read again (not a 410, a new list).
    if (sink && !gone) throw new KubeTransportError(`watch ${this.#o.path}: ended before its initial events did`, true);
    if (!gone && events === 0 && Date.now() - started < SHORT_WATCH_MS)
      throw new Error(`watch ${this.#o.path}: ended at once without an event`);
    return gone || sink !== undefined;
  }

  #sleep(ms: number): Promise<void> {
    const signal = this.#abort.signal;
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal.addEventListener('abort', done, { once: true });
    });
  }
}

/**
 * A sink that builds a fresh map of projections and swaps it in at done(): the old and new projections side by side
 * for the length of a list, never whole objects. `project` returns undefined for an object not kept.
 */
export function mapSink<V>(
  key: (item: unknown) => string,
  project: (item: unknown) => V | undefined,
  swap: (next: Map<string, V>) => void,
): ListSink {
  const next = new Map<string, V>();
  return {
    add(item) {
      const v = project(item);
      if (v !== undefined) next.set(key(item), v);
    },
    done: () => swap(next),
  };
}
