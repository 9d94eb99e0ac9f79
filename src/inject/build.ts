/**
 * Turns a redirect decision into JSON Patch operations and the status annotation. Every item is added only
 * when the pod does not already hold one of that name, so a pod that already went through meshgate gets no
 * duplicate container, volume or init container.
 */
import type { MeshgateConfig } from '../config/types.ts';
import { NODE_VERIFIED_LABEL } from './constants.ts';
import type { Container, Pod } from './pod.ts';
import { containerNames, findContainer } from './pod.ts';
import type { Overrides } from './overrides.ts';
import * as patch from './patch.ts';
import { sharedOp } from './shared-op.ts';
import type { PatchOp } from './patch.ts';
import type { InjectionStatus } from './status.ts';
import { recordStatus, type Allowed, type Recorded } from './record.ts';
import { initContainer, proxyContainer, validatorContainer } from './templates.ts';
import { sharedList } from '../util/json.ts';

function metadataOps(pod: Pod, recorded: Recorded): PatchOp[] {
  return patch.setMetadataEntries(pod, { labels: recorded.labels, annotations: recorded.annotations });
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
  const ops: PatchOp[] = [];
  const names: string[] = [];
  const inits = pod.spec.initContainers ?? [];
  // Highest index first, so earlier removals do not shift later ones.
  for (let i = inits.length - 1; i >= 0; i--) {
    if (!cfg.injection.recognisedInitContainers.includes(inits[i].name)) continue;
    ops.push(patch.removeInitContainer(i));
    names.unshift(inits[i].name);
  }
  return { ops, names };
}

/** The configured volumes the pod does not have yet; the shared list itself when it has none of them. */
function missingVolumes(pod: Pod, cfg: MeshgateConfig): MeshgateConfig['volumes'] {
  if (!pod.spec.volumes) return cfg.volumes;
  const have = new Set(pod.spec.volumes.map((v) => v.name));
  return cfg.volumes.filter((v) => !have.has(v.name));
}

export function buildInjection(pod: Pod, cfg: MeshgateConfig, r: Allowed, o: Overrides, names = containerNames(pod)): { ops: PatchOp[]; status: InjectionStatus } {
  const absent = (c: Container) => !names.has(c.name);
  // Order matters: the redirect is in place (init) or proven (validator) before the proxy binds its ports.
  const front: Container[] = [];
  if (r.kind === 'init') front.push(initContainer(cfg, o));
  if (r.kind === 'cni' || r.validate) front.push(validatorContainer(cfg));
  const proxy = proxyContainer(cfg, o, r.native);
  if (r.native) front.push(proxy);
  const removals = foreignInitRemovals(pod, cfg);

  // The added containers are shared, frozen values (and so is a list of them): their JSON is cached.
  const ops: PatchOp[] = removals.ops;
  ops.push(...patch.prependInitContainers(pod, sharedList(front.filter(absent))));
  if (!r.native && absent(proxy)) ops.push(patch.appendContainer(proxy));
  ops.push(...patch.appendVolumes(pod, missingVolumes(pod, cfg)));
  ops.push(...affinityOps(pod, r));
  const recorded = recordStatus('inject', r, front, r.native ? [] : [proxy], cfg, removals.names);
  if (ops.length > 0) ops.push(...metadataOps(pod, recorded));
  return { ops, status: recorded.status };
}

/**
 * Enforce-only: another mesh injected its proxy and privileged init container. CNI mode removes that init
 * container and adds the validator in its place; init mode keeps it, followed by the validator when asked.
 */
export function buildEnforcement(pod: Pod, cfg: MeshgateConfig, r: Allowed, initIndex: number): { ops: PatchOp[]; status: InjectionStatus } {
  const validator = validatorContainer(cfg);
  const present = !!findContainer(pod, validator.name);
  const ops: PatchOp[] = [];
  let recorded: Recorded;
  if (r.kind === 'cni') {
    const removed = pod.spec.initContainers![initIndex].name;
    ops.push(patch.removeInitContainer(initIndex));
    if (!present) ops.push(sharedOp('add', `/spec/initContainers/${initIndex}`, validator));
    ops.push(...affinityOps(pod, r));
    recorded = recordStatus('enforce', r, [validator], [], cfg, [removed]);
  } else {
    if (r.validate && !present) ops.push(sharedOp('add', `/spec/initContainers/${initIndex + 1}`, validator));
    recorded = recordStatus('enforce', r, r.validate ? [validator] : [], [], cfg, []);
  }
  return { ops: [...ops, ...metadataOps(pod, recorded)], status: recorded.status };
}
