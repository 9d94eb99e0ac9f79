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
import type { CertPair, CertSource } from './source.ts';

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

export class FileSource implements CertSource {
  #certFile: string;
  #keyFile: string;
  #caFile?: string;
  #pair?: CertPair;
  #listeners: Array<(p: CertPair) => void> = [];
  #watchers: FSWatcher[] = [];
  #timer?: NodeJS.Timeout;
  #poll?: NodeJS.Timeout;
  #onError: (err: Error) => void;

  constructor(opts: { certFile: string; keyFile: string; caFile?: string; onError?: (err: Error) => void }) {
    this.#certFile = opts.certFile;
    this.#keyFile = opts.keyFile;
    this.#caFile = opts.caFile;
    this.#onError = opts.onError ?? (() => {});
  }

  async start(): Promise<void> {
    this.#pair = readPair(this.#certFile, this.#keyFile, this.#caFile);
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
    if (next.cert === this.#pair?.cert && next.key === this.#pair?.key) return;
    this.#pair = next;
    for (const l of this.#listeners) l(next);
  }

  current(): CertPair {
    if (!this.#pair) throw new Error('certificate source not started');
    return this.#pair;
  }

  healthy(): boolean {
    return !!this.#pair && this.#pair.notAfter.getTime() > Date.now();
  }

  onChange(listener: (p: CertPair) => void): void {
    this.#listeners.push(listener);
  }

  stop(): void {
    for (const w of this.#watchers) w.close();
    clearTimeout(this.#timer);
    clearInterval(this.#poll);
  }
}
