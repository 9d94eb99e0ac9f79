/**
 * The decision for a pod Istio runs in ambient mode (src/policy/ambient/enrolment.ts), the part of `decide` that has no
 * sidecar: no proxy to adjust and no privileged init container to fall back to, so the pod either gets meshgate's
 * ambient validator FIRST (src/policy/mutate/order.ts: nothing of the pod runs before the proof) on a verified node — or
 * pinned by a required affinity to verified nodes — or it is refused. The node choice is the sidecar's
 * (decideRedirect); what changes is the answer where sidecars fall back to init mode. Pure.
 */
import type { Compiled } from '../../config/compile.ts';
import type { NodeFacts } from '../../facts/node-facts.ts';
import { NODE_VERIFIED_LABEL } from '../../contract/names.ts';
import type { Decision } from './decision.ts';
import { toFront } from '../order.ts';
import * as patch from './patch.ts';
import type { ReasonCode } from '../../contract/reasons.ts';
import { decideRedirect, type Allowed, type RedirectOptions } from '../redirect.ts';
import { tokenMountOps } from './service-account.ts';
import { readStatus, recordStatus } from '../status.ts';
import type { Container } from '../../contract/pod.ts';
import type { PodMesh } from '../identify.ts';
import type { PodInput } from '../screen.ts';
import { ambientRefusal } from '../ambient/refusals.ts';
import { isAmbientValidator } from '../ambient/validator.ts';

export function decideAmbient(
  input: PodInput,
  mesh: PodMesh,
  facts: NodeFacts,
  cfg: Compiled,
  o: RedirectOptions = {},
): Decision {
  const { pod } = input;
  const refusal = ambientRefusal(pod, cfg);
  if (refusal) return { kind: 'deny', ...refusal };
  const found = mesh.validator;
  if (found) {
    if (!isAmbientValidator(found.container))
      return {
        kind: 'deny',
        reason: 'ambient_validator_missing',
        message:
          `init container ${found.container.name} is the sidecar validator, which cannot prove ambient capture; ` +
          "an ambient pod carries meshgate's ambient validator (validate-redirect --ambient)",
      };
    if (found.index === 0) return { kind: 'skip', reason: 'already_injected' };
    const status = readStatus(pod.metadata?.annotations);
    if (!status || 'error' in status)
      return { kind: 'deny', reason: 'status_mismatch', message: "the pod carries meshgate's validator but no status" };
    const { ops } = toFront(pod.spec.initContainers ?? [], found);
    const redirect: Allowed = {
      kind: 'cni',
      reason: status.reason,
      node: status.node,
      affinity: status.affinity,
      native: false,
    };
    return { kind: 'patch', reason: 'validator_moved_first', ops, status, redirect, warnings: [] };
  }
  const r = decideRedirect(pod, facts, cfg, o);
  if (r.kind === 'deny') return { kind: 'deny', reason: r.reason, message: r.message, redirect: r };
  // At audit: left to istio-cni and ztunnel as they are, neither pinned nor refused.
  if (r.reason === 'audit_unpinned') return { kind: 'skip', reason: r.reason };
  let allowed: Allowed;
  if (r.kind === 'cni') {
    const reason: ReasonCode =
      r.reason === 'node_unverified_wait'
        ? r.reason
        : r.affinity
          ? 'ambient_affinity_verified'
          : 'ambient_node_verified';
    allowed = { ...r, reason };
  } else if (r.reason === 'mode_off') {
    return { kind: 'skip', reason: 'mode_off' };
  } else if (r.node !== undefined) {
    return {
      kind: 'deny',
      reason: 'ambient_no_fallback',
      message:
        `node ${r.node} is not verified for ambient (redirect.onUnverifiedNode is validate, but an ambient pod has ` +
        'no privileged init container to fall back to): the pod could start without ztunnel capturing its traffic',
    };
  } else {
    // No verified node at all: Pending, visibly, until one is.
    allowed = { kind: 'cni', reason: 'ambient_affinity_verified', affinity: true, native: false };
  }
  return { kind: 'patch', ...built(input, allowed, cfg), redirect: allowed, warnings: [] };
}

function built(input: PodInput, r: Extract<Allowed, { kind: 'cni' }>, cfg: Compiled) {
  const { pod } = input;
  const validator = cfg.ambientValidator as Container;
  const ops = patch.prependInitContainers(pod, [validator]);
  ops.push(...patch.addImagePullSecrets(pod, cfg.config.validator.imagePullSecrets));
  if (r.affinity) ops.push(...patch.requireNodeLabel(pod, NODE_VERIFIED_LABEL, 'true'));
  const recorded = recordStatus(r, { init: [validator.name], containers: [], volumes: [] }, [], false);
  ops.push(...patch.setMetadataEntries(pod, { labels: recorded.labels, annotations: recorded.annotations }));
  const lists = { initContainers: [validator, ...(pod.spec.initContainers ?? [])], containers: pod.spec.containers };
  ops.push(...tokenMountOps(pod, lists, ops.length));
  return { reason: r.reason, ops, status: recorded.status };
}
