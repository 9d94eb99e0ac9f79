/** Mutating handler: adapts an admission request to the decision core and its Decision to a Verdict. */
import type { Compiled } from '../config/compile.ts';
import type { NodeFacts } from '../facts/node-facts.ts';
import { decide } from '../inject/decide.ts';
import { isPodCreate, podInput } from './pod-request.ts';
import type { AdmissionRequest, Verdict } from './review.ts';

export interface HandlerDeps {
  config: Compiled;
  nodes: NodeFacts;
}

export function mutate(r: AdmissionRequest, deps: HandlerDeps): Verdict {
  if (!isPodCreate(r)) return { kind: 'allow', reason: 'not_a_pod_create' };
  const input = podInput(r);
  if (!input.ok) return input.verdict;
  const d = decide(input.value, deps.nodes, deps.config);
  switch (d.kind) {
    case 'skip':
      return { kind: 'allow', reason: d.reason };
    case 'deny':
      return { kind: 'deny', reason: d.reason, message: d.message };
    case 'patch':
      return { kind: 'patch', reason: d.reason, ops: d.ops, warnings: d.warnings };
  }
}
