/**
 * The set of directories the agent watches: the conf dir and bin dirs always, plus the per-network plugin dir of
 * every conflist (libcni ≥ 1.3 appends `<confdir>/<name>/*.conf` to its chain, src/cni/snapshot.ts), which come and
 * go with the conflists. `sync` arms a watcher for each new path and closes the ones no longer wanted; a watcher
 * follows a dir that does not exist yet (src/agent/dir-watcher.ts), so a plugin dir created later is seen at once.
 */
import type { Snapshot } from '../cni/types.ts';
import type { WatchFactory, Watcher } from './dir-watcher.ts';

export class Watches {
  readonly #fixed: readonly string[];
  readonly #factory: WatchFactory;
  readonly #onEvent: (why: string) => void;
  readonly #onError: (err: Error) => void;
  readonly #armed = new Map<string, Watcher>();

  constructor(
    fixed: readonly string[],
    factory: WatchFactory,
    onEvent: (why: string) => void,
    onError: (err: Error) => void,
  ) {
    this.#fixed = fixed;
    this.#factory = factory;
    this.#onEvent = onEvent;
    this.#onError = onError;
  }

  /** Watches the fixed dirs plus the snapshot's plugin dirs (those it could name inside the conf dir and Multus' dirs). */
  sync(snapshot?: Snapshot): void {
    const wanted = new Set(this.#fixed);
    const pluginDirs = [
      ...(snapshot?.pluginDirs ?? []),
      ...(snapshot?.extraDirs ?? []).flatMap((d) => d.pluginDirs ?? []),
    ];
    for (const d of pluginDirs) if ('path' in d && d.path !== undefined) wanted.add(d.path);
    for (const [path, w] of this.#armed) {
      if (wanted.has(path)) continue;
      w.close();
      this.#armed.delete(path);
    }
    for (const path of wanted) {
      if (!this.#armed.has(path)) this.#armed.set(path, this.#factory(path, this.#onEvent, this.#onError));
    }
  }

  /** Re-arms any watch whose directory was replaced (see DirWatcher.ensure). */
  ensure(): void {
    for (const w of this.#armed.values()) w.ensure();
  }

  close(): void {
    for (const w of this.#armed.values()) w.close();
    this.#armed.clear();
  }
}
