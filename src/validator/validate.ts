/**
 * validateRedirect: the whole check as one function returning a value. Listen on the outbound port, probe, map the
 * outcome to a stable reason. It never throws — an unexpected error is the `internal_error` result — so the CLI and
 * tests only ever look at the result. No argv, env or files here.
 */
import { randomBytes as cryptoRandomBytes } from 'node:crypto';
import { startProofListener, type ProofListener } from './listener.ts';
import type { Endpoint, ValidateOptions } from './options.ts';
import { runProbe, type ProbeOutcome } from './probe.ts';
import { createSecret } from './proof.ts';
import type { Reason } from './reasons.ts';

export type ValidateResult =
  | { readonly ok: true; readonly elapsedMs: number; readonly listener: string }
  | { readonly ok: false; readonly reason: Reason; readonly detail: string; readonly elapsedMs: number };

export interface ValidateDeps {
  /** Monotonic milliseconds; injectable so elapsed times can be pinned in tests. */
  readonly now?: () => number;
  /** Source of the HMAC key and token. */
  readonly randomBytes?: (n: number) => Buffer;
}

export async function validateRedirect(opts: ValidateOptions, deps: ValidateDeps = {}): Promise<ValidateResult> {
  const now = deps.now ?? (() => performance.now());
  const start = now();
  const elapsed = () => Math.max(0, Math.round(now() - start));
  const fail = (reason: Reason, detail: string): ValidateResult => ({ ok: false, reason, detail, elapsedMs: elapsed() });

  let listener: ProofListener | undefined;
  try {
    const secret = createSecret(deps.randomBytes ?? cryptoRandomBytes);
    try {
      listener = await startProofListener(opts.listenAddress, opts.outboundPort, secret.key);
    } catch (err) {
      return fail('listen_failed', listenFailure(opts, err as NodeJS.ErrnoException));
    }
    const remaining = opts.timeoutMs - elapsed();
    if (remaining <= 0) return fail('timeout', `listening took longer than the ${opts.timeoutMs}ms timeout`);
    const outcome = await runProbe(opts.probe, secret, remaining);
    if (outcome.kind === 'proved') return { ok: true, elapsedMs: elapsed(), listener: listener.address };
    return fail(...classify(outcome, opts, listener));
  } catch (err) {
    return fail('internal_error', `unexpected error: ${(err as Error)?.stack ?? String(err)}`);
  } finally {
    await listener?.close();
  }
}

/** Maps a failed probe to its reason and a detail sentence with the facts an operator needs. */
function classify(outcome: Exclude<ProbeOutcome, { kind: 'proved' }>, opts: ValidateOptions, l: ProofListener): [Reason, string] {
  const probe = formatEndpoint(opts.probe);
  switch (outcome.kind) {
    case 'connect_failed':
      return [
        'redirect_missing',
        `connect to ${probe} failed with ${outcome.code} (${outcome.message}); a redirected connection would have reached ${l.address}`,
      ];
    case 'not_proved':
      return ['wrong_listener', `connected to ${probe} but ${outcome.detail}; the listener on ${l.address} answered ${l.answered()} probes`];
    case 'timed_out':
      if (outcome.connected) {
        return ['wrong_listener', `connected to ${probe} but got no proof within ${opts.timeoutMs}ms; the listener on ${l.address} answered ${l.answered()} probes`];
      }
      return ['timeout', `no TCP handshake with ${probe} within ${opts.timeoutMs}ms, so the SYN was not redirected to ${l.address}`];
  }
}

function listenFailure(opts: ValidateOptions, err: NodeJS.ErrnoException): string {
  const where = `${opts.listenAddress.includes(':') ? `[${opts.listenAddress}]` : opts.listenAddress}:${opts.outboundPort}`;
  const hint =
    err.code === 'EADDRINUSE'
      ? ' (something already listens there: the validator must run before the proxy starts)'
      : err.code === 'EACCES'
        ? ' (ports below 1024 need a capability the validator must not have)'
        : '';
  return `listen on ${where} failed with ${err.code ?? 'an error'}: ${err.message}${hint}`;
}

export function formatEndpoint(e: Endpoint): string {
  return e.family === 6 ? `[${e.host}]:${e.port}` : `${e.host}:${e.port}`;
}
