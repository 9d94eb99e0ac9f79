/**
 * What one client may cost the webhook at the transport level: how long it may take to say what it wants, how
 * many connections and reviews may be open at once, and how many request bytes may be held. Every default is
 * derived from the apiserver's webhook client or from the chart's memory limit, as each comment says.
 *
 * The memory budget, for the chart's 512 MiB container limit, in which node 24 gives V8 a 259 MiB heap (read
 * off node in a 512 MiB memory cgroup). Measured (test/http/amplification.test.ts, test/tls/slow-clients.test.ts,
 * test/http/measure-amplification.ts):
 *   ~84 MiB   RSS of `meshgate serve` from the image with its cluster caches after a minute of reviews (npm run
 *             bench -- --footprint; ~129 while it loaded @kubernetes/client-node); ~78–83 MiB without a cluster
 *   ≤ ~47 MiB of heap per 7 MiB body held: its string, and what it parses to, which json-shape.ts bounds
 *             (at most 200,000 objects and arrays; without that cap, 7 MiB of `{}` parsed to 156 MiB)
 *   ~55 KB    per TLS connection (OpenSSL state and buffers: 1,000 connections added ~55 MiB)
 *   With 1,000 connections held and the costliest parsable 7 MiB bodies arriving 20 at once, the server's
 *   RSS peaked at ~380 MiB (heap limited as in the container).
 */

/** The apiserver's longest per-webhook timeoutSeconds (1-30): after it, nobody is waiting for our answer. */
export const MAX_WEBHOOK_TIMEOUT_SECONDS = 30;

export interface TransportLimits {
  /**
   * Time from TCP accept to a finished TLS handshake. The apiserver's Go transport gives up after 10 s
   * (TLSHandshakeTimeout); a client still handshaking after that is not the apiserver. Node's default is 120 s.
   */
  tlsHandshakeTimeoutMs: number;
  /**
   * Time from the handshake (or the first byte of a request on a reused connection) to the last header byte.
   * The apiserver writes its headers at once; 10 s matches its own handshake budget and the default webhook
   * timeout, and frees a connection that never says anything. Node's default is 60 s.
   */
  headersTimeoutMs: number;
  /**
   * Time to receive a whole request, headers and body: the longest webhook timeout (30 s). A review that
   * arrives later is useless, the apiserver has already applied its failurePolicy. Node answers 408.
   */
  requestTimeoutMs: number;
  /**
   * Socket inactivity while a request is open (a reader that stops reading our answer, a body that stops
   * arriving): the request timeout plus 5 s, so a stalled request is answered 408 by the request timeout
   * first and only a socket that cannot even take that is cut silently. Idle keep-alive sockets use
   * keepAliveTimeoutMs instead.
   */
  connectionTimeoutMs: number;
  /**
   * How long an idle keep-alive connection stays open. The apiserver's Go client closes idle connections after
   * 90 s (IdleConnTimeout); closing first would race a review being written into a socket we are closing, and
   * Go does not retry a POST. So 95 s: the client always closes first. (Node adds a 1 s buffer of its own.)
   */
  keepAliveTimeoutMs: number;
  /**
   * How often node checks the headers and request timeouts. Its default (30 s) would let a slow client live
   * up to 30 s past them; one walk per second over at most maxConnections sockets costs microseconds.
   */
  connectionsCheckingIntervalMs: number;
  /**
   * Concurrent connections; beyond it node closes new ones at accept. The heap can reach its 259 MiB limit,
   * and node needs ~125 MiB besides (code, OpenSSL, buffers), which leaves ~130 MiB of the 512 for connections
   * at ~55-70 KB each (measured with 1,000 and 2,000): 1024 uses about half of that. client-go keeps at most 25
   * idle connections per apiserver (transport/cache.go) and opens more only for concurrent calls, so 1024 still
   * serves dozens of apiservers or bursts of hundreds of reviews at once.
   */
  maxConnections: number;
  /**
   * Concurrent connections from one client address (issue 33 §7: one client holding 1,024 idle connections took every
   * slot, and every new connection, the apiserver's too, was reset). The apiserver needs at most
   * maxInflightReviews (64) at once plus its transport's idle pool; a quarter of maxConnections leaves that several
   * times over, and three other clients (apiservers of an HA control plane) room beside a greedy one.
   */
  maxConnectionsPerClient: number;
  /**
   * Time from the end of the TLS handshake to the first byte of a request on a new connection: a connection that
   * only holds a slot is closed, and at the global cap the oldest such connection gives its slot to a new one
   * (src/server/connection-guard.ts). 10 s, as the handshake: the apiserver writes its review at once after dialling.
   */
  firstRequestTimeoutMs: number;
  /**
   * Reviews on one connection before we ask the client to reconnect (Connection: close on the last answer, no
   * race). The apiserver keeps a busy connection for good (idle ones it drops after 90 s), so after a rollout
   * one replica can keep all of a loaded apiserver's traffic; 100,000 reviews is under two minutes at 1,000
   * reviews a second, after which kube-proxy can spread the new connection, for one handshake per 100,000
   * reviews. (A client that ignores Connection: close, as autocannon does, gets 503 after it; Go does not.)
   */
  maxRequestsPerSocket: number;
  /**
   * Reviews being decided or answered at once (counted from a received body to the answer written). A review
   * holds its parsed object and its answer (at most 1 MiB); the apiserver needs a few at a time (creations per
   * second × ~1 ms each). Beyond it: 429 with Retry-After, which client-go retries within the webhook timeout.
   */
  maxInflightReviews: number;
  /**
   * Request body bytes received and held (until the answer is written) across admission requests with bodies
   * over 16 KiB (smaller ones are not metered, see overload.ts): two bodies at the 7 MiB cap. Each costs at most
   * ~47 MiB of heap (see above), so two leave the 259 MiB heap more than half free next to the baseline's 40;
   * typical reviews are 5-30 KB, so this is still hundreds of them. Counted as bytes arrive, not as
   * Content-Length declares, so a client announcing 7 MiB and trickling holds only what it sent.
   */
  maxInflightBodyBytes: number;
}

/** What the inactivity timeout adds to the request timeout (see connectionTimeoutMs). */
export const STALL_GRACE_MS = 5_000;

/** 7 MiB: the apiserver sends at most two objects (object and oldObject) of at most 3 MiB each, plus framing. */
export const BODY_LIMIT = 7 * 1024 * 1024;

export const DEFAULT_LIMITS: Readonly<TransportLimits> = Object.freeze({
  tlsHandshakeTimeoutMs: 10_000,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: MAX_WEBHOOK_TIMEOUT_SECONDS * 1000,
  connectionTimeoutMs: MAX_WEBHOOK_TIMEOUT_SECONDS * 1000 + STALL_GRACE_MS,
  keepAliveTimeoutMs: 95_000,
  connectionsCheckingIntervalMs: 1_000,
  maxConnections: 1024,
  maxConnectionsPerClient: 1024 / 4,
  firstRequestTimeoutMs: 10_000,
  maxRequestsPerSocket: 100_000,
  maxInflightReviews: 64,
  maxInflightBodyBytes: 2 * BODY_LIMIT,
});

export class LimitsError extends Error {}

/**
 * The defaults with `overrides` applied, checked: every value a positive integer, and the orderings node
 * enforces or that make the limits mean anything (headers before the whole request; one body fits the budget).
 */
export function resolveLimits(overrides: Partial<TransportLimits> = {}): Readonly<TransportLimits> {
  const l: TransportLimits = { ...DEFAULT_LIMITS };
  for (const [key, value] of Object.entries(overrides) as Array<[keyof TransportLimits, unknown]>) {
    if (!(key in DEFAULT_LIMITS)) throw new LimitsError(`unknown transport limit "${key}"`);
    if (value === undefined) continue;
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0) {
      throw new LimitsError(`transport limit ${key}: ${JSON.stringify(value)} is not a positive whole number`);
    }
    l[key] = value;
  }
  // Derived from maxConnections unless given: a quarter of the slots for one client.
  if (overrides.maxConnectionsPerClient === undefined)
    l.maxConnectionsPerClient = Math.max(1, Math.floor(l.maxConnections / 4));
  if (l.headersTimeoutMs > l.requestTimeoutMs) {
    throw new LimitsError(
      `transport limit headersTimeoutMs (${l.headersTimeoutMs}) exceeds requestTimeoutMs (${l.requestTimeoutMs}): ` +
        'headers are part of the request',
    );
  }
  if (l.maxConnectionsPerClient > l.maxConnections) {
    throw new LimitsError(
      `transport limit maxConnectionsPerClient (${l.maxConnectionsPerClient}) exceeds maxConnections ` +
        `(${l.maxConnections}): one client could still take every connection`,
    );
  }
  if (l.maxInflightBodyBytes < BODY_LIMIT) {
    throw new LimitsError(
      `transport limit maxInflightBodyBytes (${l.maxInflightBodyBytes}) is below the ${BODY_LIMIT}-byte body cap: ` +
        'a largest review could never be served',
    );
  }
  return Object.freeze(l);
}
