/** The proof protocol: only the holder of the key can answer, whatever else a server knows. */
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createSecret, HELLO_BYTES, helloFor, isValidProof, proofFor, PROOF_BYTES } from '../../src/validator/proof.ts';

describe('proof', () => {
  const secret = createSecret(randomBytes);

  it('the listener with the key answers a hello with a valid proof', () => {
    const hello = helloFor(secret.token);
    expect(hello.length).toBe(HELLO_BYTES);
    const proof = proofFor(secret.key, hello)!;
    expect(proof.length).toBe(PROOF_BYTES);
    expect(isValidProof(secret, proof)).toBe(true);
  });

  it('answers that do not use the key are refused', () => {
    const forgeries = [
      Buffer.from(secret.token).reverse(),
      createHash('sha256').update(secret.token).digest(),
      createHmac('sha256', randomBytes(32)).update(secret.token).digest(),
      proofFor(randomBytes(32), helloFor(secret.token))!,
      Buffer.alloc(PROOF_BYTES),
      proofFor(secret.key, helloFor(secret.token))!.subarray(0, PROOF_BYTES - 1),
    ];
    for (const f of forgeries) expect(isValidProof(secret, f)).toBe(false);
  });

  it('the listener does not answer bytes that are not a hello', () => {
    expect(proofFor(secret.key, Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n1234567890123'))).toBeUndefined();
    expect(proofFor(secret.key, helloFor(secret.token).subarray(1))).toBeUndefined();
  });

  it('uses fresh randomness for key and token', () => {
    const calls: number[] = [];
    const s = createSecret((n) => (calls.push(n), Buffer.alloc(n, calls.length)));
    expect(calls).toEqual([32, 32]);
    expect(s.key.equals(s.token)).toBe(false);
  });
});
