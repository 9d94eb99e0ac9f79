/**
 * Final posture of an opted-in pod, checked by the validating webhook after every mutating webhook ran: the
 * safety net for a mutating webhook that was skipped (failurePolicy Ignore), reordered, or undone by another
 * webhook. Pure: (pod, namespace, node facts, config) → problem or ok.
 */
import type { MeshgateConfig } from '../config/types.ts';
import type { NodeFacts } from '../facts/node-facts.ts';
import { REDIRECT_LABEL } from '../inject/constants.ts';
import { skipReason, type DecideInput } from '../inject/decide.ts';
import type { Pod } from '../inject/pod.ts';
import { findContainer } from '../inject/pod.ts';
import type { ReasonCode } from '../inject/reasons.ts';
import { readStatus } from '../inject/status.ts';
import { targetNode } from '../inject/target-node.ts';

export type PostureResult =
  | { ok: true; reason: ReasonCode; warnings: string[] }
  | { ok: false; reason: ReasonCode; message: string };

function has(pod: Pod, names: string[]): string | undefined {
  return names.find((n) => findContainer(pod, n));
}

/** The redirect mode a pod is in, judged from its spec: what really runs, not what annotations claim. */
export function specMode(pod: Pod, cfg: MeshgateConfig): 'init' | 'cni' | undefined {
  if (has(pod, [cfg.init.name, ...cfg.injection.recognisedInitContainers])) return 'init';
  if (has(pod, [cfg.validator.name, ...cfg.injection.recognisedValidatorContainers])) return 'cni';
  return undefined;
}

export function checkPosture(input: DecideInput, nodes: NodeFacts, cfg: MeshgateConfig): PostureResult {
  const skip = skipReason(input, cfg);
  if (skip) return { ok: true, reason: skip, warnings: [] };
  const { pod } = input;
  const proxies = [cfg.proxy.name, ...cfg.injection.recognisedProxyContainers];
  if (!has(pod, proxies)) {
    return { ok: false, reason: 'proxy_missing', message: `the pod is opted in but has no proxy container (${proxies.join(' or ')}); was the mutating webhook skipped?` };
  }
  const mode = specMode(pod, cfg);
  if (!mode) {
    return { ok: false, reason: 'redirect_missing', message: `the pod has a proxy but no redirect: neither a privileged init container (${[cfg.init.name, ...cfg.injection.recognisedInitContainers].join(', ')}) nor a validation container (${[cfg.validator.name, ...cfg.injection.recognisedValidatorContainers].join(', ')})` };
  }
  const status = readStatus(pod.metadata?.annotations);
  if (status && 'error' in status) return { ok: false, reason: 'status_mismatch', message: status.error };
  if (status) {
    const missing = [...status.initContainers, ...status.containers].filter((n) => !findContainer(pod, n));
    if (missing.length) return { ok: false, reason: 'status_mismatch', message: `meshgate.io/status lists ${missing.join(', ')}, which the pod does not contain` };
    if (status.mode !== mode) return { ok: false, reason: 'status_mismatch', message: `meshgate.io/status claims ${status.mode} mode but the pod's containers are those of ${mode} mode` };
  }
  const label = pod.metadata?.labels?.[REDIRECT_LABEL];
  if (label !== undefined && label !== mode) {
    return { ok: false, reason: 'status_mismatch', message: `label ${REDIRECT_LABEL}=${label} but the pod's containers are those of ${mode} mode` };
  }
  const node = targetNode(pod);
  if (mode === 'cni' && node !== undefined && !nodes.get(node)?.verified) {
    const fact = nodes.get(node);
    const why = `${fact?.reason ?? 'node_not_found'}: ${fact?.message ?? 'the node is not known to meshgate'}`;
    if (cfg.redirect.onUnverifiedNode === 'reject') {
      return { ok: false, reason: 'node_unverified', message: `the pod runs in CNI mode but its node ${node} has no verified CNI chain (${why})` };
    }
    return { ok: true, reason: 'ok', warnings: [`node ${node} has no verified CNI chain (${why}); the validation container will stop the pod if redirection is missing`] };
  }
  return { ok: true, reason: 'ok', warnings: [] };
}
