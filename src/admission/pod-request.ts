/**
 * Adapts admission requests about pods to the pure core: which request is which, and the pod (or pods, for an
 * UPDATE) parsed once by the one pod parser, with a verdict naming the problem when a body is not a pod.
 */
import type { Compiled } from '../config/compile.ts';
import { configForNamespace } from '../config/per-namespace.ts';
import type { ProxyIds } from '../mesh/istio-openshift.ts';
import { parsePod } from '../pod/parse.ts';
import type { Pod } from '../contract/pod.ts';
import type { PodInput } from '../policy/screen.ts';
import type { AccessRequest } from '../policy/validate/access.ts';
import type { AdmissionRequest, Verdict } from './review.ts';

const core = (r: AdmissionRequest) => r.resource.group === '' && r.resource.resource;

export function isPodCreate(r: AdmissionRequest): boolean {
  return r.operation === 'CREATE' && core(r) === 'pods' && !r.subResource;
}

/** UPDATE of a pod itself, or of its ephemeral containers (how `kubectl debug` adds a container to a running pod). */
export function isPodUpdate(r: AdmissionRequest): boolean {
  return r.operation === 'UPDATE' && core(r) === 'pods' && (!r.subResource || r.subResource === 'ephemeralcontainers');
}

/** The scheduler's pods/binding, and the legacy POST /api/v1/namespaces/NS/bindings (resource `bindings`). */
export function isBinding(r: AdmissionRequest): boolean {
  return (
    r.operation === 'CREATE' &&
    ((core(r) === 'pods' && r.subResource === 'binding') || (core(r) === 'bindings' && !r.subResource))
  );
}

/** `kubectl exec` and `kubectl attach`: a CONNECT of pods/exec or pods/attach (src/policy/validate/access.ts). */
export function isPodConnect(r: AdmissionRequest): boolean {
  return r.operation === 'CONNECT' && core(r) === 'pods' && (r.subResource === 'exec' || r.subResource === 'attach');
}

/**
 * The access a CONNECT asks for, from its PodExecOptions/PodAttachOptions (request.object), or the verdict for options
 * that are not such: `container` a string when present, `command` (exec) a list of strings. The command is kept
 * only for the record, at most MAX_COMMAND_ARGS of it.
 */
export function accessInput(r: AdmissionRequest): RequestInput<AccessRequest> {
  const bad = (what: string): RequestInput<AccessRequest> => ({
    ok: false,
    verdict: { kind: 'deny', reason: 'invalid_object', message: `not valid ${r.subResource} options: ${what}` },
  });
  const o = r.object;
  if (o !== undefined && o !== null && (typeof o !== 'object' || Array.isArray(o)))
    return bad('request.object is not an object');
  const { container, command } = (o ?? {}) as { container?: unknown; command?: unknown };
  if (container !== undefined && typeof container !== 'string') return bad('request.object.container is not a string');
  if (command !== undefined && !(Array.isArray(command) && command.every((a) => typeof a === 'string')))
    return bad('request.object.command is not a list of strings');
  if (typeof r.name !== 'string' || r.name === '') return bad('request.name (the pod) is missing');
  return {
    ok: true,
    value: {
      kind: r.subResource === 'attach' ? 'attach' : 'exec',
      namespace: r.namespace ?? 'default',
      pod: r.name,
      container,
      command: (command as string[] | undefined)?.slice(0, MAX_COMMAND_ARGS),
      username: r.userInfo?.username,
      groups: r.userInfo?.groups,
    },
  };
}

/** Arguments of an exec's command kept for its record: enough to say what ran (the audit log has all of it). */
const MAX_COMMAND_ARGS = 32;

/** A request's pod(s), or the verdict for a body that is not one. */
export type RequestInput<T> = { ok: true; value: T } | { ok: false; verdict: Verdict };

function pod(value: unknown, where: string): RequestInput<Pod> {
  const parsed = parsePod(value, where);
  return parsed.ok
    ? { ok: true, value: parsed.pod }
    : { ok: false, verdict: { kind: 'deny', reason: 'invalid_object', message: `not a valid pod: ${parsed.error}` } };
}

function namespaceOf(r: AdmissionRequest, p: Pod): string {
  return r.namespace ?? p.metadata?.namespace ?? 'default';
}

/** `labelsOf`: the namespace label cache (Istio ambient's selectors read it); absent, the labels are unknown. */
export function podInput(
  r: AdmissionRequest,
  labelsOf?: (namespace: string) => Readonly<Record<string, string>> | undefined,
): RequestInput<PodInput> {
  const p = pod(r.object, 'request.object');
  if (!p.ok) return p;
  const namespace = namespaceOf(r, p.value);
  const namespaceLabels = labelsOf?.(namespace);
  return {
    ok: true,
    value: {
      pod: p.value,
      namespace,
      requester: r.userInfo?.username,
      ...(namespaceLabels ? { namespaceLabels } : {}),
    },
  };
}

/** The claim a pod-bound ServiceAccount token carries: the node its pod runs on (Kubernetes >= 1.30). */
export const NODE_NAME_CLAIM = 'authentication.kubernetes.io/node-name';

/** The node the requester's token is bound to; undefined unless exactly one value is claimed. */
export function requesterNode(r: AdmissionRequest): string | undefined {
  const v = r.userInfo?.extra?.[NODE_NAME_CLAIM];
  return Array.isArray(v) && v.length === 1 && typeof v[0] === 'string' ? v[0] : undefined;
}

export function podUpdateInput(
  r: AdmissionRequest,
): RequestInput<{ old: Pod; pod: Pod; namespace: string; requester?: string; requesterNode?: string }> {
  const p = pod(r.object, 'request.object');
  if (!p.ok) return p;
  const old = pod(r.oldObject, 'request.oldObject');
  if (!old.ok) return old;
  return {
    ok: true,
    value: {
      old: old.value,
      pod: p.value,
      namespace: namespaceOf(r, p.value),
      requester: r.userInfo?.username,
      requesterNode: requesterNode(r),
    },
  };
}

/**
 * The configuration the namespace's pods are judged with (src/config/per-namespace.ts): with `proxy.idsFrom:
 * openshift`, the namespace's proxy IDs from the cache; refused, retryably, while the namespace is not known.
 */
export function namespaceConfig(
  cfg: Compiled,
  namespace: string,
  idsOf: ((namespace: string) => ProxyIds | undefined) | undefined,
): RequestInput<Compiled> {
  const r = configForNamespace(cfg, namespace, idsOf);
  return r.ok
    ? { ok: true, value: r.cfg }
    : { ok: false, verdict: { kind: 'deny', reason: 'proxy_ids_unknown', message: r.message } };
}
