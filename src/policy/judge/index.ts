/**
 * The contract of each role's container for the configured mesh (src/policy/judge/types.ts), built once per
 * compiled configuration: the mesh's own containers (companion profiles) and meshgate's templates.
 */
import type { Compiled } from '../../config/compile.ts';
import type { Pod } from '../../contract/pod.ts';
import type { PodView, Role } from '../../mesh/types.ts';
import { anyValue } from './checks.ts';
import { ISTIO_INIT, ISTIO_PROXY, ISTIO_VALIDATION } from './istio.ts';
import { LINKERD_INIT, LINKERD_PROXY, LINKERD_VALIDATOR, linkerdPodProblem } from './linkerd.ts';
import { ownContract } from './own.ts';
import { istioPodProblem } from './istio-pod.ts';
import { resolutionProblem } from './resolution.ts';
import { ISTIO_LEGACY_GATEWAY_PROXY } from './istio-gateway.ts';
import type { ContainerContract, ContractContext } from './types.ts';

export { judgeContract } from './judge.ts';
export type { ContainerContract, ContractContext } from './types.ts';

export interface Contracts {
  /** The mesh's own containers (istio, linkerd); absent for custom, which recognises only meshgate's. */
  readonly mesh?: Readonly<Record<Role, ContainerContract>>;
  /** The proxy of a gateway its chart writes without an injector (Istio's legacy gateway charts). */
  readonly gatewayProxy?: ContainerContract;
  readonly own: {
    readonly validator: ContainerContract;
    /** Istio ambient pods' validator (src/policy/ambient/); accepted only where ambient is enabled. */
    readonly ambientValidator?: ContainerContract;
    readonly proxy?: ContainerContract;
    readonly proxyNative?: ContainerContract;
    readonly init?: ContainerContract;
  };
}

const MESH: Readonly<Record<string, Readonly<Record<Role, ContainerContract>>>> = {
  istio: { proxy: ISTIO_PROXY, init: ISTIO_INIT, validator: ISTIO_VALIDATION },
  linkerd: { proxy: LINKERD_PROXY, init: LINKERD_INIT, validator: LINKERD_VALIDATOR },
};

const built = new WeakMap<Compiled, Contracts>();

export function contractsFor(cfg: Compiled): Contracts {
  let c = built.get(cfg);
  if (c) return c;
  const own = cfg.own;
  const volumes = own?.volumes ?? [];
  c = {
    mesh: MESH[cfg.config.mesh],
    gatewayProxy: cfg.config.mesh === 'istio' ? ISTIO_LEGACY_GATEWAY_PROXY : undefined,
    own: {
      validator: ownContract(cfg.validator),
      ambientValidator: cfg.config.ambient.enabled ? ownContract(cfg.ambientValidator) : undefined,
      proxy: own && ownContract(own.proxy, volumes, { resources: anyValue('set per pod by annotation') }),
      proxyNative: own && ownContract(own.proxyNative, volumes, { resources: anyValue('set per pod by annotation') }),
      init: own && ownContract(own.init, volumes, { env: anyValue('read by src/mesh/own-init.ts') }),
    },
  };
  built.set(cfg, c);
  return c;
}

/** What a contract check may consult: the pod only as its view (PodView), so verdicts can be reused. */
export function contractContext(
  pod: PodView,
  container: ContractContext['container'],
  role: Role,
  cfg: Compiled,
): ContractContext {
  return { pod, container, role, id: cfg.identity, cp: cfg.controlPlane };
}

/**
 * The pod's volumes by name, built once per volume list (issue 33 §7: each mesh container's contract used to build
 * its own map, three walks of a pod's 40,000 volumes per review). Keyed by the list itself and rebuilt when its
 * length changed: a review never changes its pod, and tests that add a volume to a pod they judged before push.
 */
type Volumes = ReadonlyMap<string, Readonly<Record<string, unknown>>>;
const byList = new WeakMap<object, { length: number; volumes: Volumes }>();
const NO_VOLUMES: Volumes = new Map();
export function volumesByName(pod: Pod): Volumes {
  const list = pod.spec.volumes;
  if (!list) return NO_VOLUMES;
  const hit = byList.get(list);
  if (hit && hit.length === list.length) return hit.volumes;
  const m = new Map<string, Readonly<Record<string, unknown>>>();
  for (const v of list) if (typeof v?.name === 'string') m.set(v.name, v);
  byList.set(list, { length: list.length, volumes: m });
  return m;
}

/**
 * Pod-level inputs the configured mesh reads to change its proxy's program, bootstrap or control plane
 * (src/policy/judge/istio-pod.ts, linkerd.ts); undefined when there are none.
 */
export function podConfigProblem(pod: Pod, cfg: Compiled): string | undefined {
  const mesh =
    cfg.config.mesh === 'istio'
      ? istioPodProblem(pod, cfg.controlPlane)
      : cfg.config.mesh === 'linkerd'
        ? linkerdPodProblem(pod)
        : undefined;
  return mesh ?? resolutionProblem(pod, cfg.controlPlane);
}
