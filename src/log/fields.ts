/**
 * Errors as log fields: `{"err":{"type":"KubeApiError","code":409,"reason":"Conflict","message":"…"}}`, which a
 * log pipeline indexes and filters (`err.code=409`). Two clients throw API errors: the daemons' own
 * (src/kube/api: KubeApiError with the Status' reason and message, KubeTransportError around the socket's error)
 * and @kubernetes/client-node in the CLI, whose ApiException carries the whole Status body and headers as escaped
 * JSON in its message — logging that message put JSON inside a string, so its Status is read instead. Both are
 * recognised by shape (a numeric HTTP code with a body or a reason), so this module loads no Kubernetes client.
 */

export interface ErrorFields {
  /** The error's class: ApiException, Error, TypeError, … */
  type: string;
  message: string;
  /** The HTTP status of an API error; the system code (ECONNREFUSED, ETIMEDOUT) of a network one. */
  code?: number | string;
  /** The Kubernetes Status reason of an API error (Conflict, NotFound, Forbidden, …). */
  reason?: string;
}

/** Long enough for any Kubernetes Status message; a proxy's HTML error page is cut. */
const MAX_BODY_CHARS = 500;

interface ApiError {
  code: number;
  body: unknown;
}

/** client-node's ApiException: the Status is its body. */
function isApiError(err: unknown): err is Error & ApiError {
  return err instanceof Error && typeof (err as Partial<ApiError>).code === 'number' && 'body' in err;
}

/** src/kube/errors.ts' KubeApiError: the Status' reason ('' when the apiserver sent none) and message, read already. */
function isReadApiError(err: unknown): err is Error & { code: number; reason: string } {
  const e = err as { code?: unknown; reason?: unknown };
  return err instanceof Error && typeof e.code === 'number' && typeof e.reason === 'string';
}

/** The Status an API error's body holds (it comes as text or already parsed), or its text when it is not one. */
function status(body: unknown): { reason?: string; message?: string } {
  let value = body;
  if (typeof body === 'string') {
    try {
      value = JSON.parse(body);
    } catch {
      return { message: body.slice(0, MAX_BODY_CHARS) };
    }
  }
  if (value === null || typeof value !== 'object') return {};
  const { reason, message } = value as { reason?: unknown; message?: unknown };
  return {
    reason: typeof reason === 'string' && reason ? reason : undefined,
    message: typeof message === 'string' && message ? message : undefined,
  };
}

export function errorFields(err: unknown): ErrorFields {
  if (isApiError(err)) {
    const s = status(err.body);
    return {
      type: err.constructor.name,
      code: err.code,
      ...(s.reason ? { reason: s.reason } : {}),
      message: s.message ?? `HTTP ${err.code}`,
    };
  }
  if (isReadApiError(err)) {
    return {
      type: err.name,
      code: err.code,
      ...(err.reason ? { reason: err.reason } : {}),
      message: err.message || `HTTP ${err.code}`,
    };
  }
  if (err instanceof Error) {
    // A KubeTransportError wraps the socket's error, which has the system code (ECONNREFUSED, ETIMEDOUT).
    const code = (err as NodeJS.ErrnoException).code ?? (err.cause as NodeJS.ErrnoException | undefined)?.code;
    return { type: err.name, message: err.message, ...(code !== undefined ? { code } : {}) };
  }
  return { type: typeof err, message: String(err) };
}

/** The error in one line for people (readiness reasons, sweep results): "503 ServiceUnavailable: …" for an API error. */
export function errorText(err: unknown): string {
  const f = errorFields(err);
  return typeof f.code === 'number' ? `${f.code}${f.reason ? ` ${f.reason}` : ''}: ${f.message}` : f.message;
}
