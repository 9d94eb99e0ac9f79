/**
 * The DER builder and certificates made with it, checked by two independent parsers: node's X509Certificate
 * (OpenSSL in-process) and the `openssl` command (`verify -x509_strict`, which rejects DER that is merely
 * tolerated). Go's crypto/x509 checks them in test/e2e/certs.test.ts, where the real apiserver calls meshgate.
 */
import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { X509Certificate } from 'node:crypto';
import { namedBits, oid, readTlv, time, tlv, uint } from '../../src/tls/der.ts';
import { issueCA, issueLeaf } from '../../src/tls/authority.ts';

const hex = (b: Buffer) => b.toString('hex');

describe('DER', () => {
  it.each([
    ['a small INTEGER', uint(5), '020105'],
    ['an INTEGER with the top bit set gets a 0x00', uint(Buffer.from([0x80, 1])), '0203008001'],
    ['leading zero bytes are dropped', uint(Buffer.from([0, 0, 0x7f])), '02017f'],
    ['ecdsa-with-SHA256', oid('1.2.840.10045.4.3.2'), '06082a8648ce3d040302'],
    ['serverAuth', oid('1.3.6.1.5.5.7.3.1'), '06082b06010505070301'],
    ['KeyUsage keyCertSign|cRLSign', namedBits([5, 6]), '03020106'],
    ['KeyUsage digitalSignature', namedBits([0]), '03020780'],
    ['UTCTime in 2049', time(new Date('2049-12-31T23:59:59.900Z')), `170d${hex(Buffer.from('491231235959Z'))}`],
    ['GeneralizedTime from 2050', time(new Date('2050-01-01T00:00:00Z')), `180f${hex(Buffer.from('20500101000000Z'))}`],
  ])('%s', (_what, got, want) => {
    expect(hex(got)).toBe(want);
  });

  it.each([
    [127, '7f'],
    [128, '8180'],
    [255, '81ff'],
    [256, '820100'],
    [70_000, '83011170'],
  ])('a %i-byte body has length %s', (n, len) => {
    const der = tlv(0x04, Buffer.alloc(n));
    expect(hex(der.subarray(1, 1 + len.length / 2))).toBe(len);
    expect(readTlv(der, 0)).toEqual({ tag: 0x04, start: 1 + len.length / 2, end: der.length });
  });

  it('refuses a truncated element', () => {
    expect(() => readTlv(Buffer.from([0x30, 0x05, 0x01]), 0)).toThrow(/truncated DER at byte 0/);
  });
});

describe('certificates', () => {
  const now = Date.now();

  it('a CA and a serving certificate pass openssl verify -x509_strict for TLS servers', () => {
    const ca = issueCA(3600_000 * 10, now);
    const leaf = issueLeaf(ca, ['meshgate.meshgate.svc', '127.0.0.1', '::1', 'fd00::10:1'], 3600_000, now);
    const dir = mkdtempSync(join(tmpdir(), 'meshgate-x509-'));
    try {
      writeFileSync(join(dir, 'ca.crt'), ca.cert);
      writeFileSync(join(dir, 'tls.crt'), leaf.cert);
      const out = execFileSync(
        'openssl',
        ['verify', '-x509_strict', '-purpose', 'sslserver', '-CAfile', join(dir, 'ca.crt'), join(dir, 'tls.crt')],
        { encoding: 'utf8' },
      );
      expect(out.trim()).toBe(`${join(dir, 'tls.crt')}: OK`);
      const text = execFileSync('openssl', ['x509', '-noout', '-text', '-in', join(dir, 'ca.crt')], {
        encoding: 'utf8',
      });
      expect(text).toMatch(/CA:TRUE, pathlen:0/);
      expect(text).toMatch(/Certificate Sign, CRL Sign/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const x = new X509Certificate(leaf.cert);
    expect(x.checkIP('::1')).toBe('::1');
    expect(x.checkIP('fd00::10:1')).toBe('fd00::10:1');
    expect(x.checkHost('meshgate.meshgate.svc')).toBe('meshgate.meshgate.svc');
    expect(x.ca).toBe(false);
    expect(x.keyUsage).toEqual(['1.3.6.1.5.5.7.3.1']);
  });

  it('dates from 2050 on are GeneralizedTime and read back exactly; a serving certificate never outlives its CA', () => {
    const at = Date.parse('2049-12-31T00:00:00Z');
    const ca = issueCA(3 * 24 * 3600_000, at);
    expect(ca.x509.validToDate.toISOString()).toBe('2050-01-03T00:00:00.000Z');
    const leaf = issueLeaf(ca, ['x'], 365 * 24 * 3600_000, at);
    expect(leaf.notAfter.getTime()).toBe(ca.x509.validToDate.getTime());
    expect(new X509Certificate(leaf.cert).validToDate.getTime()).toBe(ca.x509.validToDate.getTime());
  });
});
