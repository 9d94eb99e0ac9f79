/**
 * What the self-managed certificates need next, as a pure function of the Secret's state and the clock, so
 * every phase is a table test with a fake clock. One step per Secret write; replicas race on the write
 * (resourceVersion precondition) and the loser re-reads and plans again (secret-source.ts).
 *
 * A CA rotation has three phases, each safe for a client holding any bundle published before it:
 *   prepare  a new CA is made and added to the bundle next to the old one; the old CA still signs. Starts at
 *            two thirds of the old CA's life (as serving certificates are renewed), so a third of its life —
 *            3.3 serving lifetimes by default — is left for the rotation and for anyone to notice one stuck;
 *            a CA whose key is not ECDSA P-256 (made by an older meshgate) is rotated at once.
 *   promote  once the new CA has been in the bundle for `overlapMs` AND the webhook configurations' caBundle
 *            holds it, a serving certificate from the new CA replaces the old one (clients trust both).
 *   retire   once every live replica reports serving a certificate from the new CA (or the old CA expired),
 *            the old CA leaves the bundle. A replica is live while its last report is younger than
 *            `replicaTimeoutMs`; reports are refreshed every `reportEveryMs` during a rotation only.
 * Serving certificates are still renewed at two thirds of their life, by whichever CA signs at the time. A
 * signer that has already expired (the cluster was off for years) is replaced in one go: prepare, promote
 * and retire without waiting, since nothing it signed works any more.
 */
import { X509Certificate } from 'node:crypto';
import { issueCA, issueLeaf, issuedAt, isP256, renewAt } from './authority.ts';
import { rotating, type ReplicaReport, type TrustState } from './trust-state.ts';

export interface RotationPolicy {
  leafLifetimeMs: number;
  caLifetimeMs: number;
  /** How long a new CA is trusted before it signs: time for the caBundle to reach every apiserver. */
  overlapMs: number;
  /** A replica whose report is older than this is taken as gone and no longer holds up a retirement. */
  replicaTimeoutMs: number;
  /** During a rotation each replica re-reports at least this often. */
  reportEveryMs: number;
}

export type RotationStep =
  | { kind: 'renew-leaf' }
  | { kind: 'prepare'; why: 'ca_due' | 'ca_not_p256' }
  /** `ca`: the prepared CA that now signs. */
  | { kind: 'promote'; ca: TrustState['signer'] }
  /** `old`: the CA that leaves the bundle. */
  | { kind: 'retire'; why: 'replicas_moved' | 'old_ca_expired'; old: X509Certificate }
  | { kind: 'report' };

export interface PlanContext {
  now: number;
  /** This replica's id (its pod name). */
  self: string;
  /** Fingerprint of the CA that issued the certificate this replica serves right now. */
  serving: string;
  policy: RotationPolicy;
  /** The webhook configurations' caBundle holds every CA of the current bundle (true when nothing publishes it). */
  published: boolean;
}

const expired = (ca: TrustState['signer'], now: number): boolean => now >= ca.x509.validToDate.getTime();

/** The prepared CA has been trusted for the overlap: it may sign once the bundle is published. */
export function promoteDue(s: TrustState, now: number, policy: RotationPolicy): boolean {
  return !!s.next && now >= issuedAt(s.next.x509) + policy.overlapMs;
}

function live(s: TrustState, now: number, policy: RotationPolicy): Array<[string, ReplicaReport]> {
  return Object.entries(s.replicas).filter(([, r]) => now - r.at < policy.replicaTimeoutMs);
}

/** Live replicas still serving a certificate from a CA other than the signer (they hold up a retirement). */
export function laggards(s: TrustState, now: number, policy: RotationPolicy): string[] {
  const signer = s.signer.x509.fingerprint256;
  return live(s, now, policy)
    .filter(([, r]) => r.ca !== signer)
    .map(([id]) => id)
    .sort();
}

export function nextStep(s: TrustState, c: PlanContext): RotationStep | undefined {
  const old = s.retiring;
  if (old) {
    if (c.now >= old.validToDate.getTime()) return { kind: 'retire', why: 'old_ca_expired', old };
    if (laggards(s, c.now, c.policy).length === 0) return { kind: 'retire', why: 'replicas_moved', old };
  }
  // With the signer expired nothing it signed works any more: waiting for the overlap or the caBundle (the
  // cluster was off for long, or the caBundle could never be patched) only prolongs the outage.
  if (s.next && expired(s.signer, c.now)) return { kind: 'promote', ca: s.next };
  if (s.next && promoteDue(s, c.now, c.policy) && c.published) return { kind: 'promote', ca: s.next };
  if (!rotating(s)) {
    if (!isP256(s.signer.privateKey)) return { kind: 'prepare', why: 'ca_not_p256' };
    if (c.now >= renewAt(s.signer.x509)) return { kind: 'prepare', why: 'ca_due' };
  }
  const leafDue = c.now >= renewAt(s.leaf.x509) || !isP256(s.leaf.x509.publicKey);
  if (leafDue && !expired(s.signer, c.now)) return { kind: 'renew-leaf' };
  const mine = s.replicas[c.self];
  if (rotating(s) && (!mine || mine.ca !== c.serving || c.now - mine.at >= c.policy.reportEveryMs))
    return { kind: 'report' };
  return undefined;
}

/**
 * The state after `step`. Every write during a rotation carries this replica's report of what it serves at
 * the time of writing (it adopts the result only afterwards); reports of replicas gone for longer than the
 * timeout are dropped, and a state that is no longer rotating keeps none.
 */
export function applyStep(s: TrustState, step: RotationStep, c: PlanContext, sans: readonly string[]): TrustState {
  const { now, policy } = c;
  const leafFrom = (ca: TrustState['signer']) => {
    const p = issueLeaf(ca, sans, policy.leafLifetimeMs, now);
    return { cert: p.cert, key: p.key, x509: new X509Certificate(p.cert) };
  };
  let out: TrustState;
  switch (step.kind) {
    case 'renew-leaf':
      out = { ...s, leaf: leafFrom(s.signer) };
      break;
    case 'prepare':
      out = { ...s, next: issueCA(policy.caLifetimeMs, now) };
      break;
    case 'promote':
      out = { leaf: leafFrom(step.ca), signer: step.ca, retiring: s.signer.x509, replicas: s.replicas };
      break;
    case 'retire':
      out = { leaf: s.leaf, signer: s.signer, next: s.next, replicas: {} };
      break;
    case 'report':
      out = s;
      break;
  }
  if (!rotating(out)) return { ...out, replicas: {} };
  const kept = Object.entries(out.replicas).filter(([id, r]) => id !== c.self && now - r.at < policy.replicaTimeoutMs);
  return { ...out, replicas: Object.fromEntries([...kept, [c.self, { ca: c.serving, at: now }]]) };
}

/** The earliest time a step other than a report may become due: when a replica alone should wake up. */
export function nextDue(s: TrustState, policy: RotationPolicy): number {
  const due = [renewAt(s.leaf.x509)];
  if (!rotating(s)) due.push(renewAt(s.signer.x509));
  if (s.next) due.push(issuedAt(s.next.x509) + policy.overlapMs);
  if (s.retiring) due.push(s.retiring.validToDate.getTime());
  return Math.min(...due);
}
