/**
 * The pods/binding guard. The scheduler binds a pod by creating a Binding (object.target.name is the node);
 * a CNI-mode pod must never be bound to a node whose CNI chain is not verified, even if a later webhook
 * removed the affinity meshgate added. The Binding does not carry the pod, so the pod's mode comes from a
 * cache (or one GET on a miss), passed in here as `mode`.
 */
import type { NodeFacts } from '../facts/node-facts.ts';
import type { ReasonCode } from '../inject/reasons.ts';

export type BindingResult = { ok: true; reason: ReasonCode | 'not_cni_mode' } | { ok: false; reason: ReasonCode; message: string };

export function checkBinding(pod: string, node: string, mode: string | undefined, nodes: NodeFacts): BindingResult {
  if (mode !== 'cni') return { ok: true, reason: 'not_cni_mode' };
  const fact = nodes.get(node);
  if (fact?.verified) return { ok: true, reason: 'ok' };
  const why = fact ? `${fact.reason}: ${fact.message}` : 'node_not_found: the node is not known to meshgate';
  return {
    ok: false,
    reason: 'binding_node_unverified',
    message: `pod ${pod} runs in CNI mode and cannot be bound to node ${node}, whose CNI chain is not verified (${why}); the scheduler will retry on another node`,
  };
}
