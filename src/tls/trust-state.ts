/**
 * The self-managed certificates as they live in the shared Secret, read and checked in one place.
 *
 * Keys (the Secret is type kubernetes.io/tls, so tls.crt and tls.key are the serving pair):
 *   tls.crt, tls.key   the serving certificate every replica serves
 *   ca.crt             the CA bundle clients trust, i.e. the webhook configurations' caBundle (oldest CA first)
 *   ca.key             the key of the CA that issued tls.crt (the signer)
 *   next-ca.key        only while a rotation prepares: the key of the CA in ca.crt that is trusted, not yet signing
 *   replicas.json      only during a rotation: which CA the certificate each replica serves comes from, and when
 *                      the replica said so ({"pod-a": {"ca": "<sha256 fingerprint>", "at": <ms>}})
 * A second CA in ca.crt without next-ca.key is the old CA being retired; its key is already gone. Roles are
 * derived from the certificates (the signer is whichever CA issued tls.crt), never from a second record that
 * could disagree with them.
 */
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { loadCA, type CertificateAuthority } from './authority.ts';

export interface SecretData {
  'ca.crt': string;
  'ca.key': string;
  'tls.crt': string;
  'tls.key': string;
  'next-ca.key'?: string;
  'replicas.json'?: string;
}

export interface ReplicaReport {
  /** sha256 fingerprint of the CA that issued the certificate the replica serves. */
  ca: string;
  /** When it said so (ms since the epoch). */
  at: number;
}

export interface TrustState {
  readonly leaf: { readonly cert: string; readonly key: string; readonly x509: X509Certificate };
  /** Issued the leaf; new serving certificates are signed by it. */
  readonly signer: CertificateAuthority;
  /** Trusted, not yet signing (a rotation's first phase). */
  readonly next?: CertificateAuthority;
  /** Trusted, no longer signing, key discarded (a rotation's last phase). */
  readonly retiring?: X509Certificate;
  readonly replicas: Readonly<Record<string, ReplicaReport>>;
}

export function splitPem(bundle: string): string[] {
  return bundle.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g)?.map((p) => `${p}\n`) ?? [];
}

/** Every CA clients must trust now, oldest first: a rotation appends, then drops the head. */
export function trustedCAs(s: TrustState): X509Certificate[] {
  const all = [s.signer.x509, ...(s.next ? [s.next.x509] : []), ...(s.retiring ? [s.retiring] : [])];
  return all.sort((a, b) => a.validFromDate.getTime() - b.validFromDate.getTime());
}

export function bundleOf(s: TrustState): string {
  return trustedCAs(s)
    .map((x) => x.toString())
    .join('');
}

export const rotating = (s: TrustState): boolean => !!(s.next || s.retiring);

export function toSecretData(s: TrustState): SecretData {
  const d: SecretData = {
    'ca.crt': bundleOf(s),
    'ca.key': s.signer.key,
    'tls.crt': s.leaf.cert,
    'tls.key': s.leaf.key,
  };
  if (s.next) d['next-ca.key'] = s.next.key;
  if (rotating(s)) d['replicas.json'] = JSON.stringify(s.replicas);
  return d;
}

function parseReplicas(json: string | undefined, where: string): Record<string, ReplicaReport> {
  if (json === undefined) return {};
  let v: unknown;
  try {
    v = JSON.parse(json);
  } catch (err) {
    throw new Error(`${where}: replicas.json is not JSON (${(err as Error).message})`);
  }
  if (!v || typeof v !== 'object' || Array.isArray(v))
    throw new Error(`${where}: replicas.json must be an object of replica reports`);
  for (const [id, r] of Object.entries(v as Record<string, unknown>)) {
    const ok =
      r &&
      typeof r === 'object' &&
      typeof (r as ReplicaReport).ca === 'string' &&
      Number.isFinite((r as ReplicaReport).at);
    if (!ok)
      throw new Error(
        `${where}: replicas.json: the report of ${JSON.stringify(id)} needs "ca" (string) and "at" (number)`,
      );
  }
  return v as Record<string, ReplicaReport>;
}

function parseCert(pem: string, what: string, where: string): X509Certificate {
  try {
    return new X509Certificate(pem);
  } catch (err) {
    throw new Error(`${where}: ${what} is not a PEM certificate (${(err as Error).message})`);
  }
}

/** Reads and checks the Secret's data; throws naming the Secret and the key that is wrong. */
export function fromSecretData(d: SecretData, where: string): TrustState {
  const leaf = parseCert(d['tls.crt'], 'tls.crt', where);
  try {
    if (!leaf.checkPrivateKey(createPrivateKey(d['tls.key']))) throw new Error('it does not match tls.crt');
  } catch (err) {
    throw new Error(`${where}: tls.key: ${(err as Error).message}`);
  }
  const pems = splitPem(d['ca.crt']);
  if (pems.length < 1 || pems.length > 2)
    throw new Error(`${where}: ca.crt holds ${pems.length} certificates; meshgate keeps one CA, two while rotating`);
  const cas = pems.map((p, i) => parseCert(p, `ca.crt certificate ${i + 1}`, where));
  const signerAt = cas.findIndex((ca) => leaf.checkIssued(ca) && leaf.verify(ca.publicKey));
  if (signerAt < 0) throw new Error(`${where}: tls.crt was not issued by a CA in ca.crt`);
  const signer = loadCA(pems[signerAt], d['ca.key'], `${where}: ca.key`);
  const otherPem = pems.find((_, i) => i !== signerAt);
  if (d['next-ca.key'] !== undefined && !otherPem)
    throw new Error(`${where}: next-ca.key is set but ca.crt holds no second CA`);
  const next =
    otherPem && d['next-ca.key'] !== undefined
      ? loadCA(otherPem, d['next-ca.key'], `${where}: next-ca.key`)
      : undefined;
  const retiring = otherPem && !next ? cas.find((_, i) => i !== signerAt) : undefined;
  return {
    leaf: { cert: d['tls.crt'], key: d['tls.key'], x509: leaf },
    signer,
    next,
    retiring,
    replicas: parseReplicas(d['replicas.json'], where),
  };
}
