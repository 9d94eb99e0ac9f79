/**
 * Which of a pod's containers are really the mesh's — judged by what they are, never by their names. A name the
 * meshes reserve (istio-proxy, linkerd-init, meshgate-validate, …) only says which role a container claims; it gets
 * that role when it is the real thing:
 * - meshgate's own containers are the compiled templates, field by field (src/policy/judge/own.ts);
 * - the mesh's own containers (companion profiles) pass the profile's judge — recognised image repository, the
 *   capabilities and identity they need, arguments read the way their own parser reads them — and the contract of
 *   what the mesh's injector writes, field by field (src/policy/judge/istio.ts, linkerd.ts): every field that
 *   decides what runs, from which files and as whom;
 * - anything else under a reserved name is an impostor, and the pod is refused with the reason.
 * Every other container — app, init or ephemeral — is an app container, judged by the app rules
 * (src/policy/rules.ts).
 */
import type { Compiled } from '../config/compile.ts';
import { RESERVED_NAMES } from '../mesh/index.ts';
import type { PodView, RedirectSettings, Role } from '../mesh/types.ts';
import { CONTAINER_LISTS, type Container, type ContainerList, type Pod } from '../contract/pod.ts';
import { ownInitSettings } from '../mesh/own-init.ts';
import { contractContext, contractsFor, judgeContract, volumesByName, type ContainerContract } from './judge/index.ts';
import { type RoleVerdict, VerdictCache } from './verdict-cache.ts';
import { type JudgementInput, podViewOf } from './verdict-input.ts';
import { isObject } from '../util/json.ts';

export interface Found {
  readonly list: ContainerList;
  readonly index: number;
  readonly container: Container;
}

/** How messages name a found container: "init container istio-init". */
export function describeFound(f: Pick<Found, 'list' | 'container'>): string {
  const kind =
    f.list === 'ephemeralContainers'
      ? 'ephemeral container'
      : f.list === 'initContainers'
        ? 'init container'
        : 'container';
  return `${kind} ${f.container.name}`;
}

export interface MeshContainer extends Found {
  /** meshgate's own template (true) or the mesh's own container (false). */
  readonly own: boolean;
}

export interface PodMesh {
  proxy?: MeshContainer & { native: boolean };
  init?: MeshContainer & { settings: RedirectSettings };
  validator?: MeshContainer;
  impostors: Array<Found & { problem: string }>;
  /** Every container that is not the mesh's, ephemeral ones included. */
  apps: Found[];
  /**
   * The mesh's proxy as a placeholder its injector fills in (Istio's `image: auto`, the istio/gateway chart's):
   * neither the proxy nor an app yet. The mutating webhook waits for the injector (no_proxy_yet); the validating
   * webhook, after every mutation, finds no proxy and refuses (proxy_missing).
   */
  pending?: Found;
}

/** The contract check of a role's container: meshgate's template, or the mesh's injector (src/policy/judge/). */
function contractProblem(f: Found, role: Role, contract: ContainerContract | undefined, view: PodView, cfg: Compiled) {
  if (!contract) return undefined;
  return judgeContract(f.container, contract, contractContext(view, f.container, role, cfg));
}

function roleOf(name: string, cfg: Compiled): Role | undefined {
  const n = cfg.names;
  return name === n.proxy ? 'proxy' : name === n.init ? 'init' : name === n.validator ? 'validator' : undefined;
}

/** Where a role's container may live: the proxy keeps running, the init and validator must exit first. */
function placeProblem(role: Role, f: Found): string | undefined {
  const always = f.container.restartPolicy === 'Always';
  if (f.list === 'ephemeralContainers') return `an ephemeral container cannot be the ${role}`;
  if (role === 'proxy' && f.list === 'initContainers' && !always)
    return 'as an init container without restartPolicy Always it would exit before the app starts';
  if (role !== 'proxy' && (f.list !== 'initContainers' || always))
    return `the ${role} must be an init container that runs to completion`;
  return undefined;
}

function judgeProxy(f: Found, view: PodView, cfg: Compiled): string | undefined {
  const contracts = contractsFor(cfg);
  if (cfg.own) {
    const own = f.list === 'initContainers' ? contracts.own.proxyNative : contracts.own.proxy;
    return contractProblem(f, 'proxy', own, view, cfg);
  }
  const judged = cfg.profile.judgeProxy(f.container, view, cfg.identity);
  if (judged) return judged;
  const injected = contractProblem(f, 'proxy', contracts.mesh?.proxy, view, cfg);
  // A lone gateway proxy its chart wrote without the injector (Istio's legacy gateway charts) has a contract of its own.
  if (!injected || !contracts.gatewayProxy || !view.gateway?.alone) return injected;
  const chart = contractProblem(f, 'proxy', contracts.gatewayProxy, view, cfg);
  return chart && `${injected}; nor is it the proxy of ${contracts.gatewayProxy.producer} (${chart})`;
}

function judgeInit(f: Found, view: PodView, cfg: Compiled): RoleVerdict {
  const contracts = contractsFor(cfg);
  if (cfg.own) {
    const problem = contractProblem(f, 'init', contracts.own.init, view, cfg);
    if (problem) return { problem };
    const settings = ownInitSettings(f.container);
    return 'problem' in settings ? settings : { settings, own: true };
  }
  const r = cfg.profile.judgeInit(f.container, cfg.identity);
  if ('problem' in r) return r;
  const problem = contractProblem(f, 'init', contracts.mesh?.init, view, cfg);
  return problem ? { problem } : { settings: r.settings, own: false };
}

/** meshgate's validator is accepted under every profile; a companion mesh's own validator too. */
function judgeValidator(f: Found, view: PodView, cfg: Compiled): RoleVerdict {
  const contracts = contractsFor(cfg);
  const ownProblem = contractProblem(f, 'validator', contracts.own.validator, view, cfg);
  if (!ownProblem) return { own: true };
  // Istio ambient: whether this pod may carry it is the ambient posture's question (src/policy/ambient-posture.ts).
  if (contracts.own.ambientValidator && !contractProblem(f, 'validator', contracts.own.ambientValidator, view, cfg))
    return { own: true };
  if (cfg.own) return { problem: ownProblem };
  const theirs =
    cfg.profile.judgeValidator(f.container, view, cfg.identity) ??
    contractProblem(f, 'validator', contracts.mesh?.validator, view, cfg);
  if (!theirs) return { own: false };
  return { problem: `it is neither meshgate's validator (${ownProblem}) nor ${cfg.profile.title}'s own (${theirs})` };
}

function judgeRole(role: Role, f: Found, view: PodView, cfg: Compiled): RoleVerdict {
  if (role === 'init') return judgeInit(f, view, cfg);
  if (role === 'validator') return judgeValidator(f, view, cfg);
  const problem = judgeProxy(f, view, cfg);
  return problem ? { problem } : { own: !!cfg.own };
}

/**
 * Verdicts on the containers of every review (src/policy/verdict-cache.ts): the same injected container in the same
 * view is judged once.
 */
export const VERDICTS = new VerdictCache();

/** The parts of a PodView the same for every container of the pod, read once per pod. */
type Around = Pick<JudgementInput, 'serviceAccountName' | 'gateway' | 'appCapabilities'>;

function around(pod: Pod, cfg: Compiled): Around {
  const app = pod.spec.containers.find((c) => c.name !== cfg.profile.names.proxy);
  return {
    serviceAccountName: pod.spec.serviceAccountName,
    gateway: cfg.profile.gateway?.(pod),
    appCapabilities: app?.securityContext?.capabilities,
  };
}

/** Up to this many volumes a pod's volume is found by a walk of its list; a longer list is mapped by name once. */
const WALK_VOLUMES = 16;

/**
 * What the judgement of `f` reads (verdict-cache.ts JudgementInput; its PodView is built from it): the container and, of the
 * pod, the volumes it mounts (in the order of its mounts; the last of a name, as a Map of the list keeps it) and the
 * pod-wide parts.
 */
function judged(pod: Pod, f: Found, role: Role, cfg: Compiled, shared: Around): JudgementInput {
  const mounts: unknown = f.container.volumeMounts;
  const volumes: Array<readonly [string, Readonly<Record<string, unknown>>]> = [];
  const list = pod.spec.volumes;
  if (Array.isArray(mounts) && mounts.length > 0 && list) {
    const byName = list.length > WALK_VOLUMES ? volumesByName(pod) : undefined;
    for (const m of mounts) {
      const name: unknown = isObject(m) ? m.name : undefined;
      if (typeof name !== 'string') continue;
      const v = byName ? byName.get(name) : lastNamed(list, name);
      if (v !== undefined) volumes.push([name, v]);
    }
  }
  return {
    cfg,
    role,
    list: f.list,
    container: f.container,
    first: f.list === 'containers' && f.index === 0,
    volumes,
    serviceAccountName: shared.serviceAccountName,
    gateway: shared.gateway,
    appCapabilities: shared.appCapabilities,
  };
}

/** The last volume named `name` in a short list. */
function lastNamed<T extends { name?: unknown }>(list: readonly T[], name: string): T | undefined {
  for (let i = list.length - 1; i >= 0; i--) if (list[i]?.name === name) return list[i];
  return undefined;
}

/** `verdicts`: where judgements are reused (tests pass a cache of their own). */
export function identifyPod(pod: Pod, cfg: Compiled, verdicts: VerdictCache = VERDICTS): PodMesh {
  const out: PodMesh = { impostors: [], apps: [] };
  let shared: Around | undefined;
  for (const list of CONTAINER_LISTS) {
    const containers = pod.spec[list] ?? [];
    for (let index = 0; index < containers.length; index++) {
      const container = containers[index];
      const f: Found = { list, index, container };
      const role = roleOf(container.name, cfg);
      if (role === undefined) {
        const owner = RESERVED_NAMES.get(container.name);
        if (owner !== undefined) {
          out.impostors.push({
            ...f,
            problem: `the name is reserved for ${owner}'s containers, and meshgate guards mesh ${cfg.profile.name}`,
          });
        } else {
          out.apps.push(f);
        }
        continue;
      }
      const place = placeProblem(role, f);
      if (place) {
        out.impostors.push({ ...f, problem: place });
        continue;
      }
      if (
        role === 'proxy' &&
        cfg.profile.placeholderImage !== undefined &&
        container.image === cfg.profile.placeholderImage
      ) {
        out.pending = f;
        continue;
      }
      shared ??= around(pod, cfg);
      const r = verdicts.verdict(judged(pod, f, role, cfg, shared), (j) =>
        judgeRole(role, { ...f, container: j.container }, podViewOf(j), cfg),
      );
      if ('problem' in r) out.impostors.push({ ...f, problem: r.problem });
      else if ('settings' in r) out.init = { ...f, own: r.own, settings: r.settings };
      else if (role === 'proxy') out.proxy = { ...f, own: r.own, native: list === 'initContainers' };
      else out.validator = { ...f, own: r.own };
    }
  }
  return out;
}
