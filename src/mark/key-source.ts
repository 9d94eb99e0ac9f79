/**
 * The mark's keys as the webhook and the repair controller hold them: read from a directory (the mounted Secret,
 * src/mark/keys.ts) at start and every `pollMs`, so a rotation reaches them when the kubelet updates the volume
 * (within about a minute) without a restart and without an API call on the admission path. A directory that
 * becomes unreadable or wrong keeps the last good keys (logged); one that has no key yet leaves the source
 * without keys — its owner reports not ready, and nothing is marked or trusted meanwhile.
 */
import type { Marker } from './admission.ts';
import { type KeyRing, readKeyRing } from './keys.ts';

export interface KeyLog {
  info(fields: object, msg: string): void;
  warn(fields: object, msg: string): void;
}

export interface MarkKeySourceOptions {
  dir: string;
  /** default 10 s: a rotation's Secret change reaches the volume after the kubelet's sync (~1 min) anyway. */
  pollMs?: number;
  log?: KeyLog;
  /** ms since the epoch (tests) */
  now?: () => number;
}

const DEFAULT_POLL_MS = 10_000;

export class MarkKeySource implements Marker {
  readonly #o: MarkKeySourceOptions;
  #ring: KeyRing | undefined;
  #seed: KeyRing | undefined;
  #problem: string | undefined;
  #timer: NodeJS.Timeout | undefined;

  constructor(o: MarkKeySourceOptions) {
    this.#o = o;
  }

  start(): void {
    this.reload();
    this.#timer = setInterval(() => this.reload(), this.#o.pollMs ?? DEFAULT_POLL_MS);
    this.#timer.unref();
  }

  stop(): void {
    clearInterval(this.#timer);
  }

  ring(): KeyRing | undefined {
    return this.#ring ?? this.#seed;
  }

  now(): number {
    return Math.floor((this.#o.now ?? Date.now)() / 1000);
  }

  /**
   * A key known to be the Secret's (this process just created the Secret with it), used until the kubelet puts
   * the Secret in the volume: the first webhook replica is ready at once instead of after the kubelet's next sync.
   */
  seed(ring: KeyRing): void {
    this.#seed = ring;
  }

  healthy(): { ok: true } | { ok: false; why: string } {
    if (this.ring()) return { ok: true };
    return { ok: false, why: `no admission mark key: ${this.#problem ?? 'not read yet'}` };
  }

  /** Reads the directory once (start and the poll call it; tests call it directly). */
  reload(): void {
    const read = readKeyRing(this.#o.dir);
    if (!read.ok) {
      if (read.error !== this.#problem)
        this.#o.log?.warn(
          { dir: this.#o.dir, error: read.error, keeping: this.#ring?.signer.id ?? null },
          this.#ring ? 'admission mark keys unreadable; keeping the last good ones' : 'no admission mark key yet',
        );
      this.#problem = read.error;
      return;
    }
    this.#problem = undefined;
    const before = this.#ring;
    this.#ring = read.ring;
    if (!before || describe(before) !== describe(read.ring))
      this.#o.log?.info(
        { dir: this.#o.dir, signing: read.ring.signer.id, verifying: read.ring.verifiers.map((k) => k.id) },
        'admission mark keys loaded',
      );
  }
}

const describe = (r: KeyRing) => r.verifiers.map((k) => k.id).join(',');
