/** Wires the handlers' dependencies (caches, lookup counters) for the server. */
import type { Logger } from 'pino';
import type { MeshgateConfig } from '../config/types.ts';
import type { NodeFacts } from '../facts/node-facts.ts';
import type { PodModes } from '../kube/pod-mode-cache.ts';
import type { AdmissionRequest, Verdict } from './review.ts';
import { mutate } from './mutate.ts';
import { validate, type ValidateDeps } from './validate.ts';

export interface HandlerSet {
  mutate: (r: AdmissionRequest) => Verdict;
  validate: (r: AdmissionRequest) => Promise<Verdict>;
}

export function buildHandlers(deps: {
  config: MeshgateConfig;
  nodes: NodeFacts;
  podModes?: PodModes;
  logger?: Logger;
  onLookup?: ValidateDeps['onLookup'];
}): HandlerSet {
  return {
    mutate: (r) => mutate(r, deps),
    validate: (r) => validate(r, deps),
  };
}
