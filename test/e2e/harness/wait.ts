// Polling helpers for e2e tests: everything in a control plane is eventually consistent, so tests wait for
// conditions instead of sleeping, and a timeout must say what was awaited and what was last seen.
import { setTimeout as sleep } from 'node:timers/promises';

/** Thrown from a `waitFor` check to stop waiting at once (e.g. the process that should become ready died). */
export class FatalWaitError extends Error {
  override name = 'FatalWaitError';
}

export interface WaitOptions {
  /** Give up after this long. 30 s suits API-level conditions on a 2-core machine; startup waits pass more. */
  timeoutMs?: number;
  /** Pause between checks. 250 ms keeps the apiserver load negligible while reacting quickly. */
  intervalMs?: number;
  /** Extra context appended to the timeout message (e.g. component log tails). Called only on failure. */
  describe?: () => string;
}

/**
 * Calls `check` until it returns a value other than undefined/null/false, and returns that value.
 * Errors thrown by `check` count as "not yet" (the last one is reported) except FatalWaitError, which aborts.
 * On timeout throws `timed out after Ns waiting for <what>` with the last value or error seen.
 */
export async function waitFor<T>(
  what: string,
  check: () => T | undefined | null | false | Promise<T | undefined | null | false>,
  opts: WaitOptions = {},
): Promise<T> {
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const intervalMs = opts.intervalMs ?? 250;
  const deadline = Date.now() + timeoutMs;
  let last = 'no check completed';
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined && value !== null && value !== false) return value;
      last = `last result: ${String(value)}`;
    } catch (err) {
      if (err instanceof FatalWaitError) throw err;
      last = `last error: ${describeError(err)}`;
    }
    if (Date.now() >= deadline) {
      const extra = opts.describe ? `\n${opts.describe()}` : '';
      throw new Error(`timed out after ${Math.round(timeoutMs / 1000)}s waiting for ${what} (${last})${extra}`);
    }
    await sleep(Math.min(intervalMs, Math.max(0, deadline - Date.now())));
  }
}

/** One-line description of an error, including the HTTP status and body of client-node ApiExceptions. */
export function describeError(err: unknown): string {
  if (err && typeof err === 'object' && 'code' in err && 'body' in err) {
    const body = (err as { body: unknown }).body;
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    return `HTTP ${(err as { code: unknown }).code}: ${text?.slice(0, 1000)}`;
  }
  return err instanceof Error ? err.message : String(err);
}

/** The HTTP status of a client-node ApiException (or undefined), e.g. to treat 404 as "not yet". */
export function httpStatus(err: unknown): number | undefined {
  if (err && typeof err === 'object' && 'code' in err && typeof (err as { code: unknown }).code === 'number') {
    return (err as { code: number }).code;
  }
  return undefined;
}
