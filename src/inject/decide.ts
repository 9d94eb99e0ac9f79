/**
 * The decision core: `decide(input, facts, config)` is pure and shared by the webhook, the CLI and the tests.
 * It answers skip (with a reason), deny (with a reason and message) or patch (JSON Patch ops that apply to the
 * pod as given, plus the status recorded on the pod). Policy outcomes are values, never exceptions.
 */
import type { MeshgateConfig } from '../config/types.ts';
import type { NodeFacts } from '../facts/node-facts.ts';
import { INJECT_LABEL, INJECT_NAMESPACE_VALUE, MIRROR_ANNOTATION, STATUS_ANNOTATION } from './constants.ts';
import type { ReasonCode } from './reasons.ts';
import { containerNames, type Pod } from './pod.ts';
import type { PatchOp } from './patch.ts';
import type { InjectionStatus } from './status.ts';
import { parseOverrides } from './overrides.ts';
import { decideRedirect, type RedirectDecision } from './redirect.ts';
import { buildInjection, buildEnforcement } from './build.ts';

export interface DecideInput {
  pod: Pod;
  /** The request's namespace; labels undefined when the server cannot know them (it then trusts the selector). */
  namespace: { name: string; labels?: Record<string, string> };
}

export type Decision =
  | { kind: 'skip'; reason: ReasonCode }
  | { kind: 'deny'; reason: ReasonCode; message: string; redirect?: RedirectDecision }
  | { kind: 'patch'; reason: ReasonCode; ops: PatchOp[]; status: InjectionStatus; redirect: RedirectDecision; warnings: string[] };

function labelsMatch(want: Record<string, string>, have: Record<string, string>): boolean {
  return Object.entries(want).every(([k, v]) => have[k] === v);
}

/** Built-in skips and opt-in/opt-out, in the order an operator would expect to read them. */
export function skipReason(input: DecideInput, cfg: MeshgateConfig): ReasonCode | undefined {
  const { pod, namespace } = input;
  if (cfg.systemNamespaces.includes(namespace.name)) return 'system_namespace';
  if (namespace.name === cfg.meshNamespace) return 'mesh_namespace';
  const podLabel = pod.metadata?.labels?.[INJECT_LABEL];
  if (podLabel === 'false') return 'pod_opted_out';
  if (namespace.labels) {
    const nsEnabled = namespace.labels[INJECT_LABEL] === INJECT_NAMESPACE_VALUE;
    const selector = cfg.injection.podOptInNamespaceLabels;
    const podOptIn = podLabel === 'true' && selector !== null && labelsMatch(selector, namespace.labels);
    if (!nsEnabled && !podOptIn) return 'namespace_not_enabled';
  }
  if (pod.spec.hostNetwork) return 'host_network';
  if (pod.metadata?.annotations?.[MIRROR_ANNOTATION] !== undefined) return 'mirror_pod';
  return undefined;
}

export function decide(input: DecideInput, facts: NodeFacts, cfg: MeshgateConfig): Decision {
  const skip = skipReason(input, cfg);
  if (skip) return { kind: 'skip', reason: skip };
  const { pod } = input;
  const alreadyOurs = pod.metadata?.annotations?.[STATUS_ANNOTATION] !== undefined;

  if (!cfg.injection.enabled) {
    if (alreadyOurs) return { kind: 'skip', reason: 'already_injected' };
    const initIndex = pod.spec.initContainers?.findIndex((c) => cfg.injection.recognisedInitContainers.includes(c.name)) ?? -1;
    if (initIndex < 0) return { kind: 'skip', reason: 'no_recognised_init' };
    const redirect = decideRedirect(pod, facts, cfg);
    if (redirect.kind === 'deny') return { kind: 'deny', reason: redirect.reason, message: redirect.message, redirect };
    return { kind: 'patch', reason: redirect.reason, redirect, warnings: [], ...buildEnforcement(pod, cfg, redirect, initIndex) };
  }

  const names = containerNames(pod);
  if (cfg.injection.recognisedProxyContainers.some((name) => names.has(name))) return { kind: 'skip', reason: 'foreign_proxy' };
  if (alreadyOurs && names.has(cfg.proxy.name)) return { kind: 'skip', reason: 'already_injected' };

  const overrides = parseOverrides(pod.metadata?.annotations, cfg.proxy.resources);
  if (!overrides.ok) return { kind: 'deny', reason: 'invalid_annotation', message: overrides.problems.join('; ') };
  const redirect = decideRedirect(pod, facts, cfg);
  if (redirect.kind === 'deny') return { kind: 'deny', reason: redirect.reason, message: redirect.message, redirect };
  const built = buildInjection(pod, cfg, redirect, overrides.value, names);
  if (built.ops.length === 0) return { kind: 'skip', reason: 'already_injected' };
  return { kind: 'patch', reason: redirect.reason, redirect, warnings: [], ...built };
}
