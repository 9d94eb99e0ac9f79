/**
 * Wires the handlers' dependencies (caches, lookup counters, the mark's keys) for the server: one handler per
 * admission route, a route per kind (mutate, validate), scope and enforcement level, each named by its path. The
 * chart's webhook entries name these paths (charts/meshgate/templates/_webhooks.tpl):
 * - scope: `/mutate`, `/validate` for entries that select whole namespaces; `/…/selected-pods` for entries that
 *   select pods by their labels or match conditions (no admission mark there: src/mark/admission.ts);
 * - level: no suffix for enforce, `/warn` and `/audit` for namespaces at those levels (src/admission/level.ts).
 * And `/validate/workloads[/warn|/audit]`: workload pod templates judged at apply time (src/admission/workload.ts).
 */
import type { Compiled } from '../config/compile.ts';
import type { NodeFacts } from '../facts/node-facts.ts';
import type { PodNeeds } from '../kube/pod-mode-cache.ts';
import type { NamespaceLabels } from '../kube/namespace-labels.ts';
import type { AdmissionScope, Marker } from '../mark/admission.ts';
import { atLevel, LEVELS, type Level, scrubOps, validatedAtLevel } from './level.ts';
import { isPodCreate } from './pod-request.ts';
import { mutate } from './mutate.ts';
import type { AdmissionRequest, Verdict } from './review.ts';
import { validate, type ValidateDeps } from './validate.ts';
import { judgeWorkload } from './workload.ts';

export type AdmissionHandler = (r: AdmissionRequest) => Verdict | Promise<Verdict>;

export type Route =
  | { readonly kind: 'mutate' | 'validate'; readonly scope: AdmissionScope; readonly level: Level }
  /** Workload pod templates: no scope (no admission mark on a template). */
  | { readonly kind: 'workloads'; readonly level: Level };

/** The path of a route: /mutate, /validate/selected-pods, /mutate/audit, /validate/workloads/warn, … */
export function routePath(r: Route): string {
  const level = r.level === 'enforce' ? '' : `/${r.level}`;
  if (r.kind === 'workloads') return `/validate/workloads${level}`;
  return `/${r.kind}${r.scope === 'selected-pods' ? '/selected-pods' : ''}${level}`;
}

/** Every admission route. */
export const ROUTES: readonly Route[] = [
  ...(['mutate', 'validate'] as const).flatMap((kind) =>
    (['namespace', 'selected-pods'] as const).flatMap((scope) => LEVELS.map((level) => ({ kind, scope, level }))),
  ),
  ...LEVELS.map((level) => ({ kind: 'workloads' as const, level })),
];

export interface HandlerDeps {
  config: Compiled;
  nodes: NodeFacts;
  podNeeds?: PodNeeds;
  namespaces?: NamespaceLabels;
  onLookup?: ValidateDeps['onLookup'];
  marker?: Marker;
}

/** The handler of one route. */
export function handlerFor(route: Route, deps: HandlerDeps): AdmissionHandler {
  if (route.kind === 'workloads') return (r) => judgeWorkload(r, deps, route.level);
  const { kind, scope, level } = route;
  // At audit meshgate holds no pod: it must never keep a pod from running that would run without it (issue 34 §2).
  const hold = level !== 'audit';
  if (kind === 'mutate') return (r) => scrubbed(atLevel(level, mutate(r, deps, scope, { hold }), r, true), r);
  return async (r) => validatedAtLevel(level, await validate(r, deps, scope), r);
}

/** A pod CREATE admitted without a refusal recorded now loses a would-deny record it brought (level.ts scrubOps). */
function scrubbed(v: Verdict, r: AdmissionRequest): Verdict {
  if (v.kind === 'deny' || v.kind === 'error' || v.audited || !isPodCreate(r)) return v;
  const ops = scrubOps(r.object);
  if (ops.length === 0) return v;
  return { ...v, kind: 'patch', ops: v.kind === 'patch' ? [...v.ops, ...ops] : ops };
}

/** Every admission route's path and handler. */
export function admissionRoutes(deps: HandlerDeps): Record<string, AdmissionHandler> {
  return Object.fromEntries(ROUTES.map((route) => [routePath(route), handlerFor(route, deps)]));
}
