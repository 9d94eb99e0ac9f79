/**
 * Every phase of a self-managed CA rotation, on a fake clock, with replicas sharing one in-memory Secret that
 * has the API's resourceVersion semantics. Serving certificates live 1 h, CAs 10 h: the CA rotation starts at
 * 6 h 40 min; the new CA signs 10 min (the overlap) later, once the published caBundle holds it.
 */
import { describe, expect, it } from 'vitest';
import { createPrivateKey } from 'node:crypto';
import type { SecretSource } from '../../src/tls/secret-source.ts';
import { CA_MS, MINUTE, OVERLAP_MS, POLL_MS, cluster, issuerOf, x509, type Cluster } from './rotation-helpers.ts';

/** Where the first CA's rotation becomes due: two thirds of its life after issue. */
const PREPARE_AT = (CA_MS * 2) / 3;

/** Polls like the replicas' timers would: every minute each replica syncs, until `ms` has passed. */
async function tick(c: Cluster, replicas: SecretSource[], ms: number): Promise<void> {
  for (let left = ms; left > 0; left -= POLL_MS) {
    c.clock.advance(Math.min(POLL_MS, left));
    for (const r of replicas) await r.sync();
  }
}

const fingerprints = (c: Cluster) => c.bundle().map((x) => x.fingerprint256);
const served = (c: Cluster, r: SecretSource) => issuerOf(r.current().cert, c.bundle());
const kinds = (c: Cluster) => c.events.map((e) => e.event).filter((e) => e !== 'waiting_for_replicas');

describe('CA rotation, one replica', () => {
  it('prepares at two thirds of the CA life, promotes after the overlap once published, then retires', async () => {
    const c = cluster();
    const r = c.replica('r1');
    await r.start();
    const [a] = fingerprints(c);
    expect(kinds(c)).toEqual(['created']);

    await tick(c, [r], PREPARE_AT - MINUTE);
    expect(fingerprints(c)).toEqual([a]);
    expect(kinds(c).filter((k) => k === 'leaf_renewed')).toHaveLength(9); // every 40 min in 6 h 39 min
    await tick(c, [r], MINUTE);
    const [, b] = fingerprints(c);
    expect(fingerprints(c)).toEqual([a, b]);
    expect(r.current().ca).toBe(c.data()['ca.crt']);
    expect(served(c, r)).toBe(a); // trusted, not yet signing
    expect(
      x509(`${c.data()['ca.crt'].split('-----END CERTIFICATE-----\n')[1]}-----END CERTIFICATE-----`).checkPrivateKey(
        createPrivateKey(c.data()['next-ca.key']!),
      ),
    ).toBe(true);
    expect(JSON.parse(c.data()['replicas.json']!)).toEqual({ r1: { ca: a, at: c.clock.now() } });
    expect(c.events).toContainEqual(expect.objectContaining({ event: 'ca_prepared', why: 'ca_due' }));

    // Published at once, but the overlap has not passed.
    c.published.bundle = r.current().ca!;
    await tick(c, [r], OVERLAP_MS - MINUTE);
    expect(served(c, r)).toBe(a);
    // The overlap has passed, but the caBundle no longer holds the new CA (someone reverted it): wait.
    c.published.bundle = '';
    await tick(c, [r], 2 * MINUTE);
    expect(served(c, r)).toBe(a);
    expect(c.events.filter((e) => e.event === 'waiting_for_ca_bundle')).toHaveLength(1);

    c.published.bundle = r.current().ca!;
    await tick(c, [r], MINUTE);
    expect(kinds(c).slice(-2)).toEqual(['ca_promoted', 'ca_retired']);
    expect(fingerprints(c)).toEqual([b]);
    expect(served(c, r)).toBe(b);
    expect(x509(c.data()['ca.crt']).checkPrivateKey(createPrivateKey(c.data()['ca.key']))).toBe(true);
    expect(c.data()['next-ca.key']).toBeUndefined();
    expect(c.data()['replicas.json']).toBeUndefined();
    expect(r.rotating()).toBe(false);
  });

  it('a Secret whose signing CA expired (the cluster was off) is replaced in one sync', async () => {
    const c = cluster();
    const r = c.replica('r1');
    await r.start();
    c.clock.advance(CA_MS + MINUTE);
    await r.sync();
    expect(kinds(c)).toEqual(['created', 'ca_prepared', 'ca_promoted', 'ca_retired']);
    expect(c.events.at(-1)).toMatchObject({ why: 'old_ca_expired' });
    expect(x509(r.current().cert).validToDate.getTime()).toBeGreaterThan(c.clock.now());
    expect(fingerprints(c)).toHaveLength(1);
  });
});

describe('CA rotation, two replicas', () => {
  async function prepared(): Promise<{ c: Cluster; r1: SecretSource; r2: SecretSource; a: string; b: string }> {
    const c = cluster();
    const [r1, r2] = [c.replica('r1'), c.replica('r2')];
    await r1.start();
    await r2.start();
    await tick(c, [r1, r2], PREPARE_AT);
    const [a, b] = fingerprints(c);
    c.published.bundle = r1.current().ca!;
    expect(r2.current().ca).toBe(r1.current().ca);
    return { c, r1, r2, a, b };
  }

  it('keeps the old CA until every replica serves a certificate from the new one', async () => {
    const { c, r1, r2, a, b } = await prepared();
    await tick(c, [r1, r2], OVERLAP_MS - MINUTE);
    expect(JSON.parse(c.data()['replicas.json']!)).toEqual({
      r1: { ca: a, at: c.clock.now() },
      r2: { ca: a, at: c.clock.now() },
    });

    c.clock.advance(MINUTE);
    await r1.sync();
    expect(served(c, r1)).toBe(b);
    expect(served(c, r2)).toBe(a); // has not polled yet: still trusted
    expect(fingerprints(c)).toEqual([a, b]);
    expect(c.events.at(-1)).toMatchObject({ event: 'waiting_for_replicas', replicas: ['r2'] });

    await r2.sync();
    expect(served(c, r2)).toBe(b);
    expect(r2.current().cert).toBe(r1.current().cert);
    expect(fingerprints(c)).toEqual([b]);
    expect(kinds(c).filter((k) => k.startsWith('ca_'))).toEqual(['ca_prepared', 'ca_promoted', 'ca_retired']);
    await r1.sync();
    expect(r1.current().ca).toBe(r2.current().ca);
  });

  it('a replica that dies serving the old CA holds the old CA only until its report times out', async () => {
    const { c, r1, r2, a, b } = await prepared();
    await tick(c, [r1, r2], OVERLAP_MS); // r1 promoted in the last poll; r2 then adopted, reported, retired
    expect(fingerprints(c)).toEqual([b]);

    // Again, but r2 stops (dies) right before the promotion.
    const again = await prepared();
    await tick(again.c, [again.r1, again.r2], OVERLAP_MS - MINUTE);
    again.r2.stop();
    await tick(again.c, [again.r1], MINUTE);
    expect(served(again.c, again.r1)).toBe(again.b);
    expect(fingerprints(again.c)).toEqual([again.a, again.b]);
    await tick(again.c, [again.r1], MINUTE);
    expect(fingerprints(again.c)).toHaveLength(2); // r2's report is 2 min old: it may still be serving
    await tick(again.c, [again.r1], MINUTE);
    expect(fingerprints(again.c)).toEqual([again.b]); // 3 min (three polls) without a word: gone
    expect(again.c.events.at(-1)).toMatchObject({ event: 'ca_retired', why: 'replicas_moved' });

    // Its replacement (a new pod name) serves the new CA from its first sync on.
    const r3 = again.c.replica('r3');
    await r3.start();
    expect(served(again.c, r3)).toBe(again.b);
    expect([a, b]).not.toContain(again.b);
  });

  it('a replica restarted mid-rotation picks the rotation up where the Secret says, without a third CA', async () => {
    const { c, r1, r2, a, b } = await prepared();
    r1.stop();
    const r1again = c.replica('r1');
    await r1again.start();
    expect(fingerprints(c)).toEqual([a, b]);
    expect(served(c, r1again)).toBe(a);

    await tick(c, [r1again, r2], OVERLAP_MS - MINUTE);
    c.clock.advance(MINUTE);
    await r2.sync(); // r2 promotes this time
    r2.stop();
    const r2again = c.replica('r2');
    await r2again.start(); // restarted right after: serves the new CA's certificate at once, reports it
    expect(served(c, r2again)).toBe(b);
    expect(fingerprints(c)).toEqual([a, b]); // r1 still serves a's certificate
    await r1again.sync();
    expect(fingerprints(c)).toEqual([b]);
    expect(kinds(c).filter((k) => k === 'ca_prepared')).toHaveLength(1);
  });

  it('replicas racing on the same Secret version agree: one new CA, one promotion', async () => {
    const c = cluster();
    let hold = 0;
    const parked: Array<() => void> = [];
    // Each read waits until both replicas have read: both then plan from the same resourceVersion.
    const racing = {
      read: async () => {
        const got = await c.store.read();
        if (hold > 0) {
          await new Promise<void>((resolve) => {
            parked.push(resolve);
            if (parked.length === 2) for (const f of parked.splice(0)) f();
          });
          hold--;
        }
        return got;
      },
      create: (d: Parameters<typeof c.store.create>[0]) => c.store.create(d),
      replace: (d: Parameters<typeof c.store.create>[0], v: string) => c.store.replace(d, v),
    };
    const [r1, r2] = [c.replica('r1', { store: racing }), c.replica('r2', { store: racing })];
    hold = 2;
    await Promise.all([r1.start(), r2.start()]);
    expect(kinds(c)).toEqual(['created']);
    expect(r1.current().cert).toBe(r2.current().cert);

    await tick(c, [r1, r2], PREPARE_AT - MINUTE);
    c.clock.advance(MINUTE);
    hold = 2;
    await Promise.all([r1.sync(), r2.sync()]);
    expect(kinds(c).filter((k) => k === 'ca_prepared')).toHaveLength(1);
    expect(fingerprints(c)).toHaveLength(2);
    expect(r1.current().ca).toBe(r2.current().ca);

    c.published.bundle = r1.current().ca!;
    await tick(c, [r1, r2], OVERLAP_MS - MINUTE);
    c.clock.advance(MINUTE);
    hold = 2;
    await Promise.all([r1.sync(), r2.sync()]);
    await Promise.all([r1.sync(), r2.sync()]);
    expect(kinds(c).filter((k) => k === 'ca_promoted')).toHaveLength(1);
    expect(r1.current().cert).toBe(r2.current().cert);
    expect(fingerprints(c)).toHaveLength(1);
    expect(served(c, r1)).toBe(fingerprints(c)[0]);
  });
});
