/**
 * The few DER (X.690) encodings an X.509 certificate needs, and a reader just deep enough to lift a name out
 * of a certificate. node:crypto parses and verifies certificates (X509Certificate) but cannot make one, and
 * node-forge signs RSA only; these ~100 lines plus node:crypto's `sign` make ECDSA P-256 certificates. Every
 * certificate built with them is parsed and verified by OpenSSL (X509Certificate) before it is used
 * (x509.ts), so an encoding mistake fails loudly at issue time instead of at a client's handshake.
 */

/** Tag and length, then the contents. Lengths use the short form below 128 and the minimal long form above. */
export function tlv(tag: number, ...contents: Buffer[]): Buffer {
  const body = Buffer.concat(contents);
  const n = body.length;
  let len: Buffer;
  if (n < 0x80) len = Buffer.from([n]);
  else {
    const bytes: number[] = [];
    for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
    len = Buffer.from([0x80 | bytes.length, ...bytes]);
  }
  return Buffer.concat([Buffer.from([tag]), len, body]);
}

export const seq = (...items: Buffer[]): Buffer => tlv(0x30, ...items);
export const set = (...items: Buffer[]): Buffer => tlv(0x31, ...items);
export const octets = (b: Buffer): Buffer => tlv(0x04, b);
export const utf8 = (s: string): Buffer => tlv(0x0c, Buffer.from(s, 'utf8'));
export const nul = (): Buffer => Buffer.from([0x05, 0x00]);
export const bool = (v: boolean): Buffer => Buffer.from([0x01, 0x01, v ? 0xff : 0x00]);
/** [n] EXPLICIT: a constructed context-specific wrapper around an encoded value. */
export const explicit = (n: number, inner: Buffer): Buffer => tlv(0xa0 | n, inner);
/** [n] IMPLICIT over a primitive type: the contents keep their bytes, the tag becomes context-specific. */
export const implicit = (n: number, contents: Buffer): Buffer => tlv(0x80 | n, contents);

/** A non-negative INTEGER from its big-endian magnitude: minimal, with a 0x00 when the top bit is set. */
export function uint(magnitude: Buffer | number): Buffer {
  let b = typeof magnitude === 'number' ? Buffer.from([magnitude]) : magnitude;
  let i = 0;
  while (i < b.length - 1 && b[i] === 0) i++;
  b = b.subarray(i);
  return tlv(0x02, b[0] & 0x80 ? Buffer.concat([Buffer.from([0]), b]) : b);
}

export function oid(dotted: string): Buffer {
  const arcs = dotted.split('.').map(Number);
  const out = [40 * arcs[0] + arcs[1]];
  for (const arc of arcs.slice(2)) {
    const groups = [arc & 0x7f];
    for (let v = Math.floor(arc / 128); v > 0; v = Math.floor(v / 128)) groups.unshift((v & 0x7f) | 0x80);
    out.push(...groups);
  }
  return tlv(0x06, Buffer.from(out));
}

/** A BIT STRING of whole bytes (keys, signatures). */
export const bits = (b: Buffer): Buffer => tlv(0x03, Buffer.from([0]), b);

/** A named-bit BIT STRING (KeyUsage): DER drops trailing zero bits and counts them as unused. */
export function namedBits(set: readonly number[]): Buffer {
  const last = Math.max(...set);
  const bytes = Buffer.alloc(Math.floor(last / 8) + 1);
  for (const n of set) bytes[Math.floor(n / 8)] |= 0x80 >> (n % 8);
  return tlv(0x03, Buffer.from([7 - (last % 8)]), bytes);
}

/** RFC 5280 4.1.2.5: UTCTime through 2049, GeneralizedTime from 2050; always UTC, whole seconds. */
export function time(d: Date): Buffer {
  const iso = d.toISOString(); // 2026-01-02T03:04:05.678Z
  const digits = `${iso.slice(0, 19).replace(/[-:T]/g, '')}Z`; // 20260102030405Z
  const year = d.getUTCFullYear();
  if (year >= 1950 && year < 2050) return tlv(0x17, Buffer.from(digits.slice(2), 'ascii'));
  return tlv(0x18, Buffer.from(digits, 'ascii'));
}

/** One element at `offset`: where its contents start and end. Throws on a truncated or indefinite length. */
export function readTlv(der: Buffer, offset: number): { tag: number; start: number; end: number } {
  const tag = der[offset];
  let n = der[offset + 1];
  let start = offset + 2;
  if (n & 0x80) {
    const count = n & 0x7f;
    if (count === 0 || count > 4) throw new Error(`unsupported DER length at byte ${offset}`);
    n = 0;
    for (let i = 0; i < count; i++) n = n * 256 + der[start + i];
    start += count;
  }
  if (tag === undefined || start + n > der.length) throw new Error(`truncated DER at byte ${offset}`);
  return { tag, start, end: start + n };
}

/** The children of the constructed element at `offset`, each as its full encoding. */
export function children(der: Buffer, offset: number): Buffer[] {
  const { start, end } = readTlv(der, offset);
  const out: Buffer[] = [];
  for (let p = start; p < end; ) {
    const child = readTlv(der, p);
    out.push(der.subarray(p, child.end));
    p = child.end;
  }
  return out;
}
