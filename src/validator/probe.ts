/**
 * The probe: one plain TCP connection (no raw sockets, no capabilities) to the probe address, from an optional source
 * address, carrying the hello, and a verdict on what came back. It reports an outcome value; mapping outcomes to
 * reason codes is classify.ts's job.
 */
import { connect } from 'node:net';
import { formatHostPort } from './listener.ts';
import type { ProbeEndpoint } from './options.ts';
import { helloFor, PROOF_BYTES, whoAnswered, type Answerer, type Secret } from './proof.ts';

export type ProbeOutcome =
  /** One of our listeners answered this very connection; `by` says which. */
  | { readonly kind: 'proved'; readonly by: Answerer; readonly client: string }
  /** No connection was established: refused, reset during the handshake, unreachable, source not bindable. */
  | { readonly kind: 'connect_failed'; readonly code: string; readonly syscall: string; readonly message: string }
  /** A connection was established, but the other end is not one of our listeners. */
  | { readonly kind: 'not_proved'; readonly detail: string }
  /** A deadline passed after `waitedMs`; `connected` says whether the handshake had completed. */
  | { readonly kind: 'timed_out'; readonly connected: boolean; readonly waitedMs: number };

export interface ProbePlan {
  readonly target: ProbeEndpoint;
  /** null: the kernel picks the source address. */
  readonly source: string | null;
  /** The listeners whose proof counts as an answer. */
  readonly candidates: readonly Answerer[];
  /** Deadline for the whole probe. */
  readonly timeoutMs: number;
  /** Deadline for the TCP handshake alone (≤ timeoutMs); the socket is destroyed when it passes. */
  readonly handshakeMs: number;
}

/** Connects, sends the hello and waits for a proof. Never rejects. */
export function runProbe(plan: ProbePlan, secret: Secret): Promise<ProbeOutcome> {
  return new Promise((resolve) => {
    let client: string | undefined;
    let answer = Buffer.alloc(0);
    const { target } = plan;
    const socket = connect({
      host: target.host,
      port: target.port,
      family: target.family,
      ...(plan.source === null ? {} : { localAddress: plan.source }),
      noDelay: true,
    });
    const settle = (outcome: ProbeOutcome) => {
      clearTimeout(overall);
      clearTimeout(handshake);
      socket.removeAllListeners();
      socket.on('error', () => {});
      // Destroying a socket still in SYN-SENT sends nothing: the kernel just forgets the connection attempt.
      socket.destroy();
      resolve(outcome);
    };
    const overall = setTimeout(
      () => settle({ kind: 'timed_out', connected: client !== undefined, waitedMs: plan.timeoutMs }),
      plan.timeoutMs,
    );
    const handshake = setTimeout(() => {
      if (client === undefined) settle({ kind: 'timed_out', connected: false, waitedMs: plan.handshakeMs });
    }, plan.handshakeMs);

    socket.on('connect', () => {
      client = formatHostPort(socket.localAddress ?? '', socket.localPort ?? 0);
      socket.write(helloFor(secret.token));
    });
    socket.on('data', (chunk: Buffer) => {
      answer = Buffer.concat([answer, chunk]);
      if (answer.length < PROOF_BYTES) return;
      const by = whoAnswered(secret, answer.subarray(0, PROOF_BYTES), plan.candidates, client ?? '');
      if (by) settle({ kind: 'proved', by, client: client ?? '' });
      else
        settle({
          kind: 'not_proved',
          detail: `the answer was not a proof for our token and connection (got ${preview(answer)})`,
        });
    });
    socket.on('end', () => {
      settle({
        kind: 'not_proved',
        detail: `the peer closed the connection after ${answer.length} bytes (${preview(answer)})`,
      });
    });
    socket.on('error', (err: NodeJS.ErrnoException) => {
      const code = err.code ?? 'UNKNOWN';
      if (client !== undefined)
        settle({ kind: 'not_proved', detail: `the connection failed after it was established: ${code}` });
      else settle({ kind: 'connect_failed', code, syscall: err.syscall ?? 'connect', message: err.message });
    });
  });
}

/**
 * First bytes of an unexpected answer, printable, so "HTTP/1.1 400" or a banner shows up in the termination
 * message.
 */
function preview(bytes: Buffer): string {
  if (bytes.length === 0) return 'no data';
  const shown = bytes
    .subarray(0, 24)
    .toString('latin1')
    .replace(/[^\x20-\x7e]/g, '.');
  return `"${shown}"${bytes.length > 24 ? '…' : ''}`;
}
