/**
 * The decision core of the mutating webhook: `decide(input, facts, config)` is pure and shared by the webhook,
 * the CLI and the tests. It answers skip (with a reason), deny (with a reason and message) or patch (JSON Patch
 * ops that apply to the pod as given, plus the status recorded on the pod). Policy outcomes are values, never
 * exceptions. The same screen as the validating webhook's runs first (src/policy/screen.ts), so a pod the
 * validating webhook would refuse is refused here already, with the same reason.
 */
import type { Compiled } from '../../config/compile.ts';
import type { NodeFacts } from '../../facts/node-facts.ts';
import { decideRedirect, type Allowed, type RedirectOptions } from '../redirect.ts';
import { readStatus } from '../status.ts';
import { toFront } from '../order.ts';
import type { Pod } from '../../contract/pod.ts';
import type { PodMesh } from '../identify.ts';
import { buildInjection } from './build.ts';
import { adjust } from './companion.ts';
import { screen, type PodInput } from '../screen.ts';
import { podCapabilityReading } from '../escalation.ts';
import { defaultNetworkOverride } from '../multus.ts';
import { MAX_PATCH_OPS } from '../limits.ts';
import { decideAmbient } from './ambient.ts';
import type { Decision } from './decision.ts';
import { ambientCase } from '../ambient-case.ts';

export type { PodInput } from '../screen.ts';

export type { Decision } from './decision.ts';

/**
 * A pod meshgate injected in CNI mode whose validator another webhook has since pushed back (it prepended its own
 * init container): the validator goes first again (src/policy/order.ts). Everything else stays as recorded.
 */
function reordered(pod: Pod, mesh: PodMesh): Decision | undefined {
  const status = readStatus(pod.metadata?.annotations);
  if (!mesh.validator || mesh.init || !status || 'error' in status || mesh.validator.index === 0) return undefined;
  const { ops } = toFront(pod.spec.initContainers ?? [], mesh.validator);
  const redirect: Allowed = {
    kind: 'cni',
    reason: status.reason,
    node: status.node,
    affinity: status.affinity,
    native: status.nativeSidecar,
  };
  return { kind: 'patch', reason: 'validator_moved_first', ops, status, redirect, warnings: [] };
}

function bounded(d: Decision): Decision {
  if (d.kind !== 'patch' || d.ops.length <= MAX_PATCH_OPS) return d;
  return {
    kind: 'deny',
    reason: 'too_large',
    message: `the patch for this pod would have ${d.ops.length} operations; meshgate emits at most ${MAX_PATCH_OPS}`,
  };
}

/** `o.hold` false at enforcement level audit: meshgate pins and holds no pod (src/policy/redirect.ts). */
export function decide(input: PodInput, facts: NodeFacts, cfg: Compiled, o: RedirectOptions = {}): Decision {
  const s = screen(input, cfg, podCapabilityReading(input.pod, facts));
  if (s.kind !== 'guard') return s;
  const { mesh } = s;
  const { pod } = input;

  // Istio ambient: no sidecar to wait for; the validator alone (src/policy/ambient/).
  const ambient = ambientCase(input, mesh, cfg);
  if (ambient === 'ambient') {
    const d = bounded(decideAmbient(input, mesh, facts, cfg, o));
    return d.kind === 'patch' ? { ...d, warnings: s.warnings } : d;
  }
  if (ambient) return ambient;

  // Companion profiles (the mesh injects) compile without meshgate's own templates; mesh custom with them.
  const own = cfg.own;
  if (!own) {
    // The mesh's injector has not run yet (webhook order): the apiserver calls meshgate again after it.
    const { proxy } = mesh;
    if (!proxy) return { kind: 'skip', reason: 'no_proxy_yet' };
    const a = adjust(pod, input.namespace, { ...mesh, proxy }, facts, cfg, o);
    if (a.kind === 'deny' || a.kind === 'skip') return a;
    if (a.ops.length === 0) return { kind: 'skip', reason: 'already_injected' };
    return bounded({ ...a, warnings: s.warnings });
  }

  // A pod holding meshgate's proxy and a redirect (judged by content) is injected: reinvocation, re-applied output.
  if (mesh.proxy && (mesh.init || mesh.validator))
    return reordered(input.pod, mesh) ?? { kind: 'skip', reason: 'already_injected' };
  const decided = decideRedirect(pod, facts, cfg, o);
  if (decided.kind === 'deny')
    return { kind: 'deny', reason: decided.reason, message: decided.message, redirect: decided };
  // A pod that names its own Multus default network is not redirected by the verified chain: its own init container.
  const redirect: Allowed =
    decided.kind === 'cni' && defaultNetworkOverride(pod)
      ? { kind: 'init', reason: 'cni_skips_pod', node: decided.node, validate: false, native: decided.native }
      : decided;
  const built = buildInjection(pod, input.namespace, mesh, cfg, own, redirect);
  if (!built.ok) return { kind: 'deny', reason: 'invalid_annotation', message: built.problems.join('; ') };
  if (built.ops.length === 0) return { kind: 'skip', reason: 'already_injected' };
  return bounded({
    kind: 'patch',
    reason: redirect.reason,
    ops: built.ops,
    status: built.status,
    redirect,
    warnings: s.warnings,
  });
}
