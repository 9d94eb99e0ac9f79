/**
 * The probe: one plain TCP connection (no raw sockets, no capabilities) to the probe address, carrying the hello,
 * and a verdict on what came back. It reports an outcome value; mapping outcomes to reason codes is validate.ts's job.
 */
import { connect } from 'node:net';
import type { Endpoint } from './options.ts';
import { helloFor, isValidProof, PROOF_BYTES, type Secret } from './proof.ts';

export type ProbeOutcome =
  /** Our listener answered: the connection was redirected to it. */
  | { readonly kind: 'proved' }
  /** No connection was established: refused, reset during the handshake, unreachable. */
  | { readonly kind: 'connect_failed'; readonly code: string; readonly message: string }
  /** A connection was established, but the other end is not our listener. */
  | { readonly kind: 'not_proved'; readonly detail: string }
  /** The deadline passed; `connected` says whether the handshake had completed. */
  | { readonly kind: 'timed_out'; readonly connected: boolean };

/** Connects to `target`, sends the hello and waits up to `timeoutMs` for the proof. Never rejects. */
export function runProbe(target: Endpoint, secret: Secret, timeoutMs: number): Promise<ProbeOutcome> {
  return new Promise((resolve) => {
    let connected = false;
    let answer = Buffer.alloc(0);
    const socket = connect({ host: target.host, port: target.port, family: target.family, noDelay: true });
    const settle = (outcome: ProbeOutcome) => {
      clearTimeout(timer);
      socket.removeAllListeners();
      socket.on('error', () => {});
      socket.destroy();
      resolve(outcome);
    };
    const timer = setTimeout(() => settle({ kind: 'timed_out', connected }), timeoutMs);

    socket.on('connect', () => {
      connected = true;
      socket.write(helloFor(secret.token));
    });
    socket.on('data', (chunk: Buffer) => {
      answer = Buffer.concat([answer, chunk]);
      if (answer.length < PROOF_BYTES) return;
      const got = answer.subarray(0, PROOF_BYTES);
      if (isValidProof(secret, got)) settle({ kind: 'proved' });
      else settle({ kind: 'not_proved', detail: `the answer was not the proof for our token (got ${preview(answer)})` });
    });
    socket.on('end', () => {
      settle({ kind: 'not_proved', detail: `the peer closed the connection after ${answer.length} bytes (${preview(answer)})` });
    });
    socket.on('error', (err: NodeJS.ErrnoException) => {
      const code = err.code ?? 'UNKNOWN';
      if (connected) settle({ kind: 'not_proved', detail: `the connection failed after it was established: ${code}` });
      else settle({ kind: 'connect_failed', code, message: err.message });
    });
  });
}

/** First bytes of an unexpected answer, printable, so "HTTP/1.1 400" or a banner shows up in the termination message. */
function preview(bytes: Buffer): string {
  if (bytes.length === 0) return 'no data';
  const shown = bytes.subarray(0, 24).toString('latin1').replace(/[^\x20-\x7e]/g, '.');
  return `"${shown}"${bytes.length > 24 ? '…' : ''}`;
}
