/**
 * The validator's tiny wire protocol. The probe sends a hello (magic + random token); each of the validator's own
 * listeners answers HMAC-SHA256(key, token ‖ who answered ‖ the connection's client address) with a key that never
 * leaves the process. So a correct proof says three things at once: the connection ended at one of our listeners (a
 * remote server cannot compute it, even knowing this protocol), which one (the proxy's outbound or inbound port, or
 * the stand-in at the probe's own destination), and that it was the probe's own connection — a relay that accepted
 * the probe and opened a second connection to our listener would present another client port and get a proof the
 * probe rejects. The last point is meshgate's stand-in for Istio's SO_ORIGINAL_DST check, which Node cannot read.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** Lets the listener drop connections that are not probes (and makes captures readable) — not a security measure. */
const MAGIC = Buffer.from('MGVALID2', 'ascii');

/** 32 random bytes: unguessable, and the same size as the HMAC-SHA256 output the listener returns. */
export const TOKEN_BYTES = 32;
export const HELLO_BYTES = MAGIC.length + TOKEN_BYTES;
export const PROOF_BYTES = 32;

export interface Secret {
  /** HMAC key shared only between this process's listeners and probe. */
  readonly key: Buffer;
  /** The token the probe sends; fresh per run so an old proof cannot be replayed. */
  readonly token: Buffer;
}

/**
 * Which of the validator's listeners answered: `outbound`/`inbound` are the proxy's capture ports (a redirected
 * probe), `destination` is the stand-in bound at the probe address itself (a probe that was not redirected).
 */
export type ListenerRole = 'outbound' | 'inbound' | 'destination';

/** One answering listener, as both sides name it: its role and the "host:port" it is bound to. */
export interface Answerer {
  readonly role: ListenerRole;
  readonly address: string;
}

export function createSecret(randomBytes: (n: number) => Buffer): Secret {
  return { key: randomBytes(32), token: randomBytes(TOKEN_BYTES) };
}

export function helloFor(token: Buffer): Buffer {
  return Buffer.concat([MAGIC, token]);
}

/**
 * The answer of listener `by` to a hello arriving on a connection whose client end is `client` ("host:port"), or
 * undefined when the bytes are not a probe hello.
 */
export function proofFor(key: Buffer, hello: Buffer, by: Answerer, client: string): Buffer | undefined {
  if (hello.length !== HELLO_BYTES || !hello.subarray(0, MAGIC.length).equals(MAGIC)) return undefined;
  // NUL separators: no role, address or client text contains one, so the input is unambiguous.
  const context = Buffer.from(`\0${by.role}\0${by.address}\0${client}`, 'utf8');
  return createHmac('sha256', key).update(hello.subarray(MAGIC.length)).update(context).digest();
}

/**
 * Which of `candidates` produced `answer` for our token on the connection whose client end is `client`, or
 * undefined when none did (a forgery, another protocol, or our listener answering somebody else's connection).
 */
export function whoAnswered(
  secret: Secret,
  answer: Buffer,
  candidates: readonly Answerer[],
  client: string,
): Answerer | undefined {
  const hello = helloFor(secret.token);
  return candidates.find((by) => {
    const expected = proofFor(secret.key, hello, by, client);
    return expected !== undefined && answer.length === expected.length && timingSafeEqual(answer, expected);
  });
}
