/**
 * A Secret mounted into a pod, kept up to date the way the kubelet does it, for a webhook that runs in the test
 * process but must read its certificate from files (`--cert-file`/`--key-file`, as the chart's Deployment runs it).
 *
 * The kubelet learns of a changed Secret at once (its watch-based Secret manager) but rewrites the volume only on
 * the pod's next sync, up to its sync period (1 min by default) plus jitter later; it then swaps every file at once
 * (AtomicWriter: a new `..<timestamp>` payload dir, a `..data` symlink renamed over the old one, and `tls.crt ->
 * ..data/tls.crt`). `delayMs` stands for that lag: whatever the apiserver learns from the Secret (cert-manager's CA
 * injector reads it the moment it changes) the webhook serves only `delayMs` later. The volume starts with the
 * Secret's contents, as a pod's does; the payload written is the Secret as it is when the delay ends.
 */
import { mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CoreV1Api, type KubeConfig, type V1Secret } from '@kubernetes/client-node';
import { waitFor } from './harness/index.ts';

/** How often the Secret is read: the kubelet's watch reacts within milliseconds; 200 ms is close enough. */
const POLL_MS = 200;

export interface Projection {
  /** When the kubelet would have seen the change (ms since epoch) and when the files were swapped. */
  seenAt: number;
  writtenAt: number;
  resourceVersion: string;
}

export class SecretVolume {
  readonly dir: string;
  /** Every swap of the files after the first write, in order. */
  readonly projections: Projection[] = [];
  #api: CoreV1Api;
  #namespace: string;
  #name: string;
  #delayMs: number;
  #latest?: V1Secret;
  #written?: string;
  #payload?: string;
  #generation = 0;
  #poll?: NodeJS.Timeout;
  #timers = new Set<NodeJS.Timeout>();
  #onError: (err: unknown) => void;

  constructor(o: {
    kc: KubeConfig;
    namespace: string;
    name: string;
    dir: string;
    delayMs: number;
    onError: (err: unknown) => void;
  }) {
    this.#api = o.kc.makeApiClient(CoreV1Api);
    this.#namespace = o.namespace;
    this.#name = o.name;
    this.dir = o.dir;
    this.#delayMs = o.delayMs;
    this.#onError = o.onError;
  }

  get certFile(): string {
    return join(this.dir, 'tls.crt');
  }

  get keyFile(): string {
    return join(this.dir, 'tls.key');
  }

  /** Waits for the Secret, writes it (the pod's first mount), then follows it. */
  async start(): Promise<void> {
    this.#latest = await waitFor(`Secret ${this.#namespace}/${this.#name}`, () => this.#read(), { timeoutMs: 60_000 });
    mkdirSync(this.dir, { recursive: true });
    this.#write();
    this.#poll = setInterval(() => void this.#follow(), POLL_MS);
  }

  stop(): void {
    clearInterval(this.#poll);
    for (const t of this.#timers) clearTimeout(t);
  }

  #read(): Promise<V1Secret> {
    return this.#api.readNamespacedSecret({ namespace: this.#namespace, name: this.#name });
  }

  async #follow(): Promise<void> {
    let secret: V1Secret;
    try {
      secret = await this.#read();
    } catch (err) {
      this.#onError(err);
      return;
    }
    const seen = this.#latest?.metadata?.resourceVersion;
    this.#latest = secret;
    if (secret.metadata?.resourceVersion === seen) return;
    const seenAt = Date.now();
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      const version = this.#latest?.metadata?.resourceVersion ?? '';
      if (version === this.#written) return; // an earlier timer already wrote this version
      this.#write();
      this.projections.push({ seenAt, writtenAt: Date.now(), resourceVersion: version });
    }, this.#delayMs);
    this.#timers.add(timer);
  }

  /** The kubelet's AtomicWriter: payload dir, then one rename of the `..data` symlink, then the old payload goes. */
  #write(): void {
    const secret = this.#latest!;
    const payload = `..payload_${++this.#generation}`;
    mkdirSync(join(this.dir, payload));
    for (const [key, value] of Object.entries(secret.data ?? {}))
      writeFileSync(join(this.dir, payload, key), Buffer.from(value, 'base64'), { mode: 0o600 });
    symlinkSync(payload, join(this.dir, '..data_tmp'));
    renameSync(join(this.dir, '..data_tmp'), join(this.dir, '..data'));
    if (this.#generation === 1) {
      for (const key of Object.keys(secret.data ?? {})) symlinkSync(join('..data', key), join(this.dir, key));
    }
    if (this.#payload) rmSync(join(this.dir, this.#payload), { recursive: true, force: true });
    this.#payload = payload;
    this.#written = secret.metadata?.resourceVersion;
  }
}
