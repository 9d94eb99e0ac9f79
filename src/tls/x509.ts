/**
 * X.509 v3 certificates from node:crypto keys: the TBSCertificate is assembled with der.ts and signed with
 * `crypto.sign` (ECDSA P-256 with SHA-256; RSA PKCS#1 v1.5 with SHA-256 only to re-sign under a CA made by an
 * older meshgate while it is being rotated out). Only the fields meshgate's CA and serving certificates need,
 * following RFC 5280 and what Go's crypto/x509 (the apiserver's webhook client) checks: the issuer name is
 * copied byte for byte from the CA certificate (Go matches names by bytes), key identifiers use RFC 5280's
 * method 1, and a CA carries pathLenConstraint 0 (it signs serving certificates only).
 */
import { X509Certificate, createHash, sign, type KeyObject } from 'node:crypto';
import { isIPv4, isIPv6 } from 'node:net';
import {
  bits,
  bool,
  children,
  explicit,
  implicit,
  namedBits,
  nul,
  octets,
  oid,
  readTlv,
  seq,
  set,
  time,
  uint,
  utf8,
} from './der.ts';

const OID = {
  commonName: '2.5.4.3',
  organization: '2.5.4.10',
  ecdsaWithSha256: '1.2.840.10045.4.3.2',
  sha256WithRsa: '1.2.840.113549.1.1.11',
  basicConstraints: '2.5.29.19',
  keyUsage: '2.5.29.15',
  extKeyUsage: '2.5.29.37',
  subjectAltName: '2.5.29.17',
  subjectKeyId: '2.5.29.14',
  authorityKeyId: '2.5.29.35',
  serverAuth: '1.3.6.1.5.5.7.3.1',
} as const;

/** KeyUsage bit numbers (RFC 5280 4.2.1.3). */
const KU = { digitalSignature: 0, keyEncipherment: 2, keyCertSign: 5, cRLSign: 6 } as const;

export interface Issuer {
  /** The issuer's Name, DER, exactly as in its own certificate's subject. */
  name: Buffer;
  key: KeyObject;
  publicKey: KeyObject;
}

export interface CertificateSpec {
  commonName: string;
  publicKey: KeyObject;
  /** Positive, at most 20 bytes (RFC 5280 4.1.2.2). */
  serial: Buffer;
  notBefore: Date;
  notAfter: Date;
  isCA: boolean;
  /** DNS names and IP addresses (serving certificates). */
  sans?: readonly string[];
}

export function nameDer(commonName: string): Buffer {
  const rdn = (type: string, value: string) => set(seq(oid(type), utf8(value)));
  return seq(rdn(OID.organization, 'meshgate'), rdn(OID.commonName, commonName));
}

/** The subject Name of a certificate, DER, byte for byte (skips version, serial, signature, issuer, validity). */
export function subjectDer(cert: X509Certificate): Buffer {
  const tbs = children(cert.raw, 0)[0];
  const fields = children(tbs, 0);
  const hasVersion = fields[0][0] === 0xa0;
  return fields[hasVersion ? 5 : 4];
}

/** RFC 5280 4.2.1.2 method 1: SHA-1 of the subjectPublicKey BIT STRING's bytes. */
export function keyId(publicKey: KeyObject): Buffer {
  const spki = publicKey.export({ type: 'spki', format: 'der' });
  const key = children(spki, 0)[1];
  const { start, end } = readTlv(key, 0);
  return createHash('sha1')
    .update(key.subarray(start + 1, end))
    .digest();
}

function ipBytes(ip: string): Buffer {
  if (isIPv4(ip)) return Buffer.from(ip.split('.').map(Number));
  const [head, tail = ''] = ip.split('::');
  const part = (s: string): number[] => {
    if (!s) return [];
    const groups = s.split(':');
    // split returns at least one element: the last group is always there.
    const last = groups[groups.length - 1];
    // An embedded IPv4 tail (::ffff:10.0.0.1) is two 16-bit groups.
    const v4 = isIPv4(last) ? last.split('.').map(Number) : undefined;
    const words = (v4 ? groups.slice(0, -1) : groups).map((g) => parseInt(g, 16));
    return v4 ? [...words, (v4[0] << 8) | v4[1], (v4[2] << 8) | v4[3]] : words;
  };
  const h = part(head);
  const t = ip.includes('::') ? part(tail) : [];
  const words = [...h, ...new Array<number>(8 - h.length - t.length).fill(0), ...t];
  const out = Buffer.alloc(16);
  for (const [i, w] of words.entries()) out.writeUInt16BE(w, i * 2);
  return out;
}

/** GeneralNames: [7] iPAddress for addresses, [2] dNSName otherwise (RFC 5280 4.2.1.6). */
function generalNames(sans: readonly string[]): Buffer {
  return seq(
    ...sans.map((s) => (isIPv4(s) || isIPv6(s) ? implicit(7, ipBytes(s)) : implicit(2, Buffer.from(s, 'ascii')))),
  );
}

function extension(id: string, critical: boolean, value: Buffer): Buffer {
  return critical ? seq(oid(id), bool(true), octets(value)) : seq(oid(id), octets(value));
}

function signatureAlgorithm(key: KeyObject): Buffer {
  if (key.asymmetricKeyType === 'ec') return seq(oid(OID.ecdsaWithSha256)); // parameters absent (RFC 5758 3.2)
  if (key.asymmetricKeyType === 'rsa') return seq(oid(OID.sha256WithRsa), nul());
  throw new Error(`cannot sign certificates with a ${key.asymmetricKeyType} key (only EC and RSA)`);
}

function extensions(spec: CertificateSpec, issuer: Issuer): Buffer[] {
  const ski = extension(OID.subjectKeyId, false, octets(keyId(spec.publicKey)));
  if (spec.isCA) {
    return [
      extension(OID.basicConstraints, true, seq(bool(true), uint(0))),
      extension(OID.keyUsage, true, namedBits([KU.keyCertSign, KU.cRLSign])),
      ski,
    ];
  }
  // keyEncipherment is meaningful for RSA keys only (RSA key exchange, which the TLS policy refuses anyway).
  const usage =
    spec.publicKey.asymmetricKeyType === 'rsa' ? [KU.digitalSignature, KU.keyEncipherment] : [KU.digitalSignature];
  return [
    extension(OID.basicConstraints, true, seq()),
    extension(OID.keyUsage, true, namedBits(usage)),
    extension(OID.extKeyUsage, false, seq(oid(OID.serverAuth))),
    extension(OID.subjectAltName, false, generalNames(spec.sans ?? [])),
    ski,
    extension(OID.authorityKeyId, false, seq(implicit(0, keyId(issuer.publicKey)))),
  ];
}

/**
 * Builds, signs and checks one certificate; returns it parsed. Throws if OpenSSL does not parse it or its
 * signature does not verify with the issuer's public key: a malformed certificate never reaches a client.
 */
export function buildCertificate(spec: CertificateSpec, issuer: Issuer): X509Certificate {
  const algorithm = signatureAlgorithm(issuer.key);
  const tbs = seq(
    explicit(0, uint(2)), // v3
    uint(spec.serial),
    algorithm,
    issuer.name,
    seq(time(spec.notBefore), time(spec.notAfter)),
    nameDer(spec.commonName),
    spec.publicKey.export({ type: 'spki', format: 'der' }),
    explicit(3, seq(...extensions(spec, issuer))),
  );
  const signature = sign('sha256', tbs, issuer.key);
  const cert = new X509Certificate(seq(tbs, algorithm, bits(signature)));
  if (!cert.verify(issuer.publicKey))
    throw new Error(`certificate ${spec.commonName} does not verify with its issuer's key`);
  return cert;
}
