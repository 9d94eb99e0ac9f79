/**
 * Turns a redirect decision into JSON Patch operations and the status annotation. Every item is added only
 * when the pod does not already hold one of that name, so a pod that already went through meshgate gets no
 * duplicate container, volume or init container.
 */
import type { MeshgateConfig } from '../config/types.ts';
import { NODE_VERIFIED_LABEL, REDIRECT_LABEL, STATUS_ANNOTATION } from './constants.ts';
import type { Container, Pod } from './pod.ts';
import { findContainer } from './pod.ts';
import type { Overrides } from './overrides.ts';
import * as patch from './patch.ts';
import type { PatchOp } from './patch.ts';
import type { RedirectDecision } from './redirect.ts';
import { encodeStatus, type InjectionStatus } from './status.ts';
import { initContainer, proxyContainer, validatorContainer } from './templates.ts';

type Allowed = Exclude<RedirectDecision, { kind: 'deny' }>;

function metadataOps(pod: Pod, status: InjectionStatus, mode: 'cni' | 'init'): PatchOp[] {
  return [
    ...patch.setMetadataEntries(pod, 'labels', { [REDIRECT_LABEL]: mode }),
    ...patch.setMetadataEntries(pod, 'annotations', { [STATUS_ANNOTATION]: encodeStatus(status) }),
  ];
}

function affinityOps(pod: Pod, r: Allowed): PatchOp[] {
  return r.kind === 'cni' && r.affinity ? patch.requireNodeLabel(pod, NODE_VERIFIED_LABEL, 'true') : [];
}

/**
 * A recognised init container of another mesh without its proxy (a half-injected pod) would redirect traffic to
 * a proxy that is not there, and make the pod look like init mode to the validating webhook: meshgate's own
 * redirect replaces it, so it is removed (and recorded in the status).
 */
function foreignInitRemovals(pod: Pod, cfg: MeshgateConfig): { ops: PatchOp[]; names: string[] } {
  const found = (pod.spec.initContainers ?? [])
    .map((c, i) => ({ name: c.name, i }))
    .filter((c) => cfg.injection.recognisedInitContainers.includes(c.name));
  // Highest index first, so earlier removals do not shift later ones.
  return { ops: [...found].reverse().map((c) => patch.removeInitContainer(c.i)), names: found.map((c) => c.name) };
}

export function buildInjection(pod: Pod, cfg: MeshgateConfig, r: Allowed, o: Overrides): { ops: PatchOp[]; status: InjectionStatus } {
  const absent = (c: Container) => !findContainer(pod, c.name);
  // Order matters: the redirect is in place (init) or proven (validator) before the proxy binds its ports.
  const front: Container[] = [];
  if (r.kind === 'init') front.push(initContainer(cfg, o));
  if (r.kind === 'cni' || r.validate) front.push(validatorContainer(cfg));
  const proxy = proxyContainer(cfg, o, r.native);
  if (r.native) front.push(proxy);
  const initAdds = front.filter(absent);
  const containerAdds = r.native ? [] : [proxy].filter(absent);
  const have = new Set((pod.spec.volumes ?? []).map((v) => v.name));
  const volumeAdds = cfg.volumes.filter((v) => !have.has(v.name));
  const removals = foreignInitRemovals(pod, cfg);

  const ops: PatchOp[] = [
    ...removals.ops,
    ...patch.prependInitContainers(pod, initAdds),
    ...containerAdds.map(patch.appendContainer),
    ...patch.appendVolumes(pod, volumeAdds),
    ...affinityOps(pod, r),
  ];
  const status = statusOf(r, front, r.native ? [] : [proxy], cfg, removals.names);
  if (ops.length === 0) return { ops, status };
  return { ops: [...ops, ...metadataOps(pod, status, r.kind)], status };
}

function statusOf(r: Allowed, inits: Container[], containers: Container[], cfg: MeshgateConfig, removed?: string[]): InjectionStatus {
  const s: InjectionStatus = {
    version: 1,
    mode: r.kind,
    reason: r.reason,
    nativeSidecar: r.native,
    initContainers: inits.map((c) => c.name),
    containers: containers.map((c) => c.name),
    volumes: cfg.injection.enabled ? cfg.volumes.map((v) => v.name) : [],
    affinity: r.kind === 'cni' && r.affinity,
  };
  if (r.node) s.node = r.node;
  if (removed?.length) s.removedInitContainers = removed;
  return s;
}

/**
 * Enforce-only: another mesh injected its proxy and privileged init container. CNI mode removes that init
 * container and adds the validator in its place; init mode keeps it, followed by the validator when asked.
 */
export function buildEnforcement(pod: Pod, cfg: MeshgateConfig, r: Allowed, initIndex: number): { ops: PatchOp[]; status: InjectionStatus } {
  const validator = validatorContainer(cfg);
  const present = !!findContainer(pod, validator.name);
  const ops: PatchOp[] = [];
  let status: InjectionStatus;
  if (r.kind === 'cni') {
    const removed = pod.spec.initContainers![initIndex].name;
    ops.push(patch.removeInitContainer(initIndex));
    if (!present) ops.push({ op: 'add', path: `/spec/initContainers/${initIndex}`, value: validator });
    ops.push(...affinityOps(pod, r));
    status = statusOf(r, [validator], [], cfg, [removed]);
  } else {
    if (r.validate && !present) ops.push({ op: 'add', path: `/spec/initContainers/${initIndex + 1}`, value: validator });
    status = statusOf(r, r.validate ? [validator] : [], [], cfg);
  }
  return { ops: [...ops, ...metadataOps(pod, status, r.kind)], status };
}
