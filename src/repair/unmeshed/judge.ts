/**
 * A pod of an opted-in namespace that runs without meshgate's redirect (its spec has no real proxy and redirect:
 * `redirectNeed` says `unmeshed`) never went through meshgate's webhook as it is: it was created before the
 * namespace was opted in, or while the webhooks were down (failurePolicy Ignore). Nothing replaces it by itself.
 * What the repair controller does about one (pure: pod record → action):
 * - evict it, when a controller recreates it and meshgate would admit the new pod (it is judged unmeshed only
 *   because a proxy or redirect is missing, which the webhook adds);
 * - report it (an Event, nothing else) when it is a bare pod (nothing would recreate it) or when meshgate would
 *   refuse it as it is (an opt-out, hostNetwork, an impostor container…): evicting it would only take it down.
 * Kubelet mirror pods (static pods, owned by their Node) are never touched.
 */
import type { Compiled } from '../../config/compile.ts';
import { NodeFactStore } from '../../facts/node-facts.ts';
import { MIRROR_ANNOTATION } from '../../contract/names.ts';
import type { ReasonCode } from '../../contract/reasons.ts';
import { parsePod } from '../../pod/parse.ts';
import { isUnmeshedNeed, redirectNeed } from '../../policy/validate/binding.ts';
import { checkPosture } from '../../policy/posture.ts';
import { screen } from '../../policy/screen.ts';
import type { PodRecord } from '../../check/facts.ts';

export type UnmeshedAction =
  | { action: 'none' }
  /** `message` says it is being evicted; `reportOnly` what to do when eviction is off. */
  | { action: 'evict'; reason: ReasonCode; message: string; reportOnly: string }
  | { action: 'report'; why: 'bare_pod' | 'would_be_refused'; reason: ReasonCode; message: string };

/** Why an unmeshed pod is reported rather than evicted (meshgate_repair_unmeshed_reported_total{why}). */
export type ReportWhy = Extract<UnmeshedAction, { action: 'report' }>['why'] | 'not_evicting';

/** Node facts play no part in why a pod is unmeshed (proxy or redirect missing come first). */
const NO_NODES = new NodeFactStore();

/** Kinds `kubectl rollout restart` knows. */
const RESTARTABLE = new Set(['Deployment', 'StatefulSet', 'DaemonSet']);

export function judgeUnmeshed(p: PodRecord, cfg: Compiled): UnmeshedAction {
  if (p.deleting || (p.phase !== 'Running' && p.phase !== 'Pending')) return { action: 'none' };
  if (p.owner?.kind === 'Node' || p.annotations?.[MIRROR_ANNOTATION] !== undefined) return { action: 'none' };
  const parsed = parsePod(p.object, `pod ${p.namespace}/${p.name}`);
  if (!parsed.ok) return { action: 'none' };
  if (!isUnmeshedNeed(redirectNeed(parsed.pod, p.namespace, cfg))) return { action: 'none' };
  const where =
    `pod ${p.namespace}/${p.name} runs without meshgate's redirect in namespace ${p.namespace}, ` +
    "which meshgate's webhooks select";
  const s = screen({ pod: parsed.pod, namespace: p.namespace }, cfg);
  if (s.kind === 'deny') {
    return {
      action: 'report',
      why: 'would_be_refused',
      reason: s.reason,
      message:
        `${where} (${s.reason}: ${s.message}); recreated as it is, meshgate would refuse it, so it is not evicted: ` +
        "fix its spec (or its workload's pod template), then restart it",
    };
  }
  const posture = checkPosture({ pod: parsed.pod, namespace: p.namespace }, NO_NODES, cfg);
  const reason: ReasonCode = posture.ok ? 'redirect_missing' : posture.reason;
  const why = posture.ok ? 'no redirect' : posture.message;
  const origin = "it was created before the namespace was opted in, or while meshgate's webhooks could not review it";
  if (!p.owner) {
    return {
      action: 'report',
      why: 'bare_pod',
      reason,
      message:
        `${where} (${reason}: ${why}): ${origin}. It has no controller to recreate it, so it is left running: ` +
        `delete it and create it again (kubectl -n ${p.namespace} delete pod ${p.name}, then apply its manifest)`,
    };
  }
  const restart = RESTARTABLE.has(p.owner.kind)
    ? `kubectl -n ${p.namespace} rollout restart ${p.owner.kind.toLowerCase()}/${p.owner.name}`
    : `kubectl -n ${p.namespace} delete pod ${p.name}`;
  const summary = `${where} (${reason}: ${why}): ${origin}`;
  return {
    action: 'evict',
    reason,
    message:
      `${summary}. Evicting it (PodDisruptionBudgets respected) so its ${p.owner.kind} ${p.owner.name} ` +
      `recreates it through the webhook; to restart it yourself: ${restart}`,
    reportOnly: `${summary}. Restart it so the webhook meshes it: ${restart}`,
  };
}
