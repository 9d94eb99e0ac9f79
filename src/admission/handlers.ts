/** Wires the handlers' dependencies (caches, lookup counters) for the server. */
import type { Compiled } from '../config/compile.ts';
import type { NodeFacts } from '../facts/node-facts.ts';
import type { PodNeeds } from '../kube/pod-mode-cache.ts';
import type { AdmissionRequest, Verdict } from './review.ts';
import { mutate } from './mutate.ts';
import { validate, type ValidateDeps } from './validate.ts';

export interface HandlerSet {
  mutate: (r: AdmissionRequest) => Verdict;
  validate: (r: AdmissionRequest) => Promise<Verdict>;
}

export function buildHandlers(deps: {
  config: Compiled;
  nodes: NodeFacts;
  podNeeds?: PodNeeds;
  onLookup?: ValidateDeps['onLookup'];
}): HandlerSet {
  return {
    mutate: (r) => mutate(r, deps),
    validate: (r) => validate(r, deps),
  };
}
