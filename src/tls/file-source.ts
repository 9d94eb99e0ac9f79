/**
 * Certificates from files (a mounted Secret, cert-manager): read at start, watched afterwards. Kubernetes
 * updates a mounted Secret by swapping a `..data` symlink, which replaces the files rather than writing them,
 * so the directory is watched, not the files, plus a slow poll in case an event is missed. A new pair is
 * checked (parses, key matches) before it replaces the old one; a broken update keeps serving the old pair.
 */
import { readFileSync, watch, type FSWatcher } from 'node:fs';
import { dirname } from 'node:path';
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { createSecureContext } from 'node:tls';
import { PairSource, type CertPair } from './source.ts';

/** Debounce for the burst of events one Secret update causes. */
const SETTLE_MS = 100;
/** Fallback poll, in case a watch event is missed (e.g. on network filesystems). */
const POLL_MS = 60_000;

export function readPair(certFile: string, keyFile: string, caFile?: string): CertPair {
  const cert = readFileSync(certFile, 'utf8');
  const key = readFileSync(keyFile, 'utf8');
  const x509 = new X509Certificate(cert);
  if (!x509.checkPrivateKey(createPrivateKey(key))) throw new Error(`${keyFile} does not match ${certFile}`);
  createSecureContext({ cert, key });
  return { cert, key, ca: caFile ? readFileSync(caFile, 'utf8') : undefined, notAfter: new Date(x509.validTo) };
}

export class FileSource extends PairSource {
  #certFile: string;
  #keyFile: string;
  #caFile?: string;
  #watchers: FSWatcher[] = [];
  #timer?: NodeJS.Timeout;
  #poll?: NodeJS.Timeout;
  #onError: (err: Error) => void;

  constructor(opts: { certFile: string; keyFile: string; caFile?: string; onError?: (err: Error) => void }) {
    super();
    this.#certFile = opts.certFile;
    this.#keyFile = opts.keyFile;
    this.#caFile = opts.caFile;
    this.#onError = opts.onError ?? (() => {});
  }

  async start(): Promise<void> {
    this.publish(readPair(this.#certFile, this.#keyFile, this.#caFile), false);
    for (const dir of new Set([dirname(this.#certFile), dirname(this.#keyFile)])) {
      this.#watchers.push(watch(dir, () => this.#schedule()));
    }
    this.#poll = setInterval(() => this.#reload(), POLL_MS);
    this.#poll.unref();
  }

  #schedule(): void {
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => this.#reload(), SETTLE_MS);
  }

  #reload(): void {
    let next: CertPair;
    try {
      next = readPair(this.#certFile, this.#keyFile, this.#caFile);
    } catch (err) {
      this.#onError(err as Error);
      return;
    }
    if (next.cert === this.peek()?.cert && next.key === this.peek()?.key) return;
    this.publish(next);
  }

  stop(): void {
    for (const w of this.#watchers) w.close();
    clearTimeout(this.#timer);
    clearInterval(this.#poll);
  }
}
