/**
 * Per-pod choice of how traffic is redirected — the part no existing mesh decides per pod:
 *   node known & verified      → CNI mode (no privileged container; the validator proves the redirect)
 *   node known & not verified  → onUnverifiedNode: reject | validate (init mode plus the validator); with reject,
 *                                a bound pod (spec.nodeName) is denied, and a pod pinned by affinity (a DaemonSet's)
 *                                gets CNI mode plus the affinity to verified nodes: the scheduler holds it Pending
 *                                until its node is verified. Denying it instead would stop the DaemonSet controller's
 *                                slow-start batch, so the pods for verified nodes after it would wait out the
 *                                controller's backoff too (real-node S7).
 *   node unknown, mode auto    → CNI mode pinned to verified nodes by affinity if any node is verified, else init
 *   node unknown, mode required→ CNI mode pinned by affinity (Pending, visibly, until a node is verified)
 *   mode off                   → always init mode
 * A node named by the pod but absent from the cache is treated as not verified: missing facts never verify.
 * At enforcement level audit (`hold: false`) meshgate holds no pod (issue 34 §2): only a pod whose node is known and
 * verified gets CNI mode; every other pod keeps the mesh's own redirect (init mode without meshgate's validator,
 * `audit_unpinned`) instead of a pin to verified nodes, a hold Pending or a refusal for its node.
 */
import type { Compiled } from '../config/compile.ts';
import type { NodeFacts } from '../facts/node-facts.ts';
import { supportsNativeSidecars } from '../facts/node-facts.ts';
import { NODE_CODES } from '../contract/codes/index.ts';
import type { ReasonCode } from '../contract/reasons.ts';
import type { Pod } from '../contract/pod.ts';
import { targetNode } from './target-node.ts';

export type RedirectDecision =
  | {
      readonly kind: 'cni';
      readonly reason: ReasonCode;
      readonly node?: string;
      readonly affinity: boolean;
      readonly native: boolean;
    }
  | {
      readonly kind: 'init';
      readonly reason: ReasonCode;
      readonly node?: string;
      readonly validate: boolean;
      readonly native: boolean;
    }
  | {
      readonly kind: 'deny';
      readonly reason: 'node_unverified';
      readonly node: string;
      readonly nodeReason: string;
      readonly message: string;
    };

export type Allowed = Exclude<RedirectDecision, { kind: 'deny' }>;

/**
 * What meshgate may do to a pod beyond judging it. `hold` false (enforcement level audit): nothing that could keep a
 * pod from running that would run without meshgate — no required affinity to verified nodes, no hold Pending, no
 * added validator on a node not known to be verified. Default true.
 */
export interface RedirectOptions {
  readonly hold?: boolean;
}

function native(cfg: Compiled, auto: () => boolean | undefined): boolean {
  const mode = cfg.config.injection.nativeSidecar ?? 'auto';
  if (mode !== 'auto') return mode === 'on';
  // Unknown kubelets get the regular sidecar: it works everywhere, a native one only from 1.29.
  return auto() ?? false;
}

/** Why a named node cannot be trusted, as one sentence. */
export function unverifiedWhy(node: string, facts: NodeFacts): { code: string; text: string } {
  const fact = facts.get(node);
  return fact
    ? { code: fact.reason, text: fact.message }
    : { code: 'node_not_found', text: NODE_CODES.node_not_found.meaning };
}

export function decideRedirect(pod: Pod, facts: NodeFacts, cfg: Compiled, o: RedirectOptions = {}): RedirectDecision {
  const target = targetNode(pod);
  const node = target?.name;
  const fact = node === undefined ? undefined : facts.get(node);
  const nodeNative = () => (node === undefined ? undefined : supportsNativeSidecars(fact?.kubeletVersion));
  const { mode, onUnverifiedNode } = cfg.config.redirect;

  if (mode === 'off') {
    return {
      kind: 'init',
      reason: 'mode_off',
      node,
      validate: false,
      native: native(cfg, node ? nodeNative : () => facts.nativeSidecars('all')),
    };
  }
  if (node !== undefined && fact?.verified)
    return { kind: 'cni', reason: 'node_verified', node, affinity: false, native: native(cfg, nodeNative) };
  if (o.hold === false) {
    return {
      kind: 'init',
      reason: 'audit_unpinned',
      node,
      validate: false,
      native: native(cfg, node ? nodeNative : () => facts.nativeSidecars('all')),
    };
  }
  if (node !== undefined) {
    if (onUnverifiedNode === 'reject') {
      if (target?.by === 'affinity')
        return { kind: 'cni', reason: 'node_unverified_wait', node, affinity: true, native: native(cfg, nodeNative) };
      const why = unverifiedWhy(node, facts);
      return {
        kind: 'deny',
        reason: 'node_unverified',
        node,
        nodeReason: why.code,
        message:
          `node ${node} has no verified CNI chain (${why.code}: ${why.text}); ` +
          'the pod would start without verified redirection',
      };
    }
    return { kind: 'init', reason: 'node_unverified_validate', node, validate: true, native: native(cfg, nodeNative) };
  }
  if (mode === 'required')
    return {
      kind: 'cni',
      reason: 'mode_required',
      affinity: true,
      native: native(cfg, () => facts.nativeSidecars('verified')),
    };
  if (facts.anyVerified())
    return {
      kind: 'cni',
      reason: 'affinity_verified',
      affinity: true,
      native: native(cfg, () => facts.nativeSidecars('verified')),
    };
  return {
    kind: 'init',
    reason: 'no_verified_node',
    validate: false,
    native: native(cfg, () => facts.nativeSidecars('all')),
  };
}
