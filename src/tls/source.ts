/**
 * Certificates behind one small interface, so the self-signed and file-backed sources are interchangeable and
 * readiness only asks `healthy()`. A source calls its listeners whenever the serving pair or the CA bundle
 * changes; the server swaps its TLS context (`setSecureContext`) without dropping connections, and the caBundle
 * keeper republishes the bundle.
 */
export interface CertPair {
  /** PEM serving certificate (and chain). */
  cert: string;
  /** PEM private key. */
  key: string;
  /**
   * PEM CA bundle clients must trust: what a webhook configuration's caBundle must hold. One CA normally; the
   * old and the new CA while a self-managed CA is being rotated (secret-source.ts).
   */
  ca?: string;
  notAfter: Date;
}

export interface CertSource {
  start(): Promise<void>;
  current(): CertPair;
  healthy(): boolean;
  onChange(listener: (pair: CertPair) => void): void;
  stop(): void;
}

/** What every source shares: the current pair, readiness from its expiry, and change listeners. */
export abstract class PairSource implements CertSource {
  #pair?: CertPair;
  #listeners: Array<(p: CertPair) => void> = [];
  #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /** Makes `pair` current and, unless told otherwise, tells the listeners (the server swaps its context). */
  protected publish(pair: CertPair, notify = true): void {
    this.#pair = pair;
    if (notify) for (const l of this.#listeners) l(pair);
  }

  protected peek(): CertPair | undefined {
    return this.#pair;
  }

  current(): CertPair {
    if (!this.#pair) throw new Error('certificate source not started');
    return this.#pair;
  }

  healthy(): boolean {
    return !!this.#pair && this.#pair.notAfter.getTime() > this.#now();
  }

  onChange(listener: (p: CertPair) => void): void {
    this.#listeners.push(listener);
  }

  abstract start(): Promise<void>;
  abstract stop(): void;
}
