/**
 * How `meshgate check`'s reads (kube-reader.ts) word what went wrong. "Not found" is `undefined` to the caller; any
 * other API refusal (403 from RBAC, 500) is a `ReadError` the check reports; a failure to reach the apiserver at all,
 * or credentials it rejects (401), is a `ConnectionError` (exit 2): no check can say anything then.
 */
import { ApiException } from '@kubernetes/client-node';
import { describeKubeError, KubeApiError, KubeTransportError } from '../kube/errors.ts';
import type { ReadError } from './facts.ts';

export class ConnectionError extends Error {}

/** fetch's own message is "fetch failed": the reason (ECONNREFUSED, a TLS error) is in its cause. */
function networkDetail(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } })?.cause;
  if (!cause) return describeKubeError(err);
  return cause.code && !cause.message?.includes(cause.code)
    ? `${cause.code}: ${cause.message}`
    : String(cause.message ?? cause);
}

/**
 * The failure of reading `what` from `server`: 404 → undefined (or, for a list, a ReadError naming it), other API
 * statuses → ReadError, 401 and no answer → thrown ConnectionError. A 403 is an answer: RBAC hides this object from
 * these credentials, and the check that needs it says so. Both clients' errors: @kubernetes/client-node's
 * ApiException (single objects) and src/kube's KubeApiError/KubeTransportError (lists, raw-list.ts).
 */
export function readFailure(err: unknown, server: string, what: string, list: boolean): ReadError | undefined {
  const code = err instanceof ApiException || err instanceof KubeApiError ? err.code : undefined;
  if (code === 404) return list ? { error: `${what}: not found` } : undefined;
  if (code === 401) throw new ConnectionError(`${server} rejected the credentials (401 Unauthorized) reading ${what}`);
  if (code !== undefined) return { error: describeKubeError(err) };
  const detail = err instanceof KubeTransportError ? err.message : networkDetail(err);
  throw new ConnectionError(`cannot reach the apiserver at ${server} (reading ${what}): ${detail}`);
}
