// Leader election on a fake clock and an in-memory Lease (test/kube/fake-lease.ts): who leads, when a silent or
// unreachable leader steps down relative to when another takes over, release on stop, and races on create.
import { describe, expect, it } from 'vitest';
import { LeaderElector, type ElectorOptions } from '../../src/kube/lease.ts';
import { FakeClock, MemoryLeaseStore, settle } from './fake-lease.ts';

const TIMING = { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 };

function elector(
  store: MemoryLeaseStore,
  clock: FakeClock,
  identity: string,
  state: { down?: boolean; hang?: boolean } = {},
  extra: Partial<ElectorOptions> = {},
) {
  const events: Array<[string, number]> = [];
  const e = new LeaderElector(store.client(state), {
    identity,
    ...TIMING,
    clock,
    onStartedLeading: () => events.push(['started', clock.now()]),
    onStoppedLeading: () => events.push(['stopped', clock.now()]),
    ...extra,
  });
  return { e, events, state };
}

/** A fresh store and clock; candidate `a` starts first (and so creates the Lease), then `b`. */
async function twoCandidates() {
  const clock = new FakeClock();
  const store = new MemoryLeaseStore();
  const a = elector(store, clock, 'a');
  a.e.start();
  await settle();
  const b = elector(store, clock, 'b');
  b.e.start();
  return { clock, store, a, b };
}

/** Fails the test the moment two electors both believe they lead. */
function neverBoth(...es: LeaderElector[]) {
  return () => expect(es.filter((e) => e.isLeader()).length).toBeLessThanOrEqual(1);
}

describe('LeaderElector', () => {
  it('the first candidate creates the Lease and leads; the second waits while it renews', async () => {
    const { clock, store, a, b } = await twoCandidates();
    await clock.advance(60_000, neverBoth(a.e, b.e));
    expect(a.e.isLeader()).toBe(true);
    expect(b.e.isLeader()).toBe(false);
    expect(b.e.leader()).toBe('a');
    expect(store.lease?.spec).toMatchObject({ holderIdentity: 'a', leaseDurationSeconds: 15, leaseTransitions: 0 });
    // Renewals keep the acquire time; about one write per retry period.
    expect(store.lease!.spec.acquireTime).toBeLessThan(store.lease!.spec.renewTime);
    expect(store.writes).toBeGreaterThanOrEqual(25);
    await a.e.stop();
    await b.e.stop();
  });

  it('a leader that cannot reach the apiserver stops acting before anyone else may start', async () => {
    const { clock, store, a, b } = await twoCandidates();
    await clock.advance(5_000, neverBoth(a.e, b.e));
    const lastRenew = store.lease!.spec.renewTime;
    a.state.down = true;
    await clock.advance(30_000, neverBoth(a.e, b.e));
    const stopped = a.events.find(([e]) => e === 'stopped')![1];
    const started = b.events.find(([e]) => e === 'started')![1];
    expect(stopped).toBeLessThan(started);
    // a steps down within renewDeadline of its last renewal; b waits a full leaseDuration without a change.
    expect(stopped - lastRenew).toBeLessThanOrEqual(TIMING.renewDeadlineMs);
    expect(started - lastRenew).toBeGreaterThanOrEqual(TIMING.leaseDurationMs);
    expect(store.lease?.spec).toMatchObject({ holderIdentity: 'b', leaseTransitions: 1 });
    console.log(
      `unreachable leader: a stopped ${stopped - lastRenew} ms after its last renewal, b took over after ${started - lastRenew} ms`,
    );
    await a.e.stop();
    await b.e.stop();
  });

  it('a renew that never answers ends leadership at the deadline', async () => {
    const clock = new FakeClock();
    const store = new MemoryLeaseStore();
    const a = elector(store, clock, 'a');
    a.e.start();
    await clock.advance(3_000);
    expect(a.e.isLeader()).toBe(true);
    a.state.hang = true;
    await clock.advance(12_000);
    expect(a.e.isLeader()).toBe(false);
    expect(a.events.map(([e]) => e)).toEqual(['started', 'stopped']);
  });

  it('stop() steps down, then releases: the other candidate takes over at its next retry', async () => {
    const { clock, store, a, b } = await twoCandidates();
    await clock.advance(4_000);
    const stopping = a.e.stop();
    await settle();
    await stopping;
    expect(a.events.map(([e]) => e)).toEqual(['started', 'stopped']);
    expect(store.lease?.spec.holderIdentity).toBe('');
    const releasedAt = clock.now();
    await clock.advance(5_000, neverBoth(a.e, b.e));
    const started = b.events.find(([e]) => e === 'started')![1];
    // One retry period (plus jitter), not a whole lease duration.
    expect(started - releasedAt).toBeLessThan(TIMING.leaseDurationMs);
    expect(b.e.isLeader()).toBe(true);
    await b.e.stop();
  });

  it('candidates racing for a missing Lease: exactly one wins the create', async () => {
    const clock = new FakeClock();
    const store = new MemoryLeaseStore();
    const all = ['a', 'b', 'c'].map((id) => elector(store, clock, id));
    for (const x of all) x.e.start();
    await clock.advance(20_000, neverBoth(...all.map((x) => x.e)));
    expect(all.filter((x) => x.e.isLeader())).toHaveLength(1);
    expect(all.flatMap((x) => x.events)).toHaveLength(1);
    for (const x of all) await x.e.stop();
  });

  it('takes over a Lease left by a holder that died without releasing it, after its duration', async () => {
    const clock = new FakeClock();
    const store = new MemoryLeaseStore();
    store.lease = {
      resourceVersion: '7',
      spec: { holderIdentity: 'dead', leaseDurationSeconds: 15, acquireTime: 0, renewTime: 0, leaseTransitions: 4 },
    };
    const b = elector(store, clock, 'b');
    b.e.start();
    const first = clock.now();
    await clock.advance(30_000);
    const started = b.events[0][1];
    expect(started - first).toBeGreaterThanOrEqual(15_000);
    expect(store.lease.spec).toMatchObject({ holderIdentity: 'b', leaseTransitions: 5 });
    await b.e.stop();
  });

  it('refuses timings where a leader could act after another took over', () => {
    const store = new MemoryLeaseStore();
    for (const t of [
      { leaseDurationMs: 10_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 },
      { leaseDurationMs: 15_000, renewDeadlineMs: 2_000, retryPeriodMs: 2_000 },
    ]) {
      expect(() => new LeaderElector(store.client(), { identity: 'x', ...t })).toThrow(
        /retryPeriod < renewDeadline < leaseDuration/,
      );
    }
  });
});
