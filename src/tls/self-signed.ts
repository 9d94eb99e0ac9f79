/**
 * Self-signed certificates for a lone process (`meshgate serve` without a cluster, tests): the same CA and
 * serving-certificate life cycle as replicas sharing a Secret (secret-source.ts, rotation.ts), kept in memory.
 * The serving certificate is renewed at two thirds of its life; the CA, at two thirds of its own, is rotated
 * with an overlap: the bundle (RunningServer.ca, --write-certs) holds the old and new CA before the new one
 * signs. The source wakes when its next step is due.
 */
import { MemorySecretStore } from './memory-store.ts';
import { DEFAULT_OVERLAP_MS, SecretSource, type RotationLog } from './secret-source.ts';

export { issueSelfSigned, type IssuedPair } from './authority.ts';

export interface SelfSignedOptions {
  /** DNS names and IP addresses for the serving certificate, e.g. meshgate.meshgate.svc and 127.0.0.1. */
  sans: string[];
  /** Serving certificate lifetime; default one year. The CA lives ten times as long unless caValidityMs says. */
  validityMs?: number;
  caValidityMs?: number;
  /** How long a new CA is in the bundle before it signs; default 10 min. */
  overlapMs?: number;
  now?: () => number;
  log?: RotationLog;
  onError?: (err: unknown) => void;
}

/** Alone there is nobody to hear from: a report is only this process's own, and it never goes stale. */
const LONE_REPLICA_TIMEOUT_MS = 1000;
/** No other replica writes the state, so there is nothing to poll for: wake only when a step is due. */
const NO_POLL_MS = 2 ** 31 - 1;

export class SelfSignedSource extends SecretSource {
  constructor(opts: SelfSignedOptions) {
    super({
      ...opts,
      store: new MemorySecretStore(),
      where: 'self-signed certificates',
      replicaId: 'self',
      pollMs: NO_POLL_MS,
      replicaTimeoutMs: LONE_REPLICA_TIMEOUT_MS,
      overlapMs: opts.overlapMs ?? DEFAULT_OVERLAP_MS,
    });
  }
}
