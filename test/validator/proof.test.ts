/** The proof protocol: only the holder of the key can answer, it names who answered, and it is bound to one connection. */
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  createSecret,
  HELLO_BYTES,
  helloFor,
  proofFor,
  PROOF_BYTES,
  whoAnswered,
  type Answerer,
} from '../../src/validator/proof.ts';

const outbound: Answerer = { role: 'outbound', address: '127.0.0.1:15001' };
const inbound: Answerer = { role: 'inbound', address: '127.0.0.1:15006' };
const destination: Answerer = { role: 'destination', address: '127.0.0.6:15002' };
const all = [outbound, inbound, destination];
const client = '127.0.0.1:40000';

describe('proof', () => {
  const secret = createSecret(randomBytes);
  const hello = helloFor(secret.token);

  it('each listener with the key answers a hello with a proof that names it', () => {
    expect(hello.length).toBe(HELLO_BYTES);
    for (const by of all) {
      const proof = proofFor(secret.key, hello, by, client)!;
      expect(proof.length).toBe(PROOF_BYTES);
      expect(whoAnswered(secret, proof, all, client)).toEqual(by);
    }
  });

  it('a proof for another connection is refused: a relay presents its own client port', () => {
    const relayed = proofFor(secret.key, hello, outbound, '127.0.0.1:40001')!;
    expect(whoAnswered(secret, relayed, all, client)).toBeUndefined();
    expect(whoAnswered(secret, proofFor(secret.key, hello, outbound, '10.0.0.1:40000')!, all, client)).toBeUndefined();
  });

  it('a listener that is not a candidate is not recognised (same role, other port)', () => {
    const other = proofFor(secret.key, hello, { role: 'outbound', address: '127.0.0.1:15009' }, client)!;
    expect(whoAnswered(secret, other, all, client)).toBeUndefined();
  });

  it('answers that do not use the key are refused', () => {
    const forgeries = [
      Buffer.from(secret.token).reverse(),
      createHash('sha256').update(secret.token).digest(),
      createHmac('sha256', randomBytes(32)).update(secret.token).digest(),
      proofFor(randomBytes(32), hello, outbound, client)!,
      proofFor(secret.key, helloFor(randomBytes(32)), outbound, client)!,
      Buffer.alloc(PROOF_BYTES),
      proofFor(secret.key, hello, outbound, client)!.subarray(0, PROOF_BYTES - 1),
    ];
    for (const f of forgeries) expect(whoAnswered(secret, f, all, client)).toBeUndefined();
  });

  it('the listener does not answer bytes that are not a hello', () => {
    expect(
      proofFor(secret.key, Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n1234567890123'), outbound, client),
    ).toBeUndefined();
    expect(proofFor(secret.key, hello.subarray(1), outbound, client)).toBeUndefined();
  });

  it('uses fresh randomness for key and token', () => {
    const calls: number[] = [];
    const s = createSecret((n) => {
      calls.push(n);
      return Buffer.alloc(n, calls.length);
    });
    expect(calls).toEqual([32, 32]);
    expect(s.key.equals(s.token)).toBe(false);
  });
});
