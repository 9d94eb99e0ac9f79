/**
 * AdmissionReview transport: decode a request body, build the response. Policy code never sees raw bodies and
 * never builds responses; it returns a Verdict (admission/verdict.ts) that this module encodes. The response
 * always echoes the request's uid and apiVersion, as the apiserver requires.
 */
import type { PatchOp } from '../contract/patch.ts';
import type { VerdictReason } from '../contract/reasons.ts';
import { isObject } from '../util/json.ts';
import { base64JsonPatch } from '../util/base64-json.ts';

export const SUPPORTED_VERSIONS = ['admission.k8s.io/v1', 'admission.k8s.io/v1beta1'];

/** The audit annotation that carries a verdict's reason code. */
const REASON_AUDIT_KEY = 'meshgate.io/reason';
/** The audit annotation of a refusal admitted at a lower enforcement level: the level (warn, audit). */
const WOULD_DENY_AUDIT_KEY = 'meshgate.io/would-deny';

export interface AdmissionRequest {
  uid: string;
  kind: { group: string; version: string; kind: string };
  resource: { group: string; version: string; resource: string };
  subResource?: string;
  name?: string;
  namespace?: string;
  operation: 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';
  userInfo?: { username?: string; groups?: string[]; extra?: Record<string, string[]> };
  object?: unknown;
  oldObject?: unknown;
  dryRun?: boolean;
  options?: unknown;
}

export interface DecodedReview {
  apiVersion: string;
  request: AdmissionRequest;
}

export type ReviewDecodeResult = { ok: true; review: DecodedReview } | { ok: false; error: string };

/** Checks just what the handlers rely on; anything else in the body is passed along untouched. */
export function decodeReview(body: unknown): ReviewDecodeResult {
  if (!isObject(body)) return { ok: false, error: 'body is not a JSON object' };
  if (body.kind !== 'AdmissionReview')
    return { ok: false, error: `kind is ${JSON.stringify(body.kind)}, expected "AdmissionReview"` };
  if (typeof body.apiVersion !== 'string' || !SUPPORTED_VERSIONS.includes(body.apiVersion)) {
    return {
      ok: false,
      error: `apiVersion ${JSON.stringify(body.apiVersion)} is not one of ${SUPPORTED_VERSIONS.join(', ')}`,
    };
  }
  const r = body.request;
  if (!isObject(r)) return { ok: false, error: 'request is missing' };
  if (typeof r.uid !== 'string' || r.uid === '') return { ok: false, error: 'request.uid is missing' };
  if (!isObject(r.kind) || typeof r.kind.kind !== 'string') return { ok: false, error: 'request.kind is missing' };
  if (!isObject(r.resource) || typeof r.resource.resource !== 'string')
    return { ok: false, error: 'request.resource is missing' };
  if (typeof r.operation !== 'string') return { ok: false, error: 'request.operation is missing' };
  return { ok: true, review: { apiVersion: body.apiVersion, request: r as unknown as AdmissionRequest } };
}

/** What a handler decided, transport-free. */
/** A refusal meshgate did not enforce (src/admission/level.ts): at which level, and what it would have said. */
export interface Audited {
  level: 'warn' | 'audit';
  message: string;
  /**
   * This verdict is the pod's one count at its level (meshgate_audited_pods_total): set by the validating webhook on
   * a pod CREATE (not a dry run), which the apiserver calls exactly once per pod, never on reinvocations, bindings or
   * updates.
   */
  pod?: true;
}

export type Verdict =
  | { kind: 'allow'; reason: VerdictReason; warnings?: string[]; audited?: Audited }
  | { kind: 'patch'; reason: VerdictReason; ops: PatchOp[]; warnings?: string[]; audited?: Audited }
  | { kind: 'deny'; reason: VerdictReason; message: string; warnings?: string[] }
  | { kind: 'error'; reason: VerdictReason; message: string };

export interface AdmissionResponseBody {
  apiVersion: string;
  kind: 'AdmissionReview';
  response: {
    uid: string;
    allowed: boolean;
    status?: { code: number; message: string; reason?: string };
    patchType?: 'JSONPatch';
    patch?: string;
    warnings?: string[];
    /** meshgate's one audit annotation: the verdict's reason code. */
    auditAnnotations?: { [REASON_AUDIT_KEY]: string; [WOULD_DENY_AUDIT_KEY]?: 'warn' | 'audit' };
  };
}

/**
 * The most an answer may weigh, encoded: 1 MiB. meshgate's largest real answer is a few KB (the CNI-mode patch
 * is ~2.2 KB); a patch adding more than etcd stores in a whole object (1.5 MiB) could not describe a pod the
 * apiserver can keep anyway. The cap bounds what an answer costs to hold for a slow reader, to send and for
 * the apiserver to decode; an answer beyond it is replaced by an errored review saying so (the apiserver then
 * applies the webhook's failurePolicy).
 */
export const MAX_ANSWER_BYTES = 1024 * 1024;

function tooLarge(bytes: number, what: string): Verdict {
  const mib = (bytes / 1024 / 1024).toFixed(1);
  return {
    kind: 'error',
    reason: 'answer_too_large',
    message:
      `the answer to this review would be ${mib} MiB (${what}), ` +
      `over meshgate's ${MAX_ANSWER_BYTES / 1024 / 1024} MiB cap on an answer; it was not sent`,
  };
}

export function encodeResponse(apiVersion: string, uid: string, v: Verdict): AdmissionResponseBody {
  const response: AdmissionResponseBody['response'] = { uid, allowed: v.kind === 'allow' || v.kind === 'patch' };
  if (v.kind === 'patch' && v.ops.length > 0) {
    const patch = base64JsonPatch(v.ops);
    // Checked here too, before the patch is copied into the answer: it is nearly all of the answer.
    if (patch.length > MAX_ANSWER_BYTES)
      return encodeResponse(apiVersion, uid, tooLarge(patch.length, `a JSON Patch of ${v.ops.length} operations`));
    response.patchType = 'JSONPatch';
    response.patch = patch;
  }
  if (v.kind === 'deny')
    response.status = { code: 403, reason: 'Forbidden', message: `meshgate: ${v.message} [${v.reason}]` };
  if (v.kind === 'error')
    response.status = { code: 500, reason: 'InternalError', message: `meshgate: ${v.message} [${v.reason}]` };
  if (v.kind !== 'error' && v.warnings?.length) response.warnings = v.warnings.map((w) => `meshgate: ${w}`);
  // A literal key (the type holds it to REASON_AUDIT_KEY): V8 builds such an object from a boilerplate.
  response.auditAnnotations = { 'meshgate.io/reason': v.reason };
  if ((v.kind === 'allow' || v.kind === 'patch') && v.audited)
    response.auditAnnotations['meshgate.io/would-deny'] = v.audited.level;
  return { apiVersion, kind: 'AdmissionReview', response };
}

/**
 * The response as JSON text, written field by field: the response has a fixed, small shape, and the base64 patch
 * (most of the body) has no character JSON must escape, so it is copied in as it is (a rope the socket write
 * flattens, never scanned). Kept after measuring with the patch encoder (issue 22, docs/benchmarks.md). Text over
 * MAX_ANSWER_BYTES (long warnings or messages) is replaced by an errored review saying so. Pinned to JSON.stringify's
 * text of the same response, key order included, by test/util/json.test.ts.
 */
export function serializeResponse(body: AdmissionResponseBody): string {
  const s = writeResponse(body);
  // A UTF-16 code unit is at most 3 UTF-8 bytes: most answers are cleared without counting.
  if (s.length <= MAX_ANSWER_BYTES / 3) return s;
  const bytes = Buffer.byteLength(s);
  if (bytes <= MAX_ANSWER_BYTES) return s;
  return writeResponse(
    encodeResponse(body.apiVersion, body.response.uid, tooLarge(bytes, 'its messages and warnings')),
  );
}

/** An answer's text up to its uid. */
const openingOf = (apiVersion: string) =>
  `{"apiVersion":${JSON.stringify(apiVersion)},"kind":"AdmissionReview","response":{"uid":`;
/** The opening of every supported apiVersion, written once: the review's own strings are its uid and messages. */
const OPENING: ReadonlyMap<string, string> = new Map(SUPPORTED_VERSIONS.map((v) => [v, openingOf(v)]));
const AUDIT_OPENING = `,"auditAnnotations":{${JSON.stringify(REASON_AUDIT_KEY)}:`;

function writeResponse(body: AdmissionResponseBody): string {
  const r = body.response;
  const opening = OPENING.get(body.apiVersion) ?? openingOf(body.apiVersion);
  let s = `${opening}${JSON.stringify(r.uid)},"allowed":${r.allowed === true}`;
  if (r.patchType !== undefined) s += `,"patchType":"JSONPatch","patch":"${r.patch}"`;
  if (r.status !== undefined) s += `,"status":${JSON.stringify(r.status)}`;
  if (r.warnings !== undefined) s += `,"warnings":${JSON.stringify(r.warnings)}`;
  if (r.auditAnnotations !== undefined) {
    s += `${AUDIT_OPENING}${JSON.stringify(r.auditAnnotations[REASON_AUDIT_KEY])}`;
    const level = r.auditAnnotations[WOULD_DENY_AUDIT_KEY];
    s += level === undefined ? '}' : `,${JSON.stringify(WOULD_DENY_AUDIT_KEY)}:"${level}"}`;
  }
  return `${s}}}`;
}
