/**
 * The one log line per admission review (issue 24): which pod, whose, where, what was decided and why, and the
 * request's uid, which finds the apiserver's audit event for it. Every line has every key (null when the review
 * does not say), so a log pipeline indexes one shape:
 *
 *   {"level":"info","time":"…","msg":"admission","uid":"…","route":"mutate","operation":"CREATE",
 *    "resource":"pods","namespace":"shop","pod":"web-7d9f8c-*","owner":"ReplicaSet/web-7d9f8c","node":null,
 *    "decision":"patch","reason":"affinity_verified","wouldDeny":null,"dryRun":false}
 *
 * `pod` is the name, or the generateName with `*` when the apiserver has not named the pod yet (a controller's
 * pods at CREATE); `owner` the controlling ownerReference as kind/name; `node` the pod's nodeName, or the target
 * of a binding. These are read from the request as sent, only to describe it: the decision never reads them here.
 */
import type { AdmissionRequest, Verdict } from '../admission/review.ts';

export interface AdmissionLogFields {
  uid: string;
  route: string;
  operation: string;
  /** resource[/subresource]: pods, pods/binding, pods/ephemeralcontainers, bindings. */
  resource: string;
  namespace: string | null;
  pod: string | null;
  owner: string | null;
  node: string | null;
  /** The verdict's kind, or the level a refusal was admitted at (audit, warn: src/admission/level.ts). */
  decision: Verdict['kind'] | 'audit' | 'warn';
  reason: string;
  /** What a refusal admitted below enforce would have said; null otherwise. */
  wouldDeny: string | null;
  dryRun: boolean;
}

/** A Kubernetes name is at most 253 characters; what a request claims beyond that is cut, not logged whole. */
const MAX_NAME = 253;

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj | undefined => (v !== null && typeof v === 'object' ? (v as Obj) : undefined);
const str = (v: unknown): string | undefined =>
  typeof v === 'string' && v !== '' ? (v.length > MAX_NAME ? `${v.slice(0, MAX_NAME)}…` : v) : undefined;

/** The controlling owner (the one a controller recreates the pod through), else the first. */
function ownerOf(meta: Obj | undefined): string | null {
  const refs = meta?.ownerReferences;
  if (!Array.isArray(refs)) return null;
  const ref = obj(refs.find((r) => obj(r)?.controller === true) ?? refs[0]);
  const kind = str(ref?.kind);
  const name = str(ref?.name);
  return kind && name ? `${kind}/${name}` : null;
}

export function admissionLogFields(route: string, r: AdmissionRequest, v: Verdict): AdmissionLogFields {
  const object = obj(r.object) ?? obj(r.oldObject);
  const meta = obj(object?.metadata);
  const binding = r.subResource === 'binding' || r.resource.resource === 'bindings';
  const generated = str(meta?.generateName);
  const pod = binding
    ? (str(meta?.name) ?? str(r.name) ?? null)
    : (str(meta?.name) ?? str(r.name) ?? (generated ? `${generated}*` : null));
  const node = binding ? str(obj(object?.target)?.name) : str(obj(object?.spec)?.nodeName);
  const audited = v.kind === 'allow' || v.kind === 'patch' ? v.audited : undefined;
  return {
    uid: r.uid,
    route,
    operation: r.operation,
    resource: r.subResource ? `${r.resource.resource}/${r.subResource}` : r.resource.resource,
    namespace: str(r.namespace) ?? str(meta?.namespace) ?? null,
    pod,
    owner: binding ? null : ownerOf(meta),
    node: node ?? null,
    decision: audited ? audited.level : v.kind,
    reason: v.reason,
    wouldDeny: audited ? audited.message : null,
    dryRun: r.dryRun === true,
  };
}
