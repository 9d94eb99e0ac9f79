/**
 * What a call to the apiserver can end in, other than its answer:
 * - `KubeApiError`: the apiserver answered with a status other than 2xx (404, 409, 410 Gone, 429, 500 …); `code` is
 *   the HTTP status, `reason` and `message` come from the Status object it sent (empty when it sent none);
 * - `KubeTransportError`: no answer (refused, reset, TLS failure, timeout, an answer larger than allowed); `sent`
 *   says whether the request may have reached the apiserver, which decides whether a write may be retried.
 * `describeKubeError` gives one line for these and for @kubernetes/client-node's ApiException (the CLI's client),
 * read by its shape (src/log/fields.ts), so that this module never loads that client.
 */
import { errorFields, errorText } from '../log/fields.ts';

export class KubeApiError extends Error {
  override name = 'KubeApiError';
  readonly code: number;
  readonly reason: string;
  /** Seconds from the Retry-After header (429, 503), when the apiserver sent one. */
  readonly retryAfterSeconds?: number;

  constructor(code: number, reason: string, message: string, retryAfterSeconds?: number) {
    super(message);
    this.code = code;
    this.reason = reason;
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

export class KubeTransportError extends Error {
  override name = 'KubeTransportError';
  /** false: the connection failed before the request could be written (refused, DNS, TLS): safe to retry any verb. */
  readonly sent: boolean;

  constructor(message: string, sent: boolean, cause?: unknown) {
    super(message, { cause });
    this.sent = sent;
  }
}

/** The HTTP status of an API error from either client, else undefined. */
export function statusCode(err: unknown): number | undefined {
  if (err instanceof KubeApiError) return err.code;
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'number' && 'body' in (err as object) ? code : undefined;
}

/** One line for an API error in messages: "404 NotFound: …"; any other error with its type ("TypeError: …"). */
export function describeKubeError(err: unknown): string {
  const f = errorFields(err);
  return typeof f.code === 'number' ? errorText(err) : `${f.type}: ${f.message}`;
}
