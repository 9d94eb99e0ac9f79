/**
 * validateRedirect: the whole check as one function returning a value. Listen on the proxy's ports (and, for a
 * pod-scope probe, on the probe address itself), probe, map the outcome to a stable reason. It never throws — an
 * unexpected error is the `internal_error` result — so the CLI and tests only ever look at the result. No argv, env
 * or files here.
 */
import { randomBytes as cryptoRandomBytes } from 'node:crypto';
import { classify, type ClassifyContext } from './classify.ts';
import { formatHostPort, startProofListener, type ProofListener } from './listener.ts';
import { EXTERNAL_SYN_WINDOW_MS, type ProbeEndpoint, type ValidateOptions } from './options.ts';
import { runProbe } from './probe.ts';
import { createSecret, type ListenerRole } from './proof.ts';
import type { ValidatorReason } from './reasons.ts';

export type ValidateResult =
  | {
      readonly ok: true;
      readonly elapsedMs: number;
      /** "host:port" of the listener that answered, and which capture port it stands in for. */
      readonly listener: string;
      readonly role: Exclude<ListenerRole, 'destination'>;
      /** The probe's own end of the connection, as the listener saw it. */
      readonly client: string;
    }
  | { readonly ok: false; readonly reason: ValidatorReason; readonly detail: string; readonly elapsedMs: number };

export interface RedirectProbeDeps {
  /** Monotonic milliseconds; injectable so elapsed times can be pinned in tests. */
  readonly now?: () => number;
  /** Source of the HMAC key and token. */
  readonly randomBytes?: (n: number) => Buffer;
}

export async function validateRedirect(opts: ValidateOptions, deps: RedirectProbeDeps = {}): Promise<ValidateResult> {
  const now = deps.now ?? (() => performance.now());
  const start = now();
  const elapsed = () => Math.max(0, Math.round(now() - start));
  const fail = (reason: ValidatorReason, detail: string): ValidateResult => ({
    ok: false,
    reason,
    detail,
    elapsedMs: elapsed(),
  });

  const capture: ProofListener[] = [];
  let destination: ProofListener | undefined;
  try {
    const secret = createSecret(deps.randomBytes ?? cryptoRandomBytes);
    const ports: Array<[Exclude<ListenerRole, 'destination'>, number | null]> = [
      ['outbound', opts.outboundPort],
      ['inbound', opts.inboundPort],
    ];
    for (const [role, port] of ports) {
      if (port === null) continue;
      try {
        capture.push(await startProofListener(role, opts.listenAddress, port, secret.key));
      } catch (err) {
        return fail(
          'listen_failed',
          listenFailure(formatHostPort(opts.listenAddress, port), err as NodeJS.ErrnoException),
        );
      }
    }
    if (opts.scope === 'pod') {
      try {
        destination = await startProofListener('destination', opts.probe.host, opts.probe.port, secret.key);
      } catch (err) {
        return fail(...destinationFailure(opts.probe, err as NodeJS.ErrnoException));
      }
    }
    const remaining = opts.timeoutMs - elapsed();
    if (remaining <= 0) return fail('timeout', `listening took longer than the ${opts.timeoutMs}ms timeout`);
    const handshakeMs = opts.scope === 'external' ? Math.min(remaining, EXTERNAL_SYN_WINDOW_MS) : remaining;
    const candidates = destination ? [...capture, destination] : capture;
    const outcome = await runProbe(
      { target: opts.probe, source: opts.sourceAddress, candidates, timeoutMs: remaining, handshakeMs },
      secret,
    );
    const ctx: ClassifyContext = { opts, probe: formatEndpoint(opts.probe), capture, identity: identity() };
    if (outcome.kind !== 'proved') return fail(...classify(outcome, ctx));
    const { by, client } = outcome;
    if (by.role === 'destination') return fail(...classify({ kind: 'reached_destination', client }, ctx));
    return { ok: true, elapsedMs: elapsed(), listener: by.address, role: by.role, client };
  } catch (err) {
    return fail('internal_error', `unexpected error: ${(err as Error)?.stack ?? String(err)}`);
  } finally {
    await Promise.all([...capture, ...(destination ? [destination] : [])].map((l) => l.close()));
  }
}

function listenFailure(where: string, err: NodeJS.ErrnoException): string {
  const hint =
    err.code === 'EADDRINUSE'
      ? ' (something already listens there: the validator must run before the proxy starts)'
      : err.code === 'EACCES'
        ? ' (ports below 1024 need a capability the validator must not have)'
        : '';
  return `listen on ${where} failed with ${err.code ?? 'an error'}: ${err.message}${hint}`;
}

/** Binding the probe address is the locality check: nothing has been sent when it fails. */
function destinationFailure(probe: ProbeEndpoint, err: NodeJS.ErrnoException): [ValidatorReason, string] {
  const where = formatEndpoint(probe);
  if (err.code === 'EADDRNOTAVAIL') {
    return [
      'probe_not_local',
      `${probe.host} is not an address of this pod (listening on ${where} failed with EADDRNOTAVAIL), ` +
        'so a probe there would leave the pod if not redirected; nothing was sent. ' +
        (probe.family === 6
          ? 'The mesh assigns ::6 to lo when it sets up redirection: it did not run here'
          : 'Use a loopback address such as 127.0.0.6, or --external-probe'),
    ];
  }
  return [
    'listen_failed',
    `${listenFailure(where, err)}; ` +
      'the validator listens on the probe address so that an unredirected probe stays in the pod and is recognised',
  ];
}

/** Whose traffic the rules had to redirect; in the detail because Istio's rules depend on it. */
function identity(): string {
  return `uid ${process.getuid?.() ?? '?'} gid ${process.getgid?.() ?? '?'}`;
}

export function formatEndpoint(e: ProbeEndpoint): string {
  return formatHostPort(e.host, e.port);
}
