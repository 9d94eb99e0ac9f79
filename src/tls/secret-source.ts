/**
 * Self-managed certificates shared by every replica through one Secret (layout: trust-state.ts). The first
 * replica to start creates it; the others read it. Each sync reads the Secret, serves what it holds, and then
 * takes the steps rotation.ts plans — renew the serving certificate, prepare / promote / retire a CA, report
 * what this replica serves — each as a write with the resourceVersion it read. A write that loses the race
 * (409 Conflict) re-reads and plans again, so every replica ends up serving one pair and the caBundle fits
 * them all. Replicas poll every `pollMs` (and a lone one wakes when its next step is due).
 */
import { hostname } from 'node:os';
import { PairSource, type CertPair } from './source.ts';
import { issueCA, issueLeaf } from './authority.ts';
import {
  bundleOf,
  fromSecretData,
  rotating,
  toSecretData,
  trustedCAs,
  type SecretData,
  type TrustState,
} from './trust-state.ts';
import {
  applyStep,
  laggards,
  nextDue,
  nextStep,
  promoteDue,
  type PlanContext,
  type RotationPolicy,
  type RotationStep,
} from './rotation.ts';
import { X509Certificate } from 'node:crypto';
import { errorFields } from '../log/fields.ts';

export type { SecretData } from './trust-state.ts';

/** The few Secret operations the source needs; kube/secret-store.ts implements them on the API. */
export interface SecretStore {
  read(): Promise<{ data: SecretData; resourceVersion: string } | undefined>;
  /** The new resourceVersion, or undefined on 409 Conflict / AlreadyExists (another replica won). */
  create(data: SecretData): Promise<string | undefined>;
  replace(data: SecretData, resourceVersion: string): Promise<string | undefined>;
}

/** Where rotation events go (a pino logger fits). */
export interface RotationLog {
  info(fields: object, msg: string): void;
  warn(fields: object, msg: string): void;
}

export interface SecretSourceOptions {
  store: SecretStore;
  sans: string[];
  /** Names the Secret in errors and logs, e.g. "Secret meshgate/meshgate-tls". */
  where?: string;
  /** This replica in replicas.json; default the host name (a pod's name). */
  replicaId?: string;
  /** Serving certificate lifetime; default one year. */
  validityMs?: number;
  /** CA lifetime; default ten serving lifetimes. */
  caValidityMs?: number;
  /** How long a new CA is trusted before it signs; default 10 min (see DEFAULT_OVERLAP_MS). */
  overlapMs?: number;
  /** How often to re-read the Secret for other replicas' steps; default 60 s. */
  pollMs?: number;
  /** A replica silent this long no longer holds up retiring the old CA; default three polls. */
  replicaTimeoutMs?: number;
  /** Whether the webhook configurations' caBundle holds every CA of `bundle` (kube/ca-bundle.ts). */
  trustCheck?: (bundle: string) => Promise<boolean>;
  /** Only sync when sync() is called (tests drive a fake clock); default false. */
  manual?: boolean;
  now?: () => number;
  log?: RotationLog;
  onError?: (err: unknown) => void;
}

const YEAR_MS = 365 * 24 * 3600 * 1000;
/**
 * An apiserver sees a webhook configuration change within a second or two (its informer), an HA control
 * plane's other apiservers likewise; ten minutes is that with a wide margin and also several 60 s polls, so
 * every live replica has reported before the new CA signs.
 */
export const DEFAULT_OVERLAP_MS = 10 * 60_000;
/** Reads, plans and writes per sync before giving up: each lost race costs one. */
const ATTEMPTS = 5;
/** Steps one sync may take in a row (e.g. promote, report, retire for a lone replica). */
const STEPS = 4;
/** setTimeout's ceiling (about 24.8 days); a longer wait is taken in pieces. */
const MAX_TIMER_MS = 2 ** 31 - 1;

const cn = (x: X509Certificate): string => /CN=([^\n,]+)/.exec(x.subject)?.[1] ?? x.fingerprint256;

export class SecretSource extends PairSource {
  readonly #o: SecretSourceOptions & { where: string; self: string; pollMs: number; now: () => number };
  readonly #policy: RotationPolicy;
  #state?: TrustState;
  #serving = '';
  #timer?: NodeJS.Timeout;
  #queue: Promise<void> = Promise.resolve();
  #waitingLogged = '';
  #stopped = false;

  constructor(opts: SecretSourceOptions) {
    super(opts.now);
    const pollMs = opts.pollMs ?? 60_000;
    const validityMs = opts.validityMs ?? YEAR_MS;
    this.#o = {
      ...opts,
      where: opts.where ?? 'certificate Secret',
      self: opts.replicaId ?? hostname(),
      pollMs,
      now: opts.now ?? Date.now,
    };
    this.#policy = {
      leafLifetimeMs: validityMs,
      caLifetimeMs: opts.caValidityMs ?? validityMs * 10,
      overlapMs: opts.overlapMs ?? DEFAULT_OVERLAP_MS,
      replicaTimeoutMs: opts.replicaTimeoutMs ?? 3 * pollMs,
      // Every poll during a rotation refreshes the report.
      reportEveryMs: Math.floor(pollMs / 2),
    };
    if (this.#policy.overlapMs < this.#policy.replicaTimeoutMs) {
      throw new Error(
        `overlapMs (${this.#policy.overlapMs}) must be at least replicaTimeoutMs (${this.#policy.replicaTimeoutMs}): ` +
          'every live replica reports before the new CA signs',
      );
    }
  }

  /** One reconcile; syncs of one source never overlap (a late one could otherwise adopt an older state). */
  sync(): Promise<void> {
    const run = this.#queue.then(() => this.#sync());
    this.#queue = run.catch(() => undefined);
    return run;
  }

  async #sync(): Promise<void> {
    const { store, where } = this.#o;
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const current = await store.read();
      if (!current) {
        const state = this.#initial();
        if ((await store.create(toSecretData(state))) === undefined) continue;
        this.#o.log?.info(
          {
            event: 'created',
            ca: cn(state.signer.x509),
            caNotAfter: state.signer.x509.validToDate,
            notAfter: state.leaf.x509.validToDate,
          },
          'certificates: created a CA and a serving certificate',
        );
        this.#adopt(state);
        return;
      }
      let state = fromSecretData(current.data, where);
      let version = current.resourceVersion;
      this.#adopt(state);
      let lost = false;
      for (let n = 0; n < STEPS && !lost; n++) {
        const ctx = await this.#context(state);
        const step = nextStep(state, ctx);
        this.#explainWait(state, ctx, step);
        if (!step) return;
        const after = applyStep(state, step, ctx, this.#o.sans);
        const written = await store.replace(toSecretData(after), version);
        if (written === undefined) lost = true;
        else {
          this.#logStep(step, state, after);
          [state, version] = [after, written];
          this.#adopt(state);
        }
      }
      if (!lost) return;
    }
    throw new Error(`${where}: could not agree on the certificates with the other replicas after ${ATTEMPTS} attempts`);
  }

  #initial(): TrustState {
    const now = this.#o.now();
    const ca = issueCA(this.#policy.caLifetimeMs, now);
    const leaf = issueLeaf(ca, this.#o.sans, this.#policy.leafLifetimeMs, now);
    return { leaf: { cert: leaf.cert, key: leaf.key, x509: new X509Certificate(leaf.cert) }, signer: ca, replicas: {} };
  }

  async #context(state: TrustState): Promise<PlanContext> {
    const now = this.#o.now();
    let published = true;
    if (this.#o.trustCheck && promoteDue(state, now, this.#policy)) {
      published = await this.#o.trustCheck(bundleOf(state)).catch((err) => {
        this.#o.log?.warn(
          { event: 'trust_check_failed', err: errorFields(err) },
          "certificates: could not read the webhook configurations' caBundle",
        );
        return false;
      });
    }
    return { now, self: this.#o.self, serving: this.#serving, policy: this.#policy, published };
  }

  /** Says why a rotation is not moving on (once per bundle for the caBundle, every sync for replicas). */
  #explainWait(state: TrustState, ctx: PlanContext, step: RotationStep | undefined): void {
    if (
      state.next &&
      promoteDue(state, ctx.now, this.#policy) &&
      !ctx.published &&
      this.#waitingLogged !== bundleOf(state)
    ) {
      this.#waitingLogged = bundleOf(state);
      this.#o.log?.warn(
        { event: 'waiting_for_ca_bundle', ca: cn(state.next.x509) },
        "certificates: the new CA signs only once the webhook configurations' caBundle holds it",
      );
    }
    if (state.retiring && step?.kind !== 'retire') {
      const replicas = laggards(state, ctx.now, this.#policy);
      if (replicas.length)
        this.#o.log?.info(
          { event: 'waiting_for_replicas', replicas, oldCa: cn(state.retiring) },
          'certificates: the old CA stays trusted until these replicas serve the new one',
        );
    }
  }

  #logStep(step: RotationStep, before: TrustState, after: TrustState): void {
    const log = this.#o.log;
    if (!log) return;
    const bundle = trustedCAs(after).map(cn);
    switch (step.kind) {
      case 'renew-leaf':
        log.info(
          {
            event: 'leaf_renewed',
            serial: after.leaf.x509.serialNumber,
            notAfter: after.leaf.x509.validToDate,
            ca: cn(after.signer.x509),
          },
          'certificates: serving certificate renewed',
        );
        return;
      case 'prepare':
        log.info(
          {
            event: 'ca_prepared',
            why: step.why,
            // applyStep has just set `next` for a prepare step; a log line must not throw if it ever did not.
            ca: after.next && cn(after.next.x509),
            caNotAfter: after.next?.x509.validToDate,
            oldCa: cn(before.signer.x509),
            oldCaNotAfter: before.signer.x509.validToDate,
            bundle,
          },
          'certificates: CA rotation started; the new CA is trusted next to the old one',
        );
        return;
      case 'promote':
        log.info(
          { event: 'ca_promoted', ca: cn(after.signer.x509), serial: after.leaf.x509.serialNumber, bundle },
          'certificates: CA rotation: the new CA signs the serving certificate; the old one stays trusted',
        );
        return;
      case 'retire':
        log.info(
          { event: 'ca_retired', why: step.why, oldCa: cn(step.old), bundle },
          'certificates: CA rotation done; the old CA left the bundle',
        );
        return;
      case 'report':
        return;
    }
  }

  #adopt(state: TrustState): void {
    this.#state = state;
    this.#serving = state.signer.x509.fingerprint256;
    const pair: CertPair = {
      cert: state.leaf.cert,
      key: state.leaf.key,
      ca: bundleOf(state),
      notAfter: state.leaf.x509.validToDate,
    };
    const had = this.peek();
    if (had?.cert === pair.cert && had.ca === pair.ca) return;
    this.publish(pair);
  }

  /** Whether a CA rotation is under way (two CAs trusted). */
  rotating(): boolean {
    return !!this.#state && rotating(this.#state);
  }

  async start(): Promise<void> {
    await this.sync();
    if (!this.#o.manual) this.#schedule();
  }

  #schedule(): void {
    if (this.#stopped) return;
    const untilDue = this.#state ? nextDue(this.#state, this.#policy) - this.#o.now() : 0;
    // At least a second apart, so a step that keeps failing does not spin.
    const wait = Math.min(MAX_TIMER_MS, this.#o.pollMs, Math.max(1000, untilDue));
    this.#timer = setTimeout(() => {
      this.sync()
        .catch((err) => this.#o.onError?.(err))
        .finally(() => this.#schedule());
    }, wait);
    this.#timer.unref();
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
  }
}
