/**
 * mesh custom: meshgate injects its own proxy and, in init mode, its privileged init container, from the compiled
 * templates. Every item is added only when the pod does not already hold it (judged by src/policy/identify.ts, not
 * by name), so a pod that went through meshgate — or through the apiserver's reinvocation — gets no duplicate.
 */
import type { Compiled, OwnTemplates } from '../../config/compile.ts';
import type { DeepReadonly } from '../../util/readonly.ts';
import { NODE_VERIFIED_LABEL } from '../../contract/names.ts';
import type { Container, Pod } from '../../contract/pod.ts';
import type { PodMesh } from '../identify.ts';
import { exclusionEnv } from '../../mesh/own-init.ts';
import * as patch from './patch.ts';
import type { PatchOp } from '../../contract/patch.ts';
import { recordStatus, type InjectionStatus } from '../status.ts';
import type { Allowed } from '../redirect.ts';
import { proxyResources } from './overrides.ts';
import { EXCLUSION_ENV } from '../../mesh/custom.ts';
import { tokenMountOps } from './service-account.ts';
import { networkEntries } from '../multus.ts';

export type Built = { ok: true; ops: PatchOp[]; status: InjectionStatus } | { ok: false; problems: string[] };

/** The annotations that ask for an exemption from the redirect. */
const EXCLUSION_ANNOTATIONS: readonly string[] = Object.values(EXCLUSION_ENV);

type Own = DeepReadonly<OwnTemplates>;
type Template = DeepReadonly<Container>;

function initFor(pod: Pod, own: Own): Template {
  const t = own.init;
  const a = pod.metadata?.annotations;
  // The shared template when the pod asks for no exemption (most pods): nothing built per review.
  if (!a || EXCLUSION_ANNOTATIONS.every((k) => a[k] === undefined)) return t;
  return { ...t, env: exclusionEnv(a) };
}

function proxyFor(
  pod: Pod,
  own: Own,
  native: boolean,
): { ok: true; proxy: Template } | { ok: false; problems: string[] } {
  const t = native ? own.proxyNative : own.proxy;
  const r = proxyResources(pod.metadata?.annotations, own.proxy.resources ?? {});
  if (r === undefined) return { ok: true, proxy: t };
  return r.ok ? { ok: true, proxy: { ...t, resources: r.resources } } : r;
}

/** The configured volumes the pod does not have yet; the shared list itself when it has none of them. */
function missingVolumes(pod: Pod, own: Own): ReadonlyArray<{ name: string }> {
  const volumes = own.volumes;
  if (!pod.spec.volumes) return volumes;
  const have = new Set(pod.spec.volumes.map((v) => v.name));
  return volumes.filter((v) => !have.has(v.name));
}

export function buildInjection(pod: Pod, namespace: string, mesh: PodMesh, cfg: Compiled, own: Own, r: Allowed): Built {
  const proxyBuilt = proxyFor(pod, own, r.native);
  if (!proxyBuilt.ok) return proxyBuilt;
  const { proxy } = proxyBuilt;
  // Order matters: the redirect is in place (init) or proven (validator) before the proxy binds its ports.
  const front: Template[] = [];
  if (r.kind === 'init' && !mesh.init) front.push(initFor(pod, own));
  const addValidator = (r.kind === 'cni' || r.validate) && !mesh.validator;
  if (addValidator) front.push(cfg.validator);
  const addProxy = !mesh.proxy;
  if (addProxy && r.native) front.push(proxy);
  const ops: PatchOp[] = patch.prependInitContainers(pod, front);
  if (addValidator) ops.push(...patch.addImagePullSecrets(pod, cfg.config.validator.imagePullSecrets));
  if (addProxy && !r.native) ops.push(patch.appendContainer(proxy));
  const volumes = missingVolumes(pod, own);
  ops.push(...patch.appendVolumes(pod, volumes));
  if (r.kind === 'cni' && r.affinity) ops.push(...patch.requireNodeLabel(pod, NODE_VERIFIED_LABEL, 'true'));
  const recorded = recordStatus(
    r,
    {
      init: front.map((c) => c.name),
      containers: addProxy && !r.native ? [proxy.name] : [],
      volumes: volumes.map((v) => v.name),
    },
    [],
    mesh.proxy ? mesh.proxy.native : r.native,
  );
  if (ops.length > 0) {
    // The OpenShift model: in CNI mode the pod must select the Multus network that runs the mesh plugin.
    const network = r.kind === 'cni' ? networkEntries(pod, namespace, cfg) : {};
    ops.push(
      ...patch.setMetadataEntries(pod, {
        labels: recorded.labels,
        annotations: { ...recorded.annotations, ...network },
      }),
    );
  }
  // After every insertion: the paths name the containers where the patch leaves them.
  const lists = {
    initContainers: front.length > 0 ? [...front, ...(pod.spec.initContainers ?? [])] : (pod.spec.initContainers ?? []),
    containers: addProxy && !r.native ? [...pod.spec.containers, proxy] : pod.spec.containers,
  };
  ops.push(...tokenMountOps(pod, lists, ops.length));
  return { ok: true, ops, status: recorded.status };
}
