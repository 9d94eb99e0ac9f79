/**
 * Per-pod choice of how traffic is redirected — the part no existing mesh decides per pod:
 *   node known & verified      → CNI mode (no privileged container; the validator proves the redirect)
 *   node known & not verified  → onUnverifiedNode: reject (deny) | validate (init mode plus the validator)
 *   node unknown, mode auto    → CNI mode pinned to verified nodes by affinity if any node is verified, else init
 *   node unknown, mode required→ CNI mode pinned by affinity (Pending, visibly, until a node is verified)
 *   mode off                   → always init mode
 * A node named by the pod but absent from the cache is treated as not verified: missing facts never verify.
 */
import type { MeshgateConfig } from '../config/types.ts';
import type { NodeFacts } from '../facts/node-facts.ts';
import { supportsNativeSidecars } from '../facts/node-facts.ts';
import type { ReasonCode } from './reasons.ts';
import type { Pod } from './pod.ts';
import { targetNode } from './target-node.ts';

export type RedirectDecision =
  | { kind: 'cni'; reason: ReasonCode; node?: string; affinity: boolean; native: boolean }
  | { kind: 'init'; reason: ReasonCode; node?: string; validate: boolean; native: boolean }
  | { kind: 'deny'; reason: 'node_unverified'; node: string; nodeReason: string; message: string };

function native(cfg: MeshgateConfig, auto: () => boolean | undefined): boolean {
  if (cfg.injection.nativeSidecar !== 'auto') return cfg.injection.nativeSidecar === 'on';
  // Unknown kubelets get the regular sidecar: it works everywhere, a native one only from 1.29.
  return auto() ?? false;
}

export function decideRedirect(pod: Pod, facts: NodeFacts, cfg: MeshgateConfig): RedirectDecision {
  const node = targetNode(pod);
  const fact = node === undefined ? undefined : facts.get(node);
  const nodeNative = () => (node === undefined ? undefined : supportsNativeSidecars(fact?.kubeletVersion));

  if (cfg.redirect.mode === 'off') {
    return { kind: 'init', reason: 'mode_off', node, validate: false, native: native(cfg, node ? nodeNative : () => facts.nativeSidecars('all')) };
  }
  if (node !== undefined) {
    if (fact?.verified) return { kind: 'cni', reason: 'node_verified', node, affinity: false, native: native(cfg, nodeNative) };
    const nodeReason = fact?.reason ?? 'node_not_found';
    const why = fact ? fact.message : 'the node is not known to meshgate (no Node object in its cache)';
    if (cfg.redirect.onUnverifiedNode === 'reject') {
      return {
        kind: 'deny',
        reason: 'node_unverified',
        node,
        nodeReason,
        message: `node ${node} has no verified CNI chain (${nodeReason}: ${why}); the pod would start without verified redirection`,
      };
    }
    return { kind: 'init', reason: 'node_unverified_validate', node, validate: true, native: native(cfg, nodeNative) };
  }
  if (cfg.redirect.mode === 'required') {
    return { kind: 'cni', reason: 'mode_required', affinity: true, native: native(cfg, () => facts.nativeSidecars('verified')) };
  }
  if (facts.anyVerified()) {
    return { kind: 'cni', reason: 'affinity_verified', affinity: true, native: native(cfg, () => facts.nativeSidecars('verified')) };
  }
  return { kind: 'init', reason: 'no_verified_node', validate: false, native: native(cfg, () => facts.nativeSidecars('all')) };
}
