import { errorFields } from '../log/fields.ts';
/**
 * Leader election through a coordination.k8s.io Lease, the way client-go's leaderelection package does it, so that
 * of several replicas exactly one acts and two never act at once:
 * - acquire: create the Lease, or take it over when it is free (holder "") or expired — "expired" measured on the
 *   candidate's OWN clock from when it last saw the Lease change (resourceVersion), never from the renewTime the
 *   holder wrote, so clock skew between machines cannot shorten a lease;
 * - renew: every retryPeriod, an update carrying the resourceVersion last read (a precondition: a concurrent writer
 *   makes it fail with 409 instead of being overwritten);
 * - step down: when no renewal succeeded for renewDeadline the holder stops acting — before any other candidate can
 *   take over, which needs leaseDuration (> renewDeadline) without a change. `isLeader()` reads the clock itself, so
 *   it turns false at the deadline even while a renew call hangs;
 * - release: on stop() the leader steps down first, then writes holder "" with a 1 s duration, so another replica
 *   takes over at its next retry instead of after leaseDuration.
 * The store and the clock are interfaces: tests run the election on a fake clock and an in-memory store
 * (test/kube/lease.test.ts) and on the real apiserver with two electors (test/e2e/lease.test.ts).
 */

/** The Lease's spec, with times as epoch milliseconds. */
export interface LeaseSpec {
  holderIdentity: string;
  leaseDurationSeconds: number;
  acquireTime: number;
  renewTime: number;
  leaseTransitions: number;
}

export interface StoredLease {
  spec: LeaseSpec;
  resourceVersion: string;
}

/** The write lost a race: the Lease exists already (create) or changed since it was read (update). */
export class LeaseConflict extends Error {
  override name = 'LeaseConflict';
}

export interface LeaseStore {
  /** undefined when there is no Lease yet. */
  get(): Promise<StoredLease | undefined>;
  create(spec: LeaseSpec): Promise<StoredLease>;
  update(spec: LeaseSpec, resourceVersion: string): Promise<StoredLease>;
}

export interface Clock {
  now(): number;
  /** Resolves after `ms`, or early when `signal` aborts. */
  sleep(ms: number, signal: AbortSignal): Promise<void>;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve) => {
      if (signal.aborted) return resolve();
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        resolve();
      }
      signal.addEventListener('abort', done, { once: true });
    }),
};

export interface ElectorOptions {
  identity: string;
  /** How long a Lease is good for without renewal (client-go default 15 s). */
  leaseDurationMs: number;
  /** How long the leader keeps acting without a successful renewal (default 10 s); must be < leaseDurationMs. */
  renewDeadlineMs: number;
  /** Between attempts to acquire or renew (default 2 s); must be < renewDeadlineMs. */
  retryPeriodMs: number;
  clock?: Clock;
  onStartedLeading?: () => void;
  onStoppedLeading?: () => void;
  log?: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };
}

/** Candidates retry a little later than retryPeriod, spread so that they do not all call at once (client-go: 1.2). */
const JITTER = 0.2;

export class LeaderElector {
  readonly #store: LeaseStore;
  readonly #o: ElectorOptions;
  readonly #clock: Clock;
  readonly #abort = new AbortController();
  #running: Promise<void> | undefined;
  #leading = false;
  #lastRenew = 0;
  /** The Lease as last read or written, and when (our clock) we saw it change. */
  #observed: StoredLease | undefined;
  #observedAt = 0;
  /** When the loop last ran: /healthz tells a wedged process from a waiting candidate. */
  lastTick = 0;
  transitions = 0;

  constructor(store: LeaseStore, options: ElectorOptions) {
    if (!(options.retryPeriodMs < options.renewDeadlineMs && options.renewDeadlineMs < options.leaseDurationMs)) {
      throw new Error('leader election needs retryPeriod < renewDeadline < leaseDuration');
    }
    this.#store = store;
    this.#o = options;
    this.#clock = options.clock ?? systemClock;
  }

  /** Whether this replica may act now: it holds the Lease and renewed it within renewDeadline. */
  isLeader(): boolean {
    return this.#leading && this.#clock.now() - this.#lastRenew < this.#o.renewDeadlineMs;
  }

  /** The holder as last seen ('' when free or unknown). */
  leader(): string {
    return this.#observed?.spec.holderIdentity ?? '';
  }

  /** Starts the election loop in the background. */
  start(): void {
    this.#running ??= this.#loop();
  }

  /** Ends the loop, steps down (if leading) and releases the Lease if this replica holds it. */
  async stop(): Promise<void> {
    this.#abort.abort();
    await this.#running;
    this.#stepDown('stopping');
    await this.#release();
  }

  async #loop(): Promise<void> {
    const { retryPeriodMs, renewDeadlineMs } = this.#o;
    const signal = this.#abort.signal;
    while (!signal.aborted) {
      this.lastTick = this.#clock.now();
      if (!this.#leading) {
        // An acquire that lands after stop() began is not acted on; stop() releases it.
        if ((await this.#attempt()) && !signal.aborted) this.#becomeLeader();
        else await this.#clock.sleep(retryPeriodMs * (1 + JITTER * Math.random()), signal);
        continue;
      }
      await this.#clock.sleep(retryPeriodMs, signal);
      if (signal.aborted) break;
      // A renew that has not answered by the deadline counts as failed; the deadline is re-checked after it.
      const left = this.#lastRenew + renewDeadlineMs - this.#clock.now();
      const race = new AbortController();
      const renewed = await Promise.race([
        this.#attempt(),
        this.#clock.sleep(Math.max(0, left), race.signal).then(() => false),
      ]);
      race.abort();
      if (renewed) this.#lastRenew = this.#clock.now();
      if (!this.isLeader()) this.#stepDown('renew deadline passed');
    }
  }

  /** client-go's tryAcquireOrRenew: true when we hold the Lease after this call. */
  async #attempt(): Promise<boolean> {
    const now = this.#clock.now();
    const { identity, leaseDurationMs } = this.#o;
    const desired: LeaseSpec = {
      holderIdentity: identity,
      leaseDurationSeconds: Math.ceil(leaseDurationMs / 1000),
      acquireTime: now,
      renewTime: now,
      leaseTransitions: 0,
    };
    try {
      const current = await this.#store.get();
      if (!current) return this.#wrote(await this.#store.create(desired), now);
      if (current.resourceVersion !== this.#observed?.resourceVersion) {
        this.#observed = current;
        this.#observedAt = now;
      }
      const held = current.spec.holderIdentity;
      const expiresAt = this.#observedAt + current.spec.leaseDurationSeconds * 1000;
      if (held !== '' && held !== identity && expiresAt > now) return false;
      if (held === identity) {
        desired.acquireTime = current.spec.acquireTime;
        desired.leaseTransitions = current.spec.leaseTransitions;
      } else {
        desired.leaseTransitions = current.spec.leaseTransitions + 1;
      }
      return this.#wrote(await this.#store.update(desired, current.resourceVersion), now);
    } catch (err) {
      if (!(err instanceof LeaseConflict)) this.#o.log?.warn({ err: errorFields(err) }, 'lease: acquire/renew failed');
      return false;
    }
  }

  #wrote(lease: StoredLease, now: number): true {
    this.#observed = lease;
    this.#observedAt = now;
    return true;
  }

  #becomeLeader(): void {
    this.#leading = true;
    this.#lastRenew = this.#clock.now();
    this.transitions++;
    this.#o.log?.info({ identity: this.#o.identity }, 'lease: became leader');
    this.#o.onStartedLeading?.();
  }

  #stepDown(why: string): void {
    if (!this.#leading) return;
    this.#leading = false;
    this.#o.log?.warn({ identity: this.#o.identity, why }, 'lease: stopped leading');
    this.#o.onStoppedLeading?.();
  }

  async #release(): Promise<void> {
    const held = this.#observed;
    if (!held || held.spec.holderIdentity !== this.#o.identity) return;
    const now = this.#clock.now();
    try {
      this.#observed = await this.#store.update(
        {
          holderIdentity: '',
          leaseDurationSeconds: 1,
          acquireTime: now,
          renewTime: now,
          leaseTransitions: held.spec.leaseTransitions,
        },
        held.resourceVersion,
      );
    } catch (err) {
      // Someone else wrote it meanwhile (then it is not ours to release), or the apiserver is gone: it expires.
      this.#o.log?.warn({ err: errorFields(err) }, 'lease: release failed; it expires by itself');
    }
  }
}
