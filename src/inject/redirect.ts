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

type Nodeless = 'mode_off' | 'mode_required' | 'affinity_verified' | 'no_verified_node';

/**
 * The decisions that name no node depend on nothing but their reason and the sidecar kind: one frozen value
 * each, shared by every review, so what is derived from a decision (its status) is looked up by identity.
 */
const NODELESS = Object.fromEntries(
  (['mode_off', 'mode_required', 'affinity_verified', 'no_verified_node'] as const).map((reason) => [
    reason,
    [false, true].map((n) => Object.freeze(reason === 'mode_required' || reason === 'affinity_verified'
      ? { kind: 'cni' as const, reason, affinity: true, native: n }
      : { kind: 'init' as const, reason, node: undefined, validate: false, native: n })),
  ]),
) as Record<Nodeless, RedirectDecision[]>;

function nodeless(reason: Nodeless, isNative: boolean): RedirectDecision {
  return NODELESS[reason][isNative ? 1 : 0];
}

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
    const isNative = native(cfg, node ? nodeNative : () => facts.nativeSidecars('all'));
    return node ? { kind: 'init', reason: 'mode_off', node, validate: false, native: isNative } : nodeless('mode_off', isNative);
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
    return nodeless('mode_required', native(cfg, () => facts.nativeSidecars('verified')));
  }
  if (facts.anyVerified()) {
    return nodeless('affinity_verified', native(cfg, () => facts.nativeSidecars('verified')));
  }
  return nodeless('no_verified_node', native(cfg, () => facts.nativeSidecars('all')));
}
