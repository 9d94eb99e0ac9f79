/**
 * A workload's pod template judged at apply time (issue 34 §3): what its pods will meet when its controller creates
 * them, so `kubectl apply -f deployment.yaml` shows the refusal and its fix instead of a rollout that hangs on
 * `FailedCreate`. The pods stay the enforcement point; this only tells earlier. Pure.
 *
 * The template is judged as a pod of its namespace through both webhooks (admitted.ts), with the node verdicts as
 * they are now. Some refusals can only be judged on the pod itself, so a template is never refused for them:
 * - what the mesh's injector adds: with Istio or Linkerd the injector runs on pods, never on templates, so a
 *   template without the proxy is not "missing" it (the injector adds it to each pod; meshgate then adjusts and
 *   judges the pod as injected);
 * - the node: which node a pod gets, and whether it is verified then, is known only when the pod is created or bound;
 * - the admission mark, which meshgate writes on each pod;
 * - Istio ambient's namespace labels while meshgate's namespace cache has not synced.
 * Everything else — opt-outs, hostNetwork, impostor or reconfigured mesh containers, app containers that could
 * become the proxy or rewrite the redirect, exemptions, bounds — is refused on the pod whatever the injector adds,
 * so it is refused on the template too.
 */
import type { Compiled } from '../../config/compile.ts';
import type { ReasonCode } from '../../contract/reasons.ts';
import type { NodeFacts } from '../../facts/node-facts.ts';
import { asAdmitted } from './admitted.ts';
import type { Decision } from './decide.ts';

/** Refusals that depend on what only a pod has (see above): never a template's. */
export const POD_ONLY: ReadonlySet<ReasonCode> = new Set<ReasonCode>([
  // the mesh's injection
  'proxy_missing',
  'redirect_missing',
  // the node
  'node_unverified',
  'no_fallback',
  'ambient_no_fallback',
  'binding_node_unverified',
  'binding_unmeshed',
  // meshgate's own writing on the pod
  'admission_mark_invalid',
  // the namespace cache
  'ambient_namespace_unknown',
]);

export type TemplateJudgement =
  /** Its pods would be refused, whatever the injector adds and wherever they run. */
  | { kind: 'refused'; reason: ReasonCode; message: string }
  /**
   * Nothing refuses it here; `podOnly`: a refusal the pods may still meet, which only they can show (see above).
   * `warnings`: what the decision admits with a warning (a namespace that cannot comply with a rule yet).
   */
  | { kind: 'admitted'; reason: ReasonCode; podOnly?: ReasonCode; warnings: string[] };

/**
 * `template`: the workload's pod template (metadata and spec), as plain JSON; `where` names it in messages. Its pods
 * are created in `namespace`. The template is not changed.
 */
export function judgeTemplate(
  template: { metadata?: unknown; spec?: unknown },
  namespace: string,
  where: string,
  facts: NodeFacts,
  cfg: Compiled,
  namespaceLabels?: Readonly<Record<string, string>>,
): TemplateJudgement {
  // The pod its controller would create: the template's metadata and spec (its own nodeName included, if it has one).
  const raw = { metadata: template.metadata ?? {}, spec: template.spec };
  const a = asAdmitted(raw, namespace, where, facts, cfg, namespaceLabels ? { namespaceLabels } : {});
  if (a.kind === 'refused' && !POD_ONLY.has(a.reason)) return { kind: 'refused', reason: a.reason, message: a.message };
  const d: Decision | undefined = a.decision;
  if (a.kind === 'admitted') return { kind: 'admitted', reason: a.decision.reason, warnings: warningsOf(a.decision) };
  const reason = d && d.kind !== 'deny' ? d.reason : a.reason;
  return { kind: 'admitted', reason, podOnly: a.reason, warnings: warningsOf(d) };
}

const warningsOf = (d: Decision | undefined): string[] => (d?.kind === 'patch' ? d.warnings : []);
