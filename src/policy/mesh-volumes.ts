/**
 * The mesh's volumes belong to the mesh, and the mesh's proxy starts before anything of the app that keeps running
 * (issue 33 §4). pilot-agent writes Envoy's bootstrap into `istio-envoy` and serves the workload's certificates on a
 * socket in `workload-socket`; `istio-data`, `istio-token`, `istio-podinfo`, Linkerd's identity directory and token
 * are the proxy's working files and identity. An app container that mounts one of them can replace the bootstrap
 * (the real pilot-agent lost that race 5 of 5 times on a node with fs.protected_regular=0, the kernel default), serve
 * its own socket there (pilot-agent then skips its own SDS server), or read the proxy's identity token. So no
 * container that is not the mesh's — app, init or ephemeral — may mount a volume that a mesh container mounts as its
 * injector writes it (the contracts' mount rules, src/policy/judge/). The ServiceAccount token volume the apiserver
 * mounts into every container, and the pod's own volumes lent to the proxy (sidecar.istio.io/userVolumeMount), are
 * not the mesh's.
 *
 * Order: a native sidecar of the app placed before a native-sidecar proxy starts first and keeps running beside it,
 * in the same network namespace, before the proxy exists (it can take the proxy's ports and sockets first). The
 * injectors put the proxy before every app init container (Istio: "{istio-init/istio-validation} => proxy =>
 * rest", pkg/kube/inject/webhook.go); a pod where an app native sidecar comes first is refused. With a regular
 * (non-native) proxy every native sidecar starts before it by Kubernetes' design; those share only the network
 * namespace, where taking a port of the proxy's first stops the proxy (the pod then fails closed).
 */
import type { Compiled } from '../config/compile.ts';
import type { Container, Pod } from '../contract/pod.ts';
import type { Role } from '../mesh/types.ts';
import { isObject } from '../util/json.ts';
import { describeFound, type Found, type PodMesh } from './identify.ts';
import { contractsFor, type ContainerContract } from './judge/index.ts';
import { type MountRule, type MountsCheck, ruleMatches } from './judge/checks.ts';
import { TOKEN_MOUNT } from './judge/common.ts';

export interface MeshVolumeVerdict {
  reason: 'mesh_volume_shared' | 'started_before_proxy';
  message: string;
}

/** The mount rules of every contract that may judge a container of `role` (the mesh's and meshgate's). */
function rulesOf(role: Role, cfg: Compiled): readonly MountRule[] {
  const c = contractsFor(cfg);
  const contracts: Array<ContainerContract | undefined> =
    role === 'proxy'
      ? [c.mesh?.proxy, c.own.proxy, c.own.proxyNative]
      : role === 'init'
        ? [c.mesh?.init, c.own.init]
        : [c.mesh?.validator, c.own.validator, c.own.ambientValidator];
  return contracts
    .flatMap((k) => (k?.fields.volumeMounts as Partial<MountsCheck> | undefined)?.rules ?? [])
    .filter((r) => r !== TOKEN_MOUNT);
}

/** A role's mount rules indexed: the mount paths of each volume name, and the rules that test the name. */
interface RuleIndex {
  readonly paths: ReadonlyMap<string, ReadonlySet<string>>;
  readonly patterns: readonly MountRule[];
}

function indexed(rules: readonly MountRule[]): RuleIndex {
  const paths = new Map<string, Set<string>>();
  const patterns: MountRule[] = [];
  for (const r of rules) {
    if (typeof r.name !== 'string') patterns.push(r);
    else {
      const at = paths.get(r.name) ?? new Set<string>();
      at.add(r.mountPath);
      paths.set(r.name, at);
    }
  }
  return { paths, patterns };
}

/** Whether a mount of `name` at `mountPath` is one of the rules' (ruleMatches of any of them). */
const matchesAny = (ix: RuleIndex, name: string, mountPath: string) =>
  ix.paths.get(name)?.has(mountPath) === true || ix.patterns.some((r) => ruleMatches(r, name, mountPath));

/** Each role's rules, indexed once per compiled configuration (they are its contracts' constants). */
const rulesByConfig = new WeakMap<Compiled, Readonly<Record<Role, RuleIndex>>>();
function rulesFor(role: Role, cfg: Compiled): RuleIndex {
  let rules = rulesByConfig.get(cfg);
  if (!rules) {
    rules = {
      proxy: indexed(rulesOf('proxy', cfg)),
      init: indexed(rulesOf('init', cfg)),
      validator: indexed(rulesOf('validator', cfg)),
    };
    rulesByConfig.set(cfg, rules);
  }
  return rules[role];
}

type Mount = { name: string; mountPath: string };
const mountsOf = (c: Container, field: 'volumeMounts' | 'volumeDevices'): Mount[] => {
  const list = c[field];
  return Array.isArray(list) ? (list.filter((m) => isObject(m) && typeof m.name === 'string') as Mount[]) : [];
};

/** Who mounts a volume of the mesh's, and where: words for a message, built only when one is needed. */
interface Owner {
  readonly f: Found;
  readonly mountPath: string;
}
const ownerWords = (o: Owner) => `${describeFound(o.f)} mounts it at ${o.mountPath}`;

/** The first mount of volume `name` by `f` as its producer writes it, if any. */
function producerMount(name: string, role: Role, f: Found | undefined, cfg: Compiled): Owner | undefined {
  const list = f?.container.volumeMounts;
  if (!f || !Array.isArray(list)) return undefined;
  for (const m of list) {
    if (!isObject(m) || m.name !== name) continue;
    const mountPath = m.mountPath as string;
    if (matchesAny(rulesFor(role, cfg), name, mountPath)) return { f, mountPath };
  }
  return undefined;
}

/**
 * Whether volume `name` is the mesh's: the first of its containers (proxy, init container, validator) that mounts it
 * as its producer writes it, and where. Asked only for the volumes app containers mount (a few), so no map of the
 * mesh's volumes is built per review.
 */
const ownerOf = (name: string, mesh: PodMesh, cfg: Compiled): Owner | undefined =>
  producerMount(name, 'proxy', mesh.proxy, cfg) ??
  producerMount(name, 'init', mesh.init, cfg) ??
  producerMount(name, 'validator', mesh.validator, cfg);

/** The first app, init or ephemeral container that mounts a volume of the mesh's; undefined when none does. */
export function sharedVolumeRule(mesh: PodMesh, cfg: Compiled): MeshVolumeVerdict | undefined {
  if (!mesh.proxy && !mesh.init && !mesh.validator) return undefined;
  for (const f of mesh.apps)
    for (const field of ['volumeMounts', 'volumeDevices'] as const)
      for (const m of mountsOf(f.container, field)) {
        const whose = ownerOf(m.name, mesh, cfg);
        if (whose)
          return {
            reason: 'mesh_volume_shared',
            message:
              `${describeFound(f)} mounts volume ${m.name}, which is the mesh's (${ownerWords(whose)}): ` +
              "a container beside the proxy could rewrite the proxy's bootstrap, serve its sockets or read its " +
              "identity there; only the mesh's containers may mount it",
          };
      }
  return undefined;
}

/** An app native sidecar (restartPolicy Always) ordered before a native-sidecar proxy; undefined when none is. */
export function startedBeforeProxyRule(pod: Pod, mesh: PodMesh): MeshVolumeVerdict | undefined {
  const proxy = mesh.proxy;
  if (!proxy?.native) return undefined;
  const early = mesh.apps.find(
    (f: Found) => f.list === 'initContainers' && f.index < proxy.index && f.container.restartPolicy === 'Always',
  );
  if (!early) return undefined;
  return {
    reason: 'started_before_proxy',
    message:
      `${describeFound(early)} is a native sidecar ordered before the proxy ${proxy.container.name} ` +
      `(init container ${early.index} of ${pod.spec.initContainers?.length ?? 0}, the proxy ${proxy.index}): it ` +
      'would start first and keep running beside the proxy, in its network namespace, before the proxy exists',
  };
}
