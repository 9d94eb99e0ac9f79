/** Mutating handler: adapts an admission request to the decision core and its Decision to a Verdict. */
import type { MeshgateConfig } from '../config/types.ts';
import type { NodeFacts } from '../facts/node-facts.ts';
import { decide, type DecideInput } from '../inject/decide.ts';
import { podShapeProblem, type Pod } from '../inject/pod.ts';
import type { AdmissionRequest, Verdict } from './review.ts';
import type { NamespaceLabels } from './namespaces.ts';

export interface HandlerDeps {
  config: MeshgateConfig;
  nodes: NodeFacts;
  /** Namespace labels when a cache knows them; otherwise the webhook configuration's selector is trusted. */
  namespaces?: NamespaceLabels;
}

export function isPodCreate(r: AdmissionRequest): boolean {
  return r.operation === 'CREATE' && r.resource.resource === 'pods' && r.resource.group === '' && !r.subResource;
}

/** A pods CREATE request as the pure core's input, or the verdict when it is not a valid pod. */
export function podInput(r: AdmissionRequest, namespaces?: NamespaceLabels): DecideInput | Verdict {
  const problem = podShapeProblem(r.object);
  if (problem) return { kind: 'deny', reason: 'invalid_object', message: `request.object is not a valid pod: ${problem}` };
  const pod = r.object as Pod;
  const name = r.namespace ?? pod.metadata?.namespace ?? 'default';
  return { pod, namespace: { name, labels: namespaces?.labels(name) } };
}

export function mutate(r: AdmissionRequest, deps: HandlerDeps): Verdict {
  if (!isPodCreate(r)) return { kind: 'allow', reason: 'not_a_pod_create' };
  const input = podInput(r, deps.namespaces);
  if ('kind' in input) return input;
  const d = decide(input, deps.nodes, deps.config);
  switch (d.kind) {
    case 'skip':
      return { kind: 'allow', reason: d.reason };
    case 'deny':
      return { kind: 'deny', reason: d.reason, message: d.message };
    case 'patch':
      return { kind: 'patch', reason: d.reason, ops: d.ops, warnings: d.warnings };
  }
}
