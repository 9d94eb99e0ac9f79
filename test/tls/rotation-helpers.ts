/**
 * Replicas of the self-managed certificate source sharing one in-memory Secret, on a fake clock, driven one
 * sync at a time: every phase of a CA rotation is reached by moving the clock, never by waiting.
 */
import { X509Certificate } from 'node:crypto';
import { MemorySecretStore } from '../../src/tls/memory-store.ts';
import { SecretSource, type SecretSourceOptions, type SecretStore } from '../../src/tls/secret-source.ts';
import { splitPem, type SecretData } from '../../src/tls/trust-state.ts';

export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;
/** Serving certificates live an hour, CAs ten: the CA rotates at 6 h 40 min (two thirds). */
export const LEAF_MS = HOUR;
export const CA_MS = 10 * HOUR;
export const POLL_MS = MINUTE;
export const OVERLAP_MS = 10 * MINUTE;

export interface Event {
  event: string;
  [k: string]: unknown;
}

/** A clock that moves only when told; starts on a whole second so certificate times read back exactly. */
export function fakeClock(start = Math.floor(Date.now() / 1000) * 1000): {
  now: () => number;
  advance: (ms: number) => void;
  set: (t: number) => void;
} {
  let t = start;
  return {
    now: () => t,
    advance: (ms) => {
      t += ms;
    },
    set: (v) => {
      t = v;
    },
  };
}

export interface Cluster {
  store: MemorySecretStore;
  clock: ReturnType<typeof fakeClock>;
  events: Event[];
  /** What the webhook configurations' caBundle holds (tests publish to it, or not). */
  published: { bundle: string };
  replica(id: string, extra?: Partial<SecretSourceOptions>): SecretSource;
  data(): SecretData;
  bundle(): X509Certificate[];
}

export function cluster(opts: { store?: SecretStore } = {}): Cluster {
  const store = new MemorySecretStore();
  const clock = fakeClock();
  const events: Event[] = [];
  const published = { bundle: '' };
  const log = { info: (f: object) => void events.push(f as Event), warn: (f: object) => void events.push(f as Event) };
  const holds = async (bundle: string) => splitPem(bundle).every((p) => published.bundle.includes(p));
  return {
    store,
    clock,
    events,
    published,
    replica: (id, extra = {}) =>
      new SecretSource({
        store: opts.store ?? store,
        sans: ['meshgate.meshgate.svc', '127.0.0.1'],
        replicaId: id,
        where: 'Secret test/meshgate-tls',
        validityMs: LEAF_MS,
        caValidityMs: CA_MS,
        overlapMs: OVERLAP_MS,
        pollMs: POLL_MS,
        manual: true,
        now: clock.now,
        log,
        trustCheck: holds,
        ...extra,
      }),
    data: () => store.peek()!.data,
    bundle: () => splitPem(store.peek()!.data['ca.crt']).map((p) => new X509Certificate(p)),
  };
}

export const x509 = (pem: string): X509Certificate => new X509Certificate(pem);

/** The CA in `cas` that issued `cert`, by fingerprint; undefined if none. */
export function issuerOf(cert: string, cas: X509Certificate[]): string | undefined {
  const leaf = x509(cert);
  return cas.find((ca) => leaf.checkIssued(ca) && leaf.verify(ca.publicKey))?.fingerprint256;
}
