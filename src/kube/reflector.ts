/**
 * List-then-watch that keeps only a projection of each object, not the object: the callers' handlers reduce each
 * one to the few fields they need (5,000 whole Nodes, tens of KiB each once parsed, would cost hundreds of MB).
 * - Lists are paged (LIST_PAGE items) so one huge response never sits in memory at once.
 * - A watch the apiserver ends (its timeout, a restart) is resumed from the last resourceVersion seen, bookmarks
 *   included, at once; a watch that fails, or ends at once with nothing delivered, is resumed after a backoff
 *   (RETRY_MS doubling to MAX_RETRY_MS, reset once a watch delivers); a 410 Gone (the resourceVersion is too old,
 *   as an answer or an ERROR event) relists.
 * start() resolves after the first complete list, or rejects when it fails (the client has retried it already):
 * the callers decide whether that stops the process.
 */
import type { KubeClient } from './api/client.ts';
import { watch, type WatchEvent } from './api/watch.ts';
import { KubeApiError } from './errors.ts';

/** Items per LIST page: large enough to be few requests, small enough to bound one response. */
export const LIST_PAGE = 500;
/** First delay before re-watching or re-listing after a failure: the apiserver may be restarting. */
const RETRY_MS = 1000;
/** client-go's reflector backs off to 30 s. */
const MAX_RETRY_MS = 30_000;
/** A watch ended by the apiserver this soon with nothing delivered is a failure (client-go: "very short watch"). */
const SHORT_WATCH_MS = 1000;

export interface Projected {
  metadata?: { name?: string; namespace?: string; resourceVersion?: string };
}

export interface ReflectorOptions {
  client: KubeClient;
  /** Collection path, e.g. /api/v1/nodes or /api/v1/pods. */
  path: string;
  labelSelector?: string;
  /** e.g. `spec.nodeName=<node>`: the node agent's guard watches only its own node's pods. */
  fieldSelector?: string;
  replace: (items: unknown[]) => void;
  upsert: (item: unknown) => void;
  remove: (item: unknown) => void;
  onSynced?: () => void;
  onError?: (err: unknown) => void;
  /** Tests: a short server-side watch timeout, so resumption is seen within seconds. */
  watchTimeoutSeconds?: number;
}

export class Reflector {
  #o: ReflectorOptions;
  #stopped = false;
  #abort = new AbortController();
  #rv = '';
  #delay = RETRY_MS;
  /** Lists and watches made, for tests and logs. */
  readonly stats = { lists: 0, watches: 0 };

  constructor(opts: ReflectorOptions) {
    this.#o = opts;
  }

  /** Resolves after the first complete list; the watch continues in the background until stop(). */
  async start(): Promise<void> {
    await this.#list();
    this.#o.onSynced?.();
    void this.#run();
  }

  stop(): void {
    this.#stopped = true;
    this.#abort.abort();
  }

  async #list(): Promise<void> {
    const items: unknown[] = [];
    let rv = this.#rv;
    const query = { labelSelector: this.#o.labelSelector, fieldSelector: this.#o.fieldSelector };
    for await (const page of this.#o.client.pages<unknown>(this.#o.path, LIST_PAGE, query)) {
      items.push(...page.items);
      rv = page.metadata?.resourceVersion ?? rv;
    }
    this.#rv = rv;
    this.stats.lists++;
    this.#o.replace(items);
  }

  async #run(): Promise<void> {
    let relist = false;
    while (!this.#stopped) {
      try {
        if (relist) {
          await this.#list();
          relist = false;
        }
        relist = await this.#watchOnce();
        continue;
      } catch (err) {
        if (this.#stopped) return;
        if (err instanceof KubeApiError && err.code === 410) relist = true;
        this.#o.onError?.(err);
      }
      await this.#sleep(this.#delay);
      this.#delay = Math.min(MAX_RETRY_MS, this.#delay * 2);
    }
  }

  /** One watch from the last resourceVersion; true when it ended in 410 Gone (relist). */
  async #watchOnce(): Promise<boolean> {
    let gone = false;
    let failure: Error | undefined;
    let events = 0;
    const started = Date.now();
    this.stats.watches++;
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
        if (rv) this.#rv = rv;
        if (e.type === 'ADDED' || e.type === 'MODIFIED') this.#o.upsert(e.object);
        else if (e.type === 'DELETED') this.#o.remove(e.object);
      },
      {
        query: {
          resourceVersion: this.#rv,
          labelSelector: this.#o.labelSelector,
          fieldSelector: this.#o.fieldSelector,
        },
        signal: this.#abort.signal,
        timeoutSeconds: this.#o.watchTimeoutSeconds,
      },
    );
    if (failure) throw failure;
    if (!gone && events === 0 && Date.now() - started < SHORT_WATCH_MS)
      throw new Error(`watch ${this.#o.path}: ended at once without an event`);
    return gone;
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
