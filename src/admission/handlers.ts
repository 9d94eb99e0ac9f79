/**
 * Wires the handlers' dependencies (caches, lookup counters, the mark's keys) for the server: one handler per
 * admission route, a route per kind (mutate, validate), scope and enforcement level, each named by its path. The
 * chart's webhook entries name these paths (charts/meshgate/templates/_webhooks.tpl):
 * - scope: `/mutate`, `/validate` for entries that select whole namespaces; `/…/selected-pods` for entries that
 *   select pods by their labels or match conditions (no admission mark there: src/mark/admission.ts);
 * - level: no suffix for enforce, `/warn` and `/audit` for namespaces at those levels (src/admission/level.ts).
 */
import type { Compiled } from '../config/compile.ts';
import type { NodeFacts } from '../facts/node-facts.ts';
import type { PodNeeds } from '../kube/pod-mode-cache.ts';
import type { NamespaceLabels } from '../kube/namespace-labels.ts';
import type { AdmissionScope, Marker } from '../mark/admission.ts';
import { atLevel, LEVELS, type Level } from './level.ts';
import { mutate } from './mutate.ts';
import type { AdmissionRequest, Verdict } from './review.ts';
import { validate, type ValidateDeps } from './validate.ts';
import { accessRecord, type AccessRecord } from './access.ts';
import { isPodConnect } from './pod-request.ts';

export type AdmissionHandler = (r: AdmissionRequest) => Verdict | Promise<Verdict>;

export interface Route {
  readonly kind: 'mutate' | 'validate';
  readonly scope: AdmissionScope;
  readonly level: Level;
}

/** The path of a route: /mutate, /validate/selected-pods, /mutate/audit, /validate/selected-pods/warn, … */
export function routePath(r: Route): string {
  return `/${r.kind}${r.scope === 'selected-pods' ? '/selected-pods' : ''}${r.level === 'enforce' ? '' : `/${r.level}`}`;
}

/** Every admission route. */
export const ROUTES: readonly Route[] = (['mutate', 'validate'] as const).flatMap((kind) =>
  (['namespace', 'selected-pods'] as const).flatMap((scope) => LEVELS.map((level) => ({ kind, scope, level }))),
);

export interface HandlerDeps {
  config: Compiled;
  nodes: NodeFacts;
  podNeeds?: PodNeeds;
  namespaces?: NamespaceLabels;
  onLookup?: ValidateDeps['onLookup'];
  marker?: Marker;
  /** Each exec or attach that reached a mesh container, with its outcome (an Event on the pod: src/kube/access-events.ts). */
  onAccess?: (a: AccessRecord) => void;
}

/** The handler of one route. */
export function handlerFor(route: Route, deps: HandlerDeps): AdmissionHandler {
  const { kind, scope, level } = route;
  if (kind === 'mutate') return (r) => atLevel(level, mutate(r, deps, scope), r, true);
  return async (r) => {
    const v = atLevel(level, await validate(r, deps, scope), r, false);
    // The chart declares these entries NoneOnDryRun: a dry run (which a CONNECT never is) posts nothing.
    if (deps.onAccess && isPodConnect(r) && !r.dryRun) {
      const record = accessRecord(r, v, level);
      if (record) deps.onAccess(record);
    }
    return v;
  };
}

/** Every admission route's path and handler. */
export function admissionRoutes(deps: HandlerDeps): Record<string, AdmissionHandler> {
  return Object.fromEntries(ROUTES.map((route) => [routePath(route), handlerFor(route, deps)]));
}
