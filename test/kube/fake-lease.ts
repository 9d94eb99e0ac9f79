/**
 * Fakes for the leader-election unit tests: a clock that moves only when told, and a Lease store in memory with
 * the apiserver's optimistic concurrency (create fails when it exists, update when the resourceVersion is stale).
 * The real store against a real apiserver is exercised by test/e2e/lease.test.ts.
 */
import { LeaseConflict, type Clock, type LeaseSpec, type LeaseStore, type StoredLease } from '../../src/kube/lease.ts';

/** Lets every pending promise callback and timer-free continuation run. */
export async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise<void>((r) => setImmediate(r));
}

export class FakeClock implements Clock {
  t = 1_000_000;
  #sleepers: Array<{ at: number; resolve: () => void }> = [];

  now(): number {
    return this.t;
  }

  sleep(ms: number, signal: AbortSignal): Promise<void> {
    return new Promise<void>((resolve) => {
      if (signal.aborted) return resolve();
      const s = { at: this.t + ms, resolve };
      this.#sleepers.push(s);
      signal.addEventListener(
        'abort',
        () => {
          this.#sleepers = this.#sleepers.filter((x) => x !== s);
          resolve();
        },
        { once: true },
      );
    });
  }

  /** Moves time forward by `ms`, waking sleepers in order and letting each step settle; calls `each` after every step. */
  async advance(ms: number, each?: () => void): Promise<void> {
    const end = this.t + ms;
    for (;;) {
      await settle();
      each?.();
      const next = this.#sleepers.filter((s) => s.at <= end).sort((a, b) => a.at - b.at)[0];
      if (!next) break;
      this.t = next.at;
      this.#sleepers = this.#sleepers.filter((s) => s !== next);
      next.resolve();
    }
    this.t = end;
    await settle();
    each?.();
  }
}

export class MemoryLeaseStore {
  lease: StoredLease | undefined;
  #rv = 0;
  writes = 0;

  /** A view for one elector; `down` makes its calls fail, `hang` makes them never answer. */
  client(state: { down?: boolean; hang?: boolean } = {}): LeaseStore {
    const gate = async () => {
      if (state.hang) await new Promise(() => undefined);
      if (state.down) throw new Error('connection refused');
    };
    return {
      get: async () => {
        await gate();
        return this.lease && structuredClone(this.lease);
      },
      create: async (spec: LeaseSpec) => {
        await gate();
        if (this.lease) throw new LeaseConflict('exists');
        return this.#write(spec);
      },
      update: async (spec: LeaseSpec, resourceVersion: string) => {
        await gate();
        if (!this.lease || this.lease.resourceVersion !== resourceVersion) throw new LeaseConflict('changed');
        return this.#write(spec);
      },
    };
  }

  #write(spec: LeaseSpec): StoredLease {
    this.writes++;
    this.lease = { spec: { ...spec }, resourceVersion: String(++this.#rv) };
    return structuredClone(this.lease);
  }
}
