/**
 * The validator's tiny wire protocol. The probe sends a hello (magic + random token); the local listener answers
 * HMAC-SHA256(key, token) with a key that never leaves the process. A remote server that received the hello cannot
 * produce that answer even if it knows this protocol, so a correct proof means the connection ended at our listener.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** Lets the listener drop connections that are not probes (and makes captures readable) — not a security measure. */
const MAGIC = Buffer.from('MGVALID1', 'ascii');

/** 32 random bytes: unguessable, and the same size as the HMAC-SHA256 output the listener returns. */
export const TOKEN_BYTES = 32;
export const HELLO_BYTES = MAGIC.length + TOKEN_BYTES;
export const PROOF_BYTES = 32;

export interface Secret {
  /** HMAC key shared only between this process's listener and probe. */
  readonly key: Buffer;
  /** The token the probe sends; fresh per run so an old proof cannot be replayed. */
  readonly token: Buffer;
}

export function createSecret(randomBytes: (n: number) => Buffer): Secret {
  return { key: randomBytes(32), token: randomBytes(TOKEN_BYTES) };
}

export function helloFor(token: Buffer): Buffer {
  return Buffer.concat([MAGIC, token]);
}

/** The listener's answer to a hello, or undefined when the bytes are not a probe hello. */
export function proofFor(key: Buffer, hello: Buffer): Buffer | undefined {
  if (hello.length !== HELLO_BYTES || !hello.subarray(0, MAGIC.length).equals(MAGIC)) return undefined;
  return createHmac('sha256', key).update(hello.subarray(MAGIC.length)).digest();
}

/** True when `answer` is the proof our listener would give for our token. */
export function isValidProof(secret: Secret, answer: Buffer): boolean {
  const expected = proofFor(secret.key, helloFor(secret.token));
  return expected !== undefined && answer.length === expected.length && timingSafeEqual(answer, expected);
}
