/**
 * Final posture of an opted-in pod, checked by the validating webhook after every mutating webhook ran: the
 * safety net for a mutating webhook that was skipped (failurePolicy Ignore), reordered, or undone by another
 * webhook — and for a pod author who wrote the mesh's containers by hand. Pure:
 * (pod, namespace, requester, node facts, compiled config) → problem or ok.
 */
import type { Compiled } from '../config/compile.ts';
import type { NodeFacts } from '../facts/node-facts.ts';
import { NODE_VERIFIED_LABEL, REDIRECT_LABEL } from '../contract/names.ts';
import { readStatus } from './status.ts';
import { requiresNodeLabel, targetNode } from './target-node.ts';
import { unverifiedWhy } from './redirect.ts';
import { orderProblem } from './order.ts';
import { containerNames } from '../contract/pod.ts';
import type { PodMesh } from './identify.ts';
import { defaultNetworkOverride, networkMissing } from './multus.ts';
import { screen, type PodInput } from './screen.ts';
import { podCapabilityReading } from './escalation.ts';
import { ambientCase } from './ambient-case.ts';
import { ambientPosture } from './ambient-posture.ts';

export type { PostureResult } from './posture-result.ts';
import type { PostureResult } from './posture-result.ts';

/** The redirect a pod's containers give it: its own privileged init container, or the CNI plugin (a validator). */
export function redirectOf(mesh: PodMesh): 'init' | 'cni' | undefined {
  if (!mesh.proxy) return undefined;
  if (mesh.init) return 'init';
  if (mesh.validator) return 'cni';
  return undefined;
}

export function checkPosture(input: PodInput, nodes: NodeFacts, cfg: Compiled): PostureResult {
  const s = screen(input, cfg, podCapabilityReading(input.pod, nodes));
  if (s.kind === 'skip') return { ok: true, reason: s.reason, warnings: [] };
  if (s.kind === 'deny') return { ok: false, reason: s.reason, message: s.message };
  const { pod } = input;
  const { mesh } = s;
  const names = cfg.names;
  const ambient = ambientCase(input, mesh, cfg);
  if (ambient === 'ambient') return ambientPosture(input, mesh, nodes, cfg, s.warnings);
  if (ambient?.kind === 'deny') return { ok: false, reason: ambient.reason, message: ambient.message };
  if (!mesh.proxy) {
    return {
      ok: false,
      reason: 'proxy_missing',
      message:
        `the pod is opted in but has no ${cfg.profile.title} proxy (${names.proxy}); ` +
        "was the mesh's injector or meshgate skipped?",
    };
  }
  const mode = redirectOf(mesh);
  if (!mode) {
    return {
      ok: false,
      reason: 'redirect_missing',
      message:
        'the pod has a proxy but no redirect: ' +
        `neither ${names.init} nor a validation container (${names.validator})`,
    };
  }
  if (mode === 'cni') {
    if (mesh.proxy.native && !cfg.config.cni.redirectsNativeSidecars) {
      return {
        ok: false,
        reason: 'mesh_cni_skips',
        message:
          `${cfg.config.cni.pluginType} does not redirect pods whose proxy is a native sidecar ` +
          `(cni.redirectsNativeSidecars is false), and the pod has no ${names.init}`,
      };
    }
    const skips = cfg.profile.cniSkips(pod) ?? defaultNetworkOverride(pod);
    if (skips)
      return { ok: false, reason: 'mesh_cni_skips', message: `the pod relies on the CNI plugin, but ${skips}` };
    const network = networkMissing(pod, input.namespace, cfg);
    if (network) return { ok: false, reason: 'multus_network_missing', message: network };
  }
  const order = orderProblem(pod, mode, mesh, cfg.config.redirect.beforeInitContainers);
  if (order) return { ok: false, ...order };
  const status = readStatus(pod.metadata?.annotations);
  if (status && 'error' in status) return { ok: false, reason: 'status_mismatch', message: status.error };
  if (status) {
    // One set of names, not a search of the pod per listed name: both lists are the pod author's to lengthen.
    const present = containerNames(pod);
    const missing = [...status.initContainers, ...status.containers].filter((n) => !present.has(n));
    if (missing.length)
      return {
        ok: false,
        reason: 'status_mismatch',
        message: `meshgate.io/status lists ${missing.join(', ')}, which the pod does not contain`,
      };
    if (status.mode !== mode)
      return {
        ok: false,
        reason: 'status_mismatch',
        message: `meshgate.io/status claims ${status.mode} mode but the pod's containers are those of ${mode} mode`,
      };
  }
  const label = pod.metadata?.labels?.[REDIRECT_LABEL];
  if (label !== undefined && label !== mode) {
    return {
      ok: false,
      reason: 'status_mismatch',
      message: `label ${REDIRECT_LABEL}=${label} but the pod's containers are those of ${mode} mode`,
    };
  }
  const target = targetNode(pod);
  if (mode === 'cni' && target !== undefined && !nodes.get(target.name)?.verified) {
    const node = target.name;
    const why = unverifiedWhy(node, nodes);
    const text = `${why.code}: ${why.text}`;
    // Pinned by affinity and held to verified nodes: the scheduler binds it only once its node is verified, and the
    // binding guard checks the node again then.
    if (target.by === 'affinity' && requiresNodeLabel(pod, NODE_VERIFIED_LABEL, 'true')) {
      return {
        ok: true,
        reason: 'ok',
        warnings: [
          ...s.warnings,
          `node ${node} has no verified CNI chain (${text}); ` +
            `the pod stays Pending until the node is verified (its affinity requires ${NODE_VERIFIED_LABEL}=true)`,
        ],
      };
    }
    if (cfg.config.redirect.onUnverifiedNode === 'reject') {
      return {
        ok: false,
        reason: 'node_unverified',
        message: `the pod relies on the CNI plugin but its node ${node} has no verified CNI chain (${text})`,
      };
    }
    return {
      ok: true,
      reason: 'ok',
      warnings: [
        ...s.warnings,
        `node ${node} has no verified CNI chain (${text}); ` +
          'the validation container will stop the pod if redirection is missing',
      ],
    };
  }
  return { ok: true, reason: 'ok', warnings: s.warnings };
}
