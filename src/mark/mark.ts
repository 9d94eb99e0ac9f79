/**
 * The admission mark: annotation `meshgate.io/admitted` on a pod meshgate's mutating webhook admitted as meshed in a
 * namespace whose every pod it reviews. The repair controller deletes pods and withdraws nodes only on failures of
 * pods whose mark verifies (issue 21 §5): labels, container names and exit codes are all the pod author's to write,
 * so a bare pod in a namespace meshgate never sees can look exactly like a failed meshgate pod — but it cannot
 * carry a mark that verifies without the key (src/mark/keys.ts).
 *
 *   v1.<key id>.<issued>.<signature>
 *   signature = base64url(HMAC-SHA256(key, "meshgate.io/admitted v1\n<key id>\n<namespace>\n<issued>"))
 *
 * What it binds, and why no more: mutating admission sees no uid, no creationTimestamp and, with generateName, no
 * name (the apiserver sets them after mutation), and everything else in the pod is its author's. So the mark binds
 *   - the namespace: a mark copied from a guarded namespace's pod verifies nowhere else;
 *   - the time of admission (`issued`, seconds, the webhook's clock), checked against the pod's creationTimestamp,
 *     which the apiserver sets: a mark copied from another pod is worthless on any pod created more than
 *     MAX_SKEW_SECONDS away from that admission — say in a namespace that was guarded once and no longer is.
 * A copy within a guarded namespace gains nothing: every pod created there passes meshgate's validating webhook
 * (failurePolicy Fail), which judges the pod itself and re-verifies the mark, and the mutating webhook replaces it.
 */
import { createHmac, type KeyObject, timingSafeEqual } from 'node:crypto';
import type { KeyRing } from './keys.ts';

export const ADMITTED_ANNOTATION = 'meshgate.io/admitted';

/**
 * How far a mark's time may be from the pod's creationTimestamp, either way: mutation happens a few seconds before
 * the apiserver stores the pod (webhook calls of at most 30 s each, a reinvocation), on two machines' clocks.
 * Five minutes is that with a wide margin, and still short against the replay it bounds.
 */
export const MAX_SKEW_SECONDS = 300;

const VERSION = 'v1';
/** A mark is ~70 characters; anything much longer is refused before it is parsed. */
const MAX_MARK_LENGTH = 128;
const FORM = /^v1\.([0-9a-f]{8})\.([0-9]{1,12})\.([A-Za-z0-9_-]{43})$/;

function signature(secret: KeyObject, keyId: string, namespace: string, issued: number): string {
  return createHmac('sha256', secret)
    .update(`${ADMITTED_ANNOTATION} ${VERSION}\n${keyId}\n${namespace}\n${issued}`)
    .digest('base64url');
}

/** The mark for a pod admitted now (`issued`: seconds since the epoch) in `namespace`. */
export function issueMark(ring: KeyRing, namespace: string, issued: number): string {
  const k = ring.signer;
  return `${VERSION}.${k.id}.${issued}.${signature(k.secret, k.id, namespace, issued)}`;
}

export type MarkCheck = { ok: true; keyId: string; issued: number } | { ok: false; problem: string };

/**
 * Whether `mark` verifies for a pod of `namespace` created at `created` (seconds since the epoch). `problem` is a
 * sentence fragment for messages: "the mark …".
 */
export function verifyMark(ring: KeyRing, mark: string, namespace: string, created: number): MarkCheck {
  if (mark.length > MAX_MARK_LENGTH)
    return { ok: false, problem: `is ${mark.length} characters long, not a meshgate mark` };
  const m = FORM.exec(mark);
  if (!m)
    return {
      ok: false,
      problem: `${JSON.stringify(mark)} is not a meshgate mark (${VERSION}.<key id>.<issued>.<signature>)`,
    };
  const [, keyId, issuedText, sig] = m;
  const key = ring.verifiers.find((k) => k.id === keyId);
  if (!key)
    return {
      ok: false,
      problem:
        `names key ${keyId}, which meshgate does not hold ` +
        `(it holds ${ring.verifiers.map((k) => k.id).join(', ')})`,
    };
  const issued = Number(issuedText);
  const want = Buffer.from(signature(key.secret, keyId, namespace, issued));
  if (!timingSafeEqual(want, Buffer.from(sig)))
    return {
      ok: false,
      problem: `does not verify for namespace ${namespace} (issued in another namespace, altered, or forged)`,
    };
  if (Math.abs(created - issued) > MAX_SKEW_SECONDS)
    return {
      ok: false,
      problem:
        `was issued at ${iso(issued)}, but the pod was created at ${iso(created)}: a mark holds only for a pod ` +
        `created within ${MAX_SKEW_SECONDS / 60} minutes of its admission (copied from another pod?)`,
    };
  return { ok: true, keyId, issued };
}

const iso = (s: number) => new Date(s * 1000).toISOString().replace('.000Z', 'Z');

/** Seconds since the epoch of a Kubernetes timestamp (RFC 3339 text, or a Date from the client); undefined if none. */
export function epochSeconds(t: string | Date | undefined): number | undefined {
  if (t === undefined) return undefined;
  const ms = t instanceof Date ? t.getTime() : Date.parse(t);
  return Number.isNaN(ms) ? undefined : Math.floor(ms / 1000);
}
