/**
 * Certificate facts for `meshgate check`, with Node's own X.509 (node:crypto): which PEM blocks a caBundle holds,
 * whether a serving chain leads to one of them (issuer name and signature, as the apiserver's TLS client checks),
 * whether the leaf names the host the apiserver dials, and how many days each has left. Pure.
 */
import { X509Certificate } from 'node:crypto';
import { isIP } from 'node:net';

const PEM_BLOCK = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;
/** A caBundle or tls.crt holds a handful of certificates; more is not a serving setup, and bounds the work. */
const MAX_CERTS = 32;
/** Intermediates between a leaf and a bundle CA: real chains have one or two. */
const MAX_DEPTH = 5;
const DAY_MS = 24 * 3600 * 1000;

export type ParsedCerts = { ok: true; certs: X509Certificate[] } | { ok: false; error: string };

export function parsePemCerts(pem: string, what: string): ParsedCerts {
  const blocks = pem.match(PEM_BLOCK) ?? [];
  if (blocks.length === 0) return { ok: false, error: `${what} holds no PEM certificate` };
  if (blocks.length > MAX_CERTS)
    return { ok: false, error: `${what} holds ${blocks.length} certificates (at most ${MAX_CERTS} are read)` };
  const certs: X509Certificate[] = [];
  for (const [i, b] of blocks.entries()) {
    try {
      certs.push(new X509Certificate(b));
    } catch (err) {
      return { ok: false, error: `${what}: certificate ${i + 1} does not parse (${(err as Error).message})` };
    }
  }
  return { ok: true, certs };
}

/** A webhook's caBundle field: base64 of PEM. */
export function parseCaBundle(base64: string | undefined, what: string): ParsedCerts {
  if (!base64) return { ok: false, error: `${what} has no caBundle` };
  return parsePemCerts(Buffer.from(base64, 'base64').toString('utf8'), `${what}'s caBundle`);
}

function issued(child: X509Certificate, parent: X509Certificate): boolean {
  try {
    return child.checkIssued(parent) && child.verify(parent.publicKey);
  } catch {
    return false;
  }
}

/**
 * The bundle CA the chain leads to (leaf, then the intermediates that came with it), or undefined. A leaf that is
 * itself in the bundle is trusted as it is (a self-signed serving certificate used as its own CA).
 */
export function trustedBy(
  chain: readonly X509Certificate[],
  bundle: readonly X509Certificate[],
): X509Certificate | undefined {
  let current = chain[0];
  if (!current) return undefined;
  const same = bundle.find((ca) => ca.fingerprint256 === current.fingerprint256);
  if (same) return same;
  for (let depth = 0; depth < MAX_DEPTH; depth++) {
    const ca = bundle.find((c) => issued(current, c));
    if (ca) return ca;
    const next = chain.slice(1).find((c) => c !== current && issued(current, c));
    if (!next) return undefined;
    current = next;
  }
  return undefined;
}

/** Whether the leaf is valid for the host the apiserver dials (DNS name or IP SAN). */
export function namesHost(leaf: X509Certificate, host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '');
  return isIP(bare) ? leaf.checkIP(bare) !== undefined : leaf.checkHost(bare) !== undefined;
}

/** Whole days until the certificate expires (negative once expired). */
export function daysLeft(cert: X509Certificate, now: number): number {
  return Math.floor((Date.parse(cert.validTo) - now) / DAY_MS);
}

export function subjectOf(cert: X509Certificate): string {
  return cert.subject.replace(/\n/g, ', ');
}
