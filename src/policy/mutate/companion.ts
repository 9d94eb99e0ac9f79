/**
 * Companion profiles (istio, linkerd): the mesh's own injector added its proxy and its privileged init container;
 * meshgate decides the redirect per pod and adjusts what was injected:
 *   CNI mode  → the mesh's init container is removed and meshgate's validator runs first in the pod (no privileged
 *               container, Pod Security `restricted` passes, nothing runs before the redirect is proven); the
 *               mesh's own record of what it injected (sidecar.istio.io/status, which istio-cni reads) is kept
 *               truthful; nodeless pods are pinned.
 *   init mode → the mesh's init container stays (first with redirect.beforeInitContainers), followed by the
 *               validator when the node is not verified. Order: src/policy/order.ts.
 * A pod the mesh injected for its CNI plugin (a validator, no init container) has nothing to fall back to: it is
 * pinned to verified nodes, or refused on an unverified one.
 */
import type { Compiled } from '../../config/compile.ts';
import type { NodeFacts } from '../../facts/node-facts.ts';
import type { Container, Pod } from '../../contract/pod.ts';
import type { PodMesh } from '../identify.ts';
import { NODE_VERIFIED_LABEL } from '../../contract/names.ts';
import * as patch from './patch.ts';
import type { PatchOp } from '../../contract/patch.ts';
import { recordStatus, readStatus, type InjectionStatus } from '../status.ts';
import {
  decideRedirect,
  unverifiedWhy,
  type Allowed,
  type RedirectDecision,
  type RedirectOptions,
} from '../redirect.ts';
import { REASONS, type ReasonCode } from '../../contract/reasons.ts';
import { tokenMountOps } from './service-account.ts';
import { toFront } from '../order.ts';
import type { DeepReadonly } from '../../util/readonly.ts';
import { defaultNetworkOverride, networkEntries } from '../multus.ts';

/** The pod's mesh parts once the mesh's injector has run: its proxy is there (decide.ts waits for it otherwise). */
export type InjectedMesh = PodMesh & { proxy: NonNullable<PodMesh['proxy']> };

export type Adjusted =
  | { kind: 'skip'; reason: ReasonCode }
  | { kind: 'deny'; reason: ReasonCode; message: string; redirect?: RedirectDecision }
  | { kind: 'patch'; reason: ReasonCode; ops: PatchOp[]; status: InjectionStatus; redirect: Allowed };

/**
 * The redirect this pod can have: CNI mode needs a plugin that redirects this pod; init mode needs the mesh's init
 * container. `decideRedirect` says what the node allows; this narrows it to what the pod carries.
 */
export function companionRedirect(
  pod: Pod,
  mesh: InjectedMesh,
  facts: NodeFacts,
  cfg: Compiled,
  o: RedirectOptions = {},
):
  | RedirectDecision
  | { kind: 'refuse'; reason: ReasonCode; message: string }
  | { kind: 'untouched'; reason: ReasonCode; message: string } {
  const r = decideRedirect(pod, facts, cfg, o);
  const native = mesh.proxy.native;
  const plugin = cfg.config.cni.pluginType;
  const cniBlocked =
    native && !cfg.config.cni.redirectsNativeSidecars
      ? `${plugin} does not redirect pods whose proxy is a native sidecar (cni.redirectsNativeSidecars is false)`
      : (cfg.profile.cniSkips(pod) ?? defaultNetworkOverride(pod));
  if (!mesh.init) {
    // Nothing to fall back to: CNI mode or nothing.
    if (cniBlocked)
      return {
        kind: 'refuse',
        reason: 'mesh_cni_skips',
        message: `${cniBlocked}, and the pod has no ${cfg.names.init} to fall back to`,
      };
    if (r.kind !== 'init') return r.kind === 'cni' ? { ...r, native } : r;
    // At audit: left as the mesh made it, neither pinned nor refused (redirect.ts RedirectOptions).
    if (r.reason === 'audit_unpinned') return { kind: 'untouched', reason: r.reason, message: REASONS[r.reason] };
    if (r.node === undefined) return { kind: 'cni', reason: 'cni_only', affinity: true, native };
    const why = facts.get(r.node)?.verified
      ? `redirect mode "${cfg.config.redirect.mode}" asks for`
      : `node ${r.node} has no verified CNI chain (${unverifiedWhy(r.node, facts).code}), so the pod needs`;
    return {
      kind: 'refuse',
      reason: 'no_fallback',
      message:
        `${why} the privileged init container ${cfg.names.init}, ` +
        'and the pod has none (the mesh injected it for its CNI plugin)',
    };
  }
  // The plugin would not redirect it, but its init container can: keep that (no need to validate what it installs).
  if (r.kind === 'cni' && cniBlocked)
    return { kind: 'init', reason: 'cni_skips_pod', node: r.node, validate: false, native };
  return r.kind === 'deny' ? r : { ...r, native };
}

export function adjust(
  pod: Pod,
  namespace: string,
  mesh: InjectedMesh,
  facts: NodeFacts,
  cfg: Compiled,
  o: RedirectOptions = {},
): Adjusted {
  const r = companionRedirect(pod, mesh, facts, cfg, o);
  if (r.kind === 'untouched') return { kind: 'skip', reason: r.reason };
  if (r.kind === 'refuse') return { kind: 'deny', reason: r.reason, message: r.message };
  if (r.kind === 'deny') return { kind: 'deny', reason: r.reason, message: r.message, redirect: r };
  const validator = cfg.validator;
  const ops: PatchOp[] = [];
  const added: string[] = [];
  const removed: string[] = [];
  /** The init containers as the ops leave them. */
  let inits: readonly (Container | DeepReadonly<Container>)[] = pod.spec.initContainers ?? [];
  if (r.kind === 'cni') {
    if (mesh.init) {
      ops.push(patch.removeInitContainer(mesh.init.index));
      removed.push(mesh.init.container.name);
      inits = inits.toSpliced(mesh.init.index, 1);
      ops.push(
        ...cfg.profile.statusOps(pod, mesh.init.container.name, mesh.validator?.container.name ?? validator.name),
      );
    }
    if (mesh.validator) {
      // Wherever the mesh (or another webhook since) put it: first (src/policy/order.ts).
      const index = inits.indexOf(mesh.validator.container);
      const moved = toFront(inits, { index, container: mesh.validator.container });
      ops.push(...moved.ops);
      inits = moved.inits;
    } else if (mesh.init) {
      ops.push({ op: 'add', path: '/spec/initContainers/0', value: validator });
      added.push(validator.name);
      inits = [validator, ...inits];
    }
  } else if (r.kind === 'init' && mesh.init) {
    let at = mesh.init.index;
    if (cfg.config.redirect.beforeInitContainers) {
      const moved = toFront(inits, mesh.init);
      ops.push(...moved.ops);
      inits = moved.inits;
      at = 0;
    }
    if (r.validate && !mesh.validator) {
      ops.push({ op: 'add', path: `/spec/initContainers/${at + 1}`, value: validator });
      added.push(validator.name);
      inits = inits.toSpliced(at + 1, 0, validator);
    }
  }
  if (added.length > 0) ops.push(...patch.addImagePullSecrets(pod, cfg.config.validator.imagePullSecrets));
  if (r.kind === 'cni' && r.affinity) ops.push(...patch.requireNodeLabel(pod, NODE_VERIFIED_LABEL, 'true'));
  // Reinvocation sees the pod after meshgate's own patch: what it removed then is still part of the record.
  const before = readStatus(pod.metadata?.annotations);
  const earlier = before && !('error' in before) ? (before.removedInitContainers ?? []) : [];
  const ownValidator = added.length > 0 || mesh.validator?.own === true;
  const recorded = recordStatus(
    r,
    { init: ownValidator ? [validator.name] : [], containers: [], volumes: [] },
    [...new Set([...earlier, ...removed])],
    r.native,
  );
  // The OpenShift model: in CNI mode the pod must select the Multus network that runs the mesh plugin.
  const annotations =
    r.kind === 'cni' ? { ...recorded.annotations, ...networkEntries(pod, namespace, cfg) } : recorded.annotations;
  ops.push(...patch.setMetadataEntries(pod, { labels: recorded.labels, annotations }));
  // Also to the mesh's own containers that lack the mount: see tokenMountOps for why that is the same pod.
  ops.push(...tokenMountOps(pod, { initContainers: inits, containers: pod.spec.containers }, ops.length));
  return { kind: 'patch', reason: r.reason, ops, status: recorded.status, redirect: r };
}
