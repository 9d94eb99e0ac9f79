/**
 * Wires the handlers' dependencies (caches, lookup counters, the mark's keys) for the server, one pair per
 * admission scope: /mutate and /validate for webhook entries that select whole namespaces, /mutate/selected-pods
 * and /validate/selected-pods for entries that select pods by their labels or match conditions (no admission
 * mark there: src/mark/admission.ts).
 */
import type { Compiled } from '../config/compile.ts';
import type { NodeFacts } from '../facts/node-facts.ts';
import type { PodNeeds } from '../kube/pod-mode-cache.ts';
import type { Marker } from '../mark/admission.ts';
import type { AdmissionRequest, Verdict } from './review.ts';
import { mutate } from './mutate.ts';
import { validate, type ValidateDeps } from './validate.ts';

export interface HandlerSet {
  mutate: (r: AdmissionRequest) => Verdict;
  validate: (r: AdmissionRequest) => Promise<Verdict>;
  mutateSelectedPods: (r: AdmissionRequest) => Verdict;
  validateSelectedPods: (r: AdmissionRequest) => Promise<Verdict>;
}

/** The routes a chart's webhook entry names, by scope (charts/meshgate/templates/_webhooks.tpl). */
export const ADMISSION_ROUTES = {
  mutate: '/mutate',
  validate: '/validate',
  mutateSelectedPods: '/mutate/selected-pods',
  validateSelectedPods: '/validate/selected-pods',
} as const;

export function buildHandlers(deps: {
  config: Compiled;
  nodes: NodeFacts;
  podNeeds?: PodNeeds;
  onLookup?: ValidateDeps['onLookup'];
  marker?: Marker;
}): HandlerSet {
  return {
    mutate: (r) => mutate(r, deps, 'namespace'),
    validate: (r) => validate(r, deps, 'namespace'),
    mutateSelectedPods: (r) => mutate(r, deps, 'selected-pods'),
    validateSelectedPods: (r) => validate(r, deps, 'selected-pods'),
  };
}

/** Every admission route and its handler. */
export function admissionRoutes(h: HandlerSet): Record<string, HandlerSet[keyof HandlerSet]> {
  return Object.fromEntries(
    (Object.keys(ADMISSION_ROUTES) as Array<keyof HandlerSet>).map((k) => [ADMISSION_ROUTES[k], h[k]]),
  );
}
