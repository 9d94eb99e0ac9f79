/**
 * Self-managed certificates shared by every replica through one Secret (keys ca.crt, ca.key, tls.crt,
 * tls.key). The first replica to start creates it; the others read it. A create or update that loses the race
 * (409 Conflict) re-reads and adopts the winner's pair, so all replicas serve certificates from one CA and the
 * webhook configurations' caBundle fits them all. The serving certificate is renewed at two thirds of its life
 * by whichever replica notices first; the others pick the new pair up on their next poll. The CA is kept
 * across renewals, so the caBundle does not change.
 */
import { X509Certificate } from 'node:crypto';
import forge from 'node-forge';
import { PairSource, type CertPair } from './source.ts';
import { issueCA, issueLeaf, type CertificateAuthority } from './self-signed.ts';

export interface SecretData {
  'ca.crt': string;
  'ca.key': string;
  'tls.crt': string;
  'tls.key': string;
}

/** The few Secret operations the source needs; kube/secret-store.ts implements them on the API. */
export interface SecretStore {
  read(): Promise<{ data: SecretData; resourceVersion: string } | undefined>;
  /** Resolves false on 409 Conflict / AlreadyExists (another replica won). */
  create(data: SecretData): Promise<boolean>;
  replace(data: SecretData, resourceVersion: string): Promise<boolean>;
}

export interface SecretSourceOptions {
  store: SecretStore;
  sans: string[];
  validityMs?: number;
  /** How often to re-read the Secret for another replica's renewal (default 60 s). */
  pollMs?: number;
  now?: () => number;
  onError?: (err: unknown) => void;
}

function pairOf(d: SecretData): CertPair {
  return { cert: d['tls.crt'], key: d['tls.key'], ca: d['ca.crt'], notAfter: new Date(new X509Certificate(d['tls.crt']).validTo) };
}

export class SecretSource extends PairSource {
  #o: Required<Omit<SecretSourceOptions, 'onError'>> & Pick<SecretSourceOptions, 'onError'>;
  #timer?: NodeJS.Timeout;

  constructor(opts: SecretSourceOptions) {
    super(opts.now);
    this.#o = { validityMs: 365 * 24 * 3600 * 1000, pollMs: 60_000, now: Date.now, ...opts };
  }

  /** Still fresh: more than a third of its life left. */
  #fresh(d: SecretData): boolean {
    const x = new X509Certificate(d['tls.crt']);
    const from = Date.parse(x.validFrom);
    const to = Date.parse(x.validTo);
    return this.#o.now() < from + ((to - from) * 2) / 3;
  }

  #issue(existing?: SecretData): SecretData {
    const now = this.#o.now();
    let ca: CertificateAuthority;
    if (existing && Date.parse(new X509Certificate(existing['ca.crt']).validTo) > now + this.#o.validityMs) {
      ca = { cert: forge.pki.certificateFromPem(existing['ca.crt']), key: forge.pki.privateKeyFromPem(existing['ca.key']), pem: existing['ca.crt'], keyPem: existing['ca.key'] };
    } else {
      ca = issueCA(this.#o.validityMs, now);
    }
    const leaf = issueLeaf(ca, this.#o.sans, this.#o.validityMs, now);
    return { 'ca.crt': ca.pem, 'ca.key': ca.keyPem, 'tls.crt': leaf.cert, 'tls.key': leaf.key };
  }

  /** One reconcile: adopt the Secret's pair, or write a new one (and adopt the winner on a lost race). */
  async sync(): Promise<void> {
    for (let attempt = 0; attempt < 3; attempt++) {
      const current = await this.#o.store.read();
      if (current && this.#fresh(current.data)) return this.#adopt(current.data);
      const next = this.#issue(current?.data);
      const won = current ? await this.#o.store.replace(next, current.resourceVersion) : await this.#o.store.create(next);
      if (won) return this.#adopt(next);
    }
    throw new Error('could not agree on a serving certificate with the other replicas after 3 attempts');
  }

  #adopt(d: SecretData): void {
    if (this.peek()?.cert === d['tls.crt']) return;
    this.publish(pairOf(d));
  }

  async start(): Promise<void> {
    await this.sync();
    this.#timer = setInterval(() => void this.sync().catch((err) => this.#o.onError?.(err)), this.#o.pollMs);
    this.#timer.unref();
  }




  stop(): void {
    clearInterval(this.#timer);
  }
}
