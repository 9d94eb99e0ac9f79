/**
 * AdmissionReviews as the apiserver sends them, for the HTTP tests and the processes they start: no test framework
 * imported here, so a plain node child (measure-amplification.ts) may build its bodies with them too.
 */
import type { AdmissionRequest } from '../../src/admission/review.ts';

export interface Review {
  apiVersion: string;
  kind: string;
  request: { uid: string; object?: unknown; dryRun?: boolean; [key: string]: unknown };
}

/** A pod CREATE review of `object` in namespace demo (`extra` adds to or overrides the request's fields). */
export function podCreateReview(
  uid: string,
  object: unknown,
  extra: Record<string, unknown> = {},
  apiVersion = 'admission.k8s.io/v1',
): Review {
  return {
    apiVersion,
    kind: 'AdmissionReview',
    request: {
      uid,
      kind: { group: '', version: 'v1', kind: 'Pod' },
      resource: { group: '', version: 'v1', resource: 'pods' },
      namespace: 'demo',
      operation: 'CREATE',
      object,
      ...extra,
    },
  };
}

/**
 * The request the apiserver sends for `binding` (a Binding object): a pods/binding CREATE, or with `legacy` one of the
 * older bindings resource (no subresource).
 */
export function bindingRequest(
  uid: string,
  binding: { metadata: { name: string; namespace: string } },
  legacy = false,
): AdmissionRequest {
  return {
    uid,
    kind: { group: '', version: 'v1', kind: 'Binding' },
    resource: { group: '', version: 'v1', resource: legacy ? 'bindings' : 'pods' },
    ...(legacy ? {} : { subResource: 'binding' }),
    name: binding.metadata.name,
    namespace: binding.metadata.namespace,
    operation: 'CREATE',
    object: binding,
  };
}

/** The review of `binding` (a Binding object, pods/binding CREATE), as the apiserver sends it. */
export function bindingObjectReview(uid: string, binding: { metadata: { name: string; namespace: string } }): Review {
  return { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: { ...bindingRequest(uid, binding) } };
}

/** The scheduler's binding of pod demo/`pod` to `node` (pods/binding CREATE), as the apiserver reviews it. */
export function bindingReview(uid: string, pod: string, node: string): Review {
  return bindingObjectReview(uid, {
    apiVersion: 'v1',
    kind: 'Binding',
    metadata: { name: pod, namespace: 'demo' },
    target: { kind: 'Node', name: node },
  } as { metadata: { name: string; namespace: string } });
}
