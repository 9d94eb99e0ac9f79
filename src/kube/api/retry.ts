/**
 * When a failed call to the apiserver is tried again, and after how long. Pure: the client (client.ts) asks after
 * each failure; table tests pin every case (test/kube/api/retry.test.ts). The rules follow client-go's:
 * - 429 Too Many Requests (priority and fairness, or a client-side throttle in front): always, after its Retry-After;
 *   except where the caller says a 429 is an answer (an eviction a PodDisruptionBudget refuses);
 * - 5xx: a read always (nothing changed); a write only when the apiserver sent Retry-After (it says it did not act);
 * - no answer at all: a read always; a write only when the request never left (refused, DNS, TLS handshake), since
 *   a reset after sending may have been applied, and the caller's own loop decides what to do then;
 * - 4xx other than 429, a TLS verification failure, an answer too large: never.
 * Waits grow exponentially from BASE_MS to MAX_BACKOFF_MS with half of each wait random, so replicas restarted
 * together do not retry in step; a Retry-After is obeyed up to MAX_RETRY_AFTER_MS.
 */
import { KubeApiError, KubeTransportError } from '../errors.ts';

/** Attempts per call, the first included: four retries span ~3 s of backoff, enough for an apiserver's restart blip. */
export const MAX_ATTEMPTS = 5;
export const BASE_MS = 200;
export const MAX_BACKOFF_MS = 5_000;
/** The apiserver's priority and fairness says 1 s; a proxy or an overloaded server may say more. A daemon waits no
 * longer than this per attempt, so a bad header cannot park it. */
export const MAX_RETRY_AFTER_MS = 30_000;

export interface RetryPolicy {
  maxAttempts: number;
  /** Statuses that are this call's answer, never retried (e.g. 429 for an eviction). */
  answers?: readonly number[];
}

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** Transport failures that say the certificate chain or name is wrong: retrying cannot help. */
const TLS_VERIFY = /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|ERR_TLS_CERT_ALTNAME|HOSTNAME_MISMATCH/;

/** Milliseconds to wait before attempt `attempt + 1`, or undefined: give up and throw `err`. */
export function retryDelay(
  method: Method,
  err: unknown,
  attempt: number,
  policy: RetryPolicy,
  random: () => number = Math.random,
): number | undefined {
  if (attempt >= policy.maxAttempts) return undefined;
  const backoff = () => {
    const full = Math.min(MAX_BACKOFF_MS, BASE_MS * 2 ** (attempt - 1));
    return Math.round(full / 2 + (full / 2) * random());
  };
  if (err instanceof KubeApiError) {
    if (policy.answers?.includes(err.code)) return undefined;
    const after =
      err.retryAfterSeconds === undefined ? undefined : Math.min(MAX_RETRY_AFTER_MS, err.retryAfterSeconds * 1000);
    if (err.code === 429) return after ?? backoff();
    if ([500, 502, 503, 504].includes(err.code)) {
      if (after !== undefined) return after;
      return method === 'GET' ? backoff() : undefined;
    }
    return undefined;
  }
  if (err instanceof KubeTransportError) {
    const code = String((err.cause as { code?: unknown } | undefined)?.code ?? '');
    if (TLS_VERIFY.test(code)) return undefined;
    return method === 'GET' || !err.sent ? backoff() : undefined;
  }
  return undefined;
}

/** The Retry-After header as seconds (the apiserver sends whole seconds; an HTTP date is read too). */
export function parseRetryAfter(header: string | undefined, now = Date.now()): number | undefined {
  if (!header) return undefined;
  if (/^\d+$/.test(header.trim())) return Number(header.trim());
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}
