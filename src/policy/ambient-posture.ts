/**
 * The validating webhook's final check of an Istio ambient pod (after every mutating webhook ran): the safety net for
 * a skipped or reordered mutating webhook and for a pod author who wrote meshgate's containers by hand. An ambient pod
 * must carry meshgate's ambient validator first, a truthful status, none of the opt-outs of src/policy/ambient/refusals.ts,
 * and run on a verified node (or be held to verified nodes by its affinity). Pure.
 */
import type { Compiled } from '../config/compile.ts';
import type { NodeFacts } from '../facts/node-facts.ts';
import { NODE_VERIFIED_LABEL, REDIRECT_LABEL } from '../contract/names.ts';
import { unverifiedWhy } from './redirect.ts';
import { readStatus } from './status.ts';
import { requiresNodeLabel, targetNode } from './target-node.ts';
import type { PodMesh } from './identify.ts';
import type { PostureResult } from './posture-result.ts';
import type { PodInput } from './screen.ts';
import { isAmbientValidator } from './ambient/validator.ts';
import { ambientRefusal } from './ambient/refusals.ts';

export function ambientPosture(
  input: PodInput,
  mesh: PodMesh,
  nodes: NodeFacts,
  cfg: Compiled,
  warnings: readonly string[],
): PostureResult {
  const { pod } = input;
  const refusal = ambientRefusal(pod, cfg, input.existing);
  if (refusal) return { ok: false, ...refusal };
  const v = mesh.validator;
  if (!v || !isAmbientValidator(v.container))
    return {
      ok: false,
      reason: 'ambient_validator_missing',
      message:
        `Istio runs this pod in ambient mode, but it has no ambient validator (${cfg.names.validator} running ` +
        "validate-redirect --ambient); was meshgate's mutating webhook skipped?",
    };
  if (v.index !== 0)
    return {
      ok: false,
      reason: 'validator_not_first',
      message:
        `the ambient validator ${v.container.name} runs after init container ${pod.spec.initContainers?.[0]?.name}: ` +
        'it must be the first container of the pod, so nothing runs before ztunnel capture is proven',
    };
  const status = readStatus(pod.metadata?.annotations);
  if (status && 'error' in status) return { ok: false, reason: 'status_mismatch', message: status.error };
  if (status && status.mode !== 'cni')
    return {
      ok: false,
      reason: 'status_mismatch',
      message: `meshgate.io/status claims ${status.mode} mode for an ambient pod`,
    };
  const label = pod.metadata?.labels?.[REDIRECT_LABEL];
  if (label !== undefined && label !== 'cni')
    return { ok: false, reason: 'status_mismatch', message: `label ${REDIRECT_LABEL}=${label} on an ambient pod` };
  const target = targetNode(pod);
  if (target !== undefined && !nodes.get(target.name)?.verified) {
    const why = unverifiedWhy(target.name, nodes);
    const text = `${why.code}: ${why.text}`;
    if (target.by === 'affinity' && requiresNodeLabel(pod, NODE_VERIFIED_LABEL, 'true'))
      return {
        ok: true,
        reason: 'ok',
        warnings: [
          ...warnings,
          `node ${target.name} is not verified for ambient (${text}); the pod stays Pending until it is`,
        ],
      };
    return {
      ok: false,
      reason: 'node_unverified',
      message: `the ambient pod's node ${target.name} is not verified (${text}); ambient pods have no fallback`,
    };
  }
  return { ok: true, reason: 'ok', warnings: [...warnings] };
}
