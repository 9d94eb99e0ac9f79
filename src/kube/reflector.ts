/**
 * List-then-watch that keeps only a projection of each object, not the object. @kubernetes/client-node's
 * ListWatch caches whole objects: 5,000 Nodes (each tens of KiB once parsed) would cost hundreds of MB,
 * while the admission path needs a few fields per node. Lists are paged (LIST_PAGE) so one huge response
 * never sits in memory at once; a watch that ends is resumed from the last resourceVersion, and a 410 Gone
 * (too old) triggers a fresh list.
 */
import { Watch, type KubeConfig } from '@kubernetes/client-node';

/** Items per LIST page: large enough to be few requests, small enough to bound one response. */
const LIST_PAGE = 500;
/** Delay before re-listing or re-watching after an error: the apiserver may be restarting. */
const RETRY_MS = 1000;

export interface Projected {
  metadata?: { name?: string; namespace?: string; resourceVersion?: string };
}

export interface ListPage {
  items: unknown[];
  metadata?: { resourceVersion?: string; _continue?: string; continue?: string };
}

export interface ReflectorOptions {
  kc: KubeConfig;
  /** Watch path, e.g. /api/v1/nodes or /api/v1/pods. */
  path: string;
  labelSelector?: string;
  list: (page: { limit: number; _continue?: string; labelSelector?: string }) => Promise<ListPage>;
  replace: (items: unknown[]) => void;
  upsert: (item: unknown) => void;
  remove: (item: unknown) => void;
  onSynced?: () => void;
  onError?: (err: unknown) => void;
}

export class Reflector {
  #o: ReflectorOptions;
  #stopped = false;
  #abort?: AbortController;
  #timer?: NodeJS.Timeout;
  #rv = '';

  constructor(opts: ReflectorOptions) {
    this.#o = opts;
  }

  /** Resolves after the first complete list; the watch continues in the background until stop(). */
  async start(): Promise<void> {
    await this.#list();
    this.#o.onSynced?.();
    void this.#watch();
  }

  async #list(): Promise<void> {
    const items: unknown[] = [];
    let cont: string | undefined;
    do {
      const page = await this.#o.list({ limit: LIST_PAGE, _continue: cont, labelSelector: this.#o.labelSelector });
      items.push(...page.items);
      cont = page.metadata?._continue ?? page.metadata?.continue;
      this.#rv = page.metadata?.resourceVersion ?? this.#rv;
    } while (cont);
    this.#o.replace(items);
  }

  #retry(relist: boolean, err?: unknown): void {
    if (this.#stopped) return;
    if (err) this.#o.onError?.(err);
    this.#timer = setTimeout(async () => {
      try {
        if (relist) await this.#list();
        await this.#watch();
      } catch (e) {
        this.#retry(true, e);
      }
    }, RETRY_MS);
  }

  async #watch(): Promise<void> {
    if (this.#stopped) return;
    let gone = false;
    const query: Record<string, string | boolean> = { allowWatchBookmarks: true, resourceVersion: this.#rv };
    if (this.#o.labelSelector) query.labelSelector = this.#o.labelSelector;
    try {
      this.#abort = await new Watch(this.#o.kc).watch(
        this.#o.path,
        query,
        (phase, obj: Projected & { code?: number }) => {
          if (phase === 'ERROR') {
            gone = obj?.code === 410;
            return;
          }
          if (obj?.metadata?.resourceVersion) this.#rv = obj.metadata.resourceVersion;
          if (phase === 'ADDED' || phase === 'MODIFIED') this.#o.upsert(obj);
          else if (phase === 'DELETED') this.#o.remove(obj);
        },
        (err) => {
          // client-node ends a watch after 30 s without events: a quiet cluster, not a failure. Resume at once.
          if (!gone && (err as Error | null)?.name === 'TimeoutError') void this.#watch();
          else this.#retry(gone, err ?? undefined);
        },
      );
    } catch (err) {
      this.#retry(true, err);
    }
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
    this.#abort?.abort();
  }
}
