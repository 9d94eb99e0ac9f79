/**
 * Certificates behind one small interface, so the self-signed and file-backed sources are interchangeable and
 * readiness only asks `healthy()`. A source calls its listeners whenever the serving pair changes; the server
 * swaps its TLS context (`setSecureContext`) without dropping connections.
 */
export interface CertPair {
  /** PEM serving certificate (and chain). */
  cert: string;
  /** PEM private key. */
  key: string;
  /** PEM CA that signed it: what a webhook configuration's caBundle must hold. */
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
