/**
 * meshgate's own CA and serving certificates. Keys are ECDSA P-256 from node:crypto: every client the webhook
 * meets (Go's crypto/tls in the apiserver, curl, node) speaks it, a key costs well under a millisecond where
 * RSA-2048 costs tens, a handshake signs with it cheaply, and the TLS policy's ECDHE-ECDSA suites need an EC
 * key. Certificates are backdated five minutes, so an apiserver whose clock runs behind still accepts them,
 * and are renewed at two thirds of their life, long before expiry.
 */
import { X509Certificate, createPrivateKey, generateKeyPairSync, randomBytes, type KeyObject } from 'node:crypto';
import type { CertPair } from './source.ts';
import { buildCertificate, nameDer, subjectDer, type Issuer } from './x509.ts';

/** Clock skew tolerated between meshgate and the apiserver. */
export const BACKDATE_MS = 5 * 60 * 1000;

export interface CertificateAuthority {
  cert: string;
  key: string;
  x509: X509Certificate;
  privateKey: KeyObject;
}

export interface IssuedPair extends CertPair {
  caKey: string;
}

function p256(): { privateKey: KeyObject; publicKey: KeyObject } {
  return generateKeyPairSync('ec', { namedCurve: 'P-256' });
}

/** 16 random bytes with the top bit clear: positive, unpredictable, well inside RFC 5280's 20 bytes. */
function serial(): Buffer {
  const b = randomBytes(16);
  b[0] &= 0x7f;
  return b;
}

/** Whole seconds (the encoding's resolution), so the life read back from the certificate is the life issued. */
const second = (ms: number): number => Math.floor(ms / 1000) * 1000;

const pkcs8 = (k: KeyObject): string => k.export({ type: 'pkcs8', format: 'pem' }).toString();

export function isP256(key: KeyObject): boolean {
  return key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1';
}

/** When a certificate was issued: its notBefore without the backdating (never after notAfter). */
export function issuedAt(x: X509Certificate): number {
  return Math.min(x.validFromDate.getTime() + BACKDATE_MS, x.validToDate.getTime());
}

/** Two thirds into a certificate's life: the point where meshgate replaces it. */
export function renewAt(x: X509Certificate): number {
  const from = issuedAt(x);
  return from + ((x.validToDate.getTime() - from) * 2) / 3;
}

/** A CA for serving certificates only; named by issue date and serial, so two CAs in one bundle differ. */
export function issueCA(lifetimeMs: number, now: number): CertificateAuthority {
  const { privateKey, publicKey } = p256();
  const s = serial();
  const day = new Date(now).toISOString().slice(0, 10).replaceAll('-', '');
  const name = `meshgate-ca-${day}-${s.toString('hex').slice(0, 8)}`;
  const issuer: Issuer = { name: nameDer(name), key: privateKey, publicKey };
  const x509 = buildCertificate(
    {
      commonName: name,
      publicKey,
      serial: s,
      notBefore: new Date(second(now) - BACKDATE_MS),
      notAfter: new Date(second(now) + second(lifetimeMs)),
      isCA: true,
    },
    issuer,
  );
  return { cert: x509.toString(), key: pkcs8(privateKey), x509, privateKey };
}

/** A CA read back from PEM; `where` names the source in errors (e.g. "Secret meshgate/meshgate-tls"). */
export function loadCA(cert: string, key: string, where: string): CertificateAuthority {
  const x509 = new X509Certificate(cert);
  const privateKey = createPrivateKey(key);
  if (!x509.ca) throw new Error(`${where}: ${x509.subject.replace(/\n/g, ', ')} is not a CA certificate`);
  if (!x509.checkPrivateKey(privateKey)) throw new Error(`${where}: the CA key does not match the CA certificate`);
  return { cert: x509.toString(), key, x509, privateKey };
}

/** A serving certificate signed by `ca`, valid for `lifetimeMs` but never beyond the CA's own notAfter. */
export function issueLeaf(
  ca: CertificateAuthority,
  sans: readonly string[],
  lifetimeMs: number,
  now: number,
): IssuedPair {
  const { privateKey, publicKey } = p256();
  const issuer: Issuer = { name: subjectDer(ca.x509), key: ca.privateKey, publicKey: ca.x509.publicKey };
  const notAfter = new Date(Math.min(second(now) + second(lifetimeMs), ca.x509.validToDate.getTime()));
  const x509 = buildCertificate(
    {
      commonName: sans[0] ?? 'meshgate',
      publicKey,
      serial: serial(),
      notBefore: new Date(second(now) - BACKDATE_MS),
      notAfter,
      isCA: false,
      sans,
    },
    issuer,
  );
  return { cert: x509.toString(), key: pkcs8(privateKey), ca: ca.cert, caKey: ca.key, notAfter };
}

/** A fresh CA (ten serving lifetimes, as meshgate's CAs) and a serving certificate signed by it. */
export function issueSelfSigned(sans: readonly string[], lifetimeMs: number, now: number): IssuedPair {
  return issueLeaf(issueCA(lifetimeMs * 10, now), sans, lifetimeMs, now);
}
