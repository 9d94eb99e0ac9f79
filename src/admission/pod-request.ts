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

/** A request's pod(s), or the verdict for a body that is not one. */
export type Parsed<T> = { ok: true; value: T } | { ok: false; verdict: Verdict };

function pod(value: unknown, where: string): Parsed<Pod> {
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
): Parsed<PodInput> {
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

export function podUpdateInput(
  r: AdmissionRequest,
): Parsed<{ old: Pod; pod: Pod; namespace: string; requester?: string }> {
  const p = pod(r.object, 'request.object');
  if (!p.ok) return p;
  const old = pod(r.oldObject, 'request.oldObject');
  if (!old.ok) return old;
  return {
    ok: true,
    value: { old: old.value, pod: p.value, namespace: namespaceOf(r, p.value), requester: r.userInfo?.username },
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
): Parsed<Compiled> {
  const r = configForNamespace(cfg, namespace, idsOf);
  return r.ok
    ? { ok: true, value: r.cfg }
    : { ok: false, verdict: { kind: 'deny', reason: 'proxy_ids_unknown', message: r.message } };
}
