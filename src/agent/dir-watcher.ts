/**
 * Watches one directory for anything that can change the runtime's choice: a file created, written, renamed,
 * moved in or deleted (inotify through fs.watch). It also follows the directory itself, because installers
 * replace it and it may not exist yet when the agent starts:
 *
 * - The directory's nearest existing ancestor is watched too, for events naming the next path component
 *   (the directory being created, moved in, moved away or deleted).
 * - `ensure()` compares the directory's identity (dev:ino) with the one the watch was armed on and re-arms when
 *   it changed or disappeared. The agent calls it before every verification and on every resync, so a missed
 *   or coalesced event costs at most one resync period.
 *
 * The watcher only says "something may have changed"; it never interprets events (inotify coalesces and
 * reorders them): the agent re-reads the whole directory each time.
 */
import { type FSWatcher, statSync, watch } from 'node:fs';
import { basename, dirname, relative, sep } from 'node:path';

export interface Watcher {
  ensure(): void;
  close(): void;
}

export type WatchFactory = (dir: string, onEvent: (why: string) => void, onError: (err: Error) => void) => Watcher;

/** Re-arming loops at most this often when the directory keeps appearing and vanishing mid-arm. */
const MAX_ARM_ATTEMPTS = 5;

export class DirWatcher implements Watcher {
  readonly #dir: string;
  readonly #onEvent: (why: string) => void;
  readonly #onError: (err: Error) => void;
  #dirWatch: FSWatcher | undefined;
  #ancestorWatch: FSWatcher | undefined;
  #identity: string | undefined;
  #closed = false;

  constructor(dir: string, onEvent: (why: string) => void, onError: (err: Error) => void) {
    this.#dir = dir;
    this.#onEvent = onEvent;
    this.#onError = onError;
  }

  static create: WatchFactory = (dir, onEvent, onError) => {
    const w = new DirWatcher(dir, onEvent, onError);
    w.ensure();
    return w;
  };

  /** Arms (or re-arms) the watches when the directory's identity is not the one being watched. */
  ensure(): void {
    if (this.#closed) return;
    for (let attempt = 0; attempt < MAX_ARM_ATTEMPTS; attempt++) {
      const identity = identityOf(this.#dir);
      if (identity !== undefined && identity === this.#identity && this.#dirWatch && this.#ancestorWatch) return;
      this.#unwatch();
      if (identity !== undefined) {
        this.#dirWatch = this.#watch(this.#dir, (_event, name) => this.#onEvent(`${this.#dir}: ${name ?? '?'}`));
        this.#identity = this.#dirWatch ? identity : undefined;
      }
      const ancestor = identity !== undefined ? dirname(this.#dir) : nearestExistingAncestor(this.#dir);
      const next = relative(ancestor, this.#dir).split(sep)[0] || basename(this.#dir);
      this.#ancestorWatch = this.#watch(ancestor, (_event, name) => {
        if (name === null || name === next) this.#onEvent(`${ancestor}: ${name ?? '?'}`);
      });
      // Stable only if the directory did not appear/vanish/change while we armed: otherwise go round again.
      if (identityOf(this.#dir) === identity) return;
    }
  }

  close(): void {
    this.#closed = true;
    this.#unwatch();
  }

  #watch(path: string, listener: (event: string, name: string | null) => void): FSWatcher | undefined {
    try {
      const w = watch(path, { persistent: true }, (event, name) =>
        listener(event, name === null ? null : String(name)),
      );
      w.on('error', (err) => {
        // The watched inode is gone or unwatchable: forget it so the next ensure() re-arms, and ask for one.
        this.#identity = undefined;
        this.#onError(err);
        this.#onEvent(`${path}: watch error`);
      });
      return w;
    } catch (err) {
      this.#onError(err as Error); // ENOSPC (inotify limit), EACCES, or it vanished: the resync still covers it
      return undefined;
    }
  }

  #unwatch(): void {
    this.#dirWatch?.close();
    this.#ancestorWatch?.close();
    this.#dirWatch = this.#ancestorWatch = this.#identity = undefined;
  }
}

function identityOf(path: string): string | undefined {
  try {
    const s = statSync(path);
    return `${s.dev}:${s.ino}`;
  } catch {
    return undefined;
  }
}

function nearestExistingAncestor(path: string): string {
  let dir = dirname(path);
  while (identityOf(dir) === undefined && dirname(dir) !== dir) dir = dirname(dir);
  return dir;
}
