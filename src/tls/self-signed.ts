/**
 * Self-managed certificates: a CA and a serving certificate made with node-forge (keys from node:crypto,
 * which is native and ~100× faster than forge's pure-JS RSA). Both are backdated a few minutes so an
 * apiserver whose clock runs behind still accepts them, and the serving certificate is renewed at two thirds
 * of its life, long before expiry.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import forge from 'node-forge';
import { PairSource, type CertPair } from './source.ts';

/** Clock skew tolerated between meshgate and the apiserver. */
const BACKDATE_MS = 5 * 60 * 1000;

export interface SelfSignedOptions {
  /** DNS names and IP addresses for the serving certificate, e.g. meshgate.meshgate.svc and 127.0.0.1. */
  sans: string[];
  /** Serving certificate lifetime; default one year. The CA lives ten times as long. */
  validityMs?: number;
  now?: () => number;
}

function newKeys(): { pub: forge.pki.PublicKey; priv: forge.pki.PrivateKey; pem: string } {
  const { publicKey, privateKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  return { pub: forge.pki.publicKeyFromPem(publicKey), priv: forge.pki.privateKeyFromPem(privateKey), pem: privateKey };
}

function serial(): string {
  // Positive 128-bit serial: clear the top bit so DER does not read it as negative.
  const b = randomBytes(16);
  b[0] &= 0x7f;
  return b.toString('hex');
}

export interface IssuedPair extends CertPair {
  caKey: string;
}

export interface CertificateAuthority {
  cert: forge.pki.Certificate;
  key: forge.pki.PrivateKey;
  pem: string;
  keyPem: string;
}

/** A CA living ten serving lifetimes: renewals re-sign with it, so the caBundle clients hold stays valid. */
export function issueCA(validityMs: number, now: number): CertificateAuthority {
  const keys = newKeys();
  const ca = forge.pki.createCertificate();
  ca.publicKey = keys.pub;
  ca.serialNumber = serial();
  ca.validity.notBefore = new Date(now - BACKDATE_MS);
  ca.validity.notAfter = new Date(now + validityMs * 10);
  // A distinct name and key identifiers per CA, so a bundle holding an old and a new CA chains unambiguously.
  const name = [{ name: 'commonName', value: `meshgate-ca-${ca.serialNumber.slice(0, 8)}` }];
  ca.setSubject(name);
  ca.setIssuer(name);
  ca.setExtensions([
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  ca.sign(keys.priv as forge.pki.rsa.PrivateKey, forge.md.sha256.create());
  return { cert: ca, key: keys.priv, pem: forge.pki.certificateToPem(ca), keyPem: keys.pem };
}

export function issueLeaf(ca: CertificateAuthority, sans: string[], validityMs: number, now: number): IssuedPair {
  const keys = newKeys();
  const leaf = forge.pki.createCertificate();
  leaf.publicKey = keys.pub;
  leaf.serialNumber = serial();
  leaf.validity.notBefore = new Date(now - BACKDATE_MS);
  leaf.validity.notAfter = new Date(now + validityMs);
  leaf.setSubject([{ name: 'commonName', value: sans[0] ?? 'meshgate' }]);
  leaf.setIssuer(ca.cert.subject.attributes);
  leaf.setExtensions([
    { name: 'basicConstraints', cA: false },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', serverAuth: true },
    // Type 7 is an IP address, type 2 a DNS name (RFC 5280 GeneralName).
    { name: 'subjectAltName', altNames: sans.map((s) => (isIP(s) ? { type: 7, ip: s } : { type: 2, value: s })) },
    { name: 'subjectKeyIdentifier' },
    { name: 'authorityKeyIdentifier', keyIdentifier: ca.cert.generateSubjectKeyIdentifier().getBytes() },
  ]);
  leaf.sign(ca.key as forge.pki.rsa.PrivateKey, forge.md.sha256.create());
  return { cert: forge.pki.certificateToPem(leaf), key: keys.pem, ca: ca.pem, caKey: ca.keyPem, notAfter: leaf.validity.notAfter };
}

/** A fresh CA and a serving certificate signed by it. */
export function issueSelfSigned(sans: string[], validityMs: number, now: number): IssuedPair {
  return issueLeaf(issueCA(validityMs, now), sans, validityMs, now);
}

export class SelfSignedSource extends PairSource {
  #opts: Required<SelfSignedOptions>;
  #ca?: CertificateAuthority;
  #timer?: NodeJS.Timeout;

  constructor(opts: SelfSignedOptions) {
    super(opts.now);
    this.#opts = { validityMs: 365 * 24 * 3600 * 1000, now: Date.now, ...opts };
  }

  async start(): Promise<void> {
    this.#rotate();
  }

  #rotate(): void {
    const now = this.#opts.now();
    // The CA is made once per process and outlives many renewals (ten lifetimes).
    this.#ca ??= issueCA(this.#opts.validityMs, now);
    this.publish(issueLeaf(this.#ca, this.#opts.sans, this.#opts.validityMs, now));
    // Renew at two thirds of the serving certificate's life.
    const renewIn = Math.max(1000, Math.floor((this.#opts.validityMs * 2) / 3));
    this.#timer = setTimeout(() => this.#rotate(), Math.min(renewIn, 2 ** 31 - 1));
    this.#timer.unref();
  }




  stop(): void {
    clearTimeout(this.#timer);
  }
}
