/**
 * Every way a pod gets a node after CREATE goes through a Binding: the scheduler's pods/binding subresource and
 * the legacy `POST /api/v1/namespaces/NS/bindings`. A pod that relies on the CNI plugin must never be bound to a
 * node whose chain is not verified, and a pod with no real proxy and redirect must not be bound at all — even if
 * a later webhook removed meshgate's affinity, or its author removed meshgate's label. The Binding does not carry
 * the pod, so what the pod needs is judged from its spec (which its author cannot change but for images, and the
 * update guard holds the mesh's images), cached per pod or read with one GET.
 */
import type { Compiled } from '../../config/compile.ts';
import type { NodeFacts } from '../../facts/node-facts.ts';
import { REASONS, type ReasonCode } from '../../contract/reasons.ts';
import type { Pod } from '../../contract/pod.ts';
import { unverifiedWhy } from '../redirect.ts';
import { redirectOf } from '../posture.ts';
import { screen } from '../screen.ts';
import { isAmbientValidator } from '../ambient/validator.ts';

/**
 * What a pod needs from its node: `exempt` (meshgate does not guard it), `init` (its own privileged init container
 * redirects), `cni` (the node's chained plugin must), `unmeshed` (it has no real proxy and redirect), `refused:<code>`
 * (meshgate's rules refuse it for that reason, e.g. a pod admitted at enforcement level audit: the binding then
 * carries the pod's own reason, one per pod, not a second one).
 */
export type RedirectNeed = 'exempt' | 'init' | 'cni' | 'unmeshed' | Refused;
type Refused = `refused:${ReasonCode}`;

/** One string per code, made once: the pod cache holds a reference per pod, not a copy. */
const REFUSED = Object.fromEntries(Object.keys(REASONS).map((c) => [c, `refused:${c}`])) as Record<ReasonCode, Refused>;

/** Whether the pod cannot be bound anywhere: no real proxy and redirect, or refused by meshgate's rules. */
export const isUnmeshedNeed = (need: RedirectNeed): boolean => need === 'unmeshed' || need.startsWith('refused:');

export function redirectNeed(pod: Pod, namespace: string, cfg: Compiled): RedirectNeed {
  const s = screen({ pod, namespace }, cfg);
  if (s.kind === 'skip') return 'exempt';
  if (s.kind === 'deny') return REFUSED[s.reason];
  return redirectOf(s.mesh) ?? ambientNeed(s.mesh.validator, cfg);
}

/**
 * An Istio ambient pod has no proxy of its own: what it carries is meshgate's ambient validator, first (the
 * validating webhook admitted it so; identify checked the container is meshgate's template). It needs a verified
 * node like any pod that relies on the CNI plugin, and its validator proves ztunnel's capture at every sandbox start.
 * Without it (or with ambient off) the pod has no redirect to rely on at all.
 */
function ambientNeed(validator: { container: { args?: readonly string[] }; index: number } | undefined, cfg: Compiled) {
  const ambient = cfg.config.ambient.enabled && validator?.index === 0 && isAmbientValidator(validator.container);
  return ambient ? 'cni' : 'unmeshed';
}

export type BindingResult = { ok: true; reason: ReasonCode } | { ok: false; reason: ReasonCode; message: string };

export function checkBinding(pod: string, node: string, need: RedirectNeed, nodes: NodeFacts): BindingResult {
  if (need === 'exempt') return { ok: true, reason: 'pod_opted_out' };
  if (need === 'unmeshed') {
    return {
      ok: false,
      reason: 'binding_unmeshed',
      message:
        `pod ${pod} has no real mesh proxy and redirect ` +
        '(it was created while meshgate could not check it, or is refused by it) ' +
        `and cannot be bound to node ${node}; recreate it so it is injected`,
    };
  }
  if (need.startsWith('refused:')) {
    const reason = need.slice('refused:'.length) as ReasonCode;
    return {
      ok: false,
      reason,
      message:
        `pod ${pod} is refused by meshgate's rules (${reason}: ${REASONS[reason]}) and cannot be bound to node ` +
        `${node}; fix what the reason names in its spec or its workload's pod template, then recreate it`,
    };
  }
  if (need === 'init') return { ok: true, reason: 'init_mode' };
  if (nodes.get(node)?.verified) return { ok: true, reason: 'ok' };
  const why = unverifiedWhy(node, nodes);
  return {
    ok: false,
    reason: 'binding_node_unverified',
    message:
      `pod ${pod} relies on the CNI plugin and cannot be bound to node ${node}, ` +
      `whose CNI chain is not verified (${why.code}: ${why.text}); the scheduler will retry on another node`,
  };
}
