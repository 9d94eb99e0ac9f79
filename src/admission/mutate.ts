/**
 * Mutating handler: adapts an admission request to the decision core and its Decision to a Verdict, then adds the
 * admission mark (src/mark/admission.ts) to a pod admitted as meshed: one more op after the decision's own.
 */
import type { Compiled } from '../config/compile.ts';
import type { NodeFacts } from '../facts/node-facts.ts';
import { decide } from '../policy/mutate/decide.ts';
import type { PatchOp } from '../contract/patch.ts';
import type { ReasonCode } from '../contract/reasons.ts';
import { type AdmissionScope, type Marker, markOps } from '../mark/admission.ts';
import type { PodInput } from '../policy/screen.ts';
import type { RedirectOptions } from '../policy/redirect.ts';
import type { NamespaceLabels } from '../kube/namespace-labels.ts';
import { MAX_PATCH_OPS } from '../policy/limits.ts';
import { isPodCreate, namespaceConfig, podInput } from './pod-request.ts';
import type { AdmissionRequest, Verdict } from './review.ts';

export interface MutateDeps {
  config: Compiled;
  nodes: NodeFacts;
  /** Signs the admission mark; undefined: pods are not marked (no key configured, as offline). */
  marker?: Marker;
  /** Istio ambient's namespace labels and OpenShift's proxy IDs, from the watch-backed cache. */
  namespaces?: NamespaceLabels;
}

/** `o.hold` false at enforcement level audit: no pod is pinned or held (src/policy/redirect.ts). */
export function mutate(
  r: AdmissionRequest,
  deps: MutateDeps,
  scope: AdmissionScope = 'namespace',
  o: RedirectOptions = {},
): Verdict {
  if (!isPodCreate(r)) return { kind: 'allow', reason: 'not_a_pod_create' };
  const input = podInput(r, deps.namespaces?.get);
  if (!input.ok) return input.verdict;
  const cfg = namespaceConfig(deps.config, input.value.namespace, deps.namespaces?.proxyIds);
  if (!cfg.ok) return cfg.verdict;
  const d = decide(input.value, deps.nodes, cfg.value, o);
  switch (d.kind) {
    case 'skip':
      // Meshed already (a reinvocation, or `meshgate inject` output applied): marked like a pod patched now.
      if (d.reason === 'already_injected') return marked(d.reason, [], [], input.value, scope, deps);
      return { kind: 'allow', reason: d.reason };
    case 'deny':
      return { kind: 'deny', reason: d.reason, message: d.message };
    case 'patch':
      return marked(d.reason, d.ops, d.warnings, input.value, scope, deps);
  }
}

function marked(
  reason: ReasonCode,
  ops: PatchOp[],
  warnings: string[],
  input: PodInput,
  scope: AdmissionScope,
  deps: MutateDeps,
): Verdict {
  const mark = markOps(input.pod, input.namespace, ops, scope, deps.marker);
  if (mark.length === 0) return ops.length ? { kind: 'patch', reason, ops, warnings } : { kind: 'allow', reason };
  if (ops.length + mark.length > MAX_PATCH_OPS)
    return {
      kind: 'deny',
      reason: 'too_large',
      message:
        `the patch for this pod would have ${ops.length + mark.length} operations with meshgate's admission mark; ` +
        `meshgate emits at most ${MAX_PATCH_OPS}`,
    };
  return { kind: 'patch', reason, ops: ops.concat(mark), warnings };
}
