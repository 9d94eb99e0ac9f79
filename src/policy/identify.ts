/**
 * Which of a pod's containers are really the mesh's — judged by what they are, never by their names. A name the
 * meshes reserve (istio-proxy, linkerd-init, meshgate-validate, …) only says which role a container claims; it gets
 * that role when it is the real thing:
 * - meshgate's own containers equal the compiled templates (image, command, args, env, security context);
 * - the mesh's own containers (companion profiles) pass the profile's judge: recognised image repository, the
 *   capabilities and identity they need, arguments read the way their own parser reads them;
 * - anything else under a reserved name is an impostor, and the pod is refused with the reason.
 * Every other container — app, init or ephemeral — is an app container, judged by the app rules
 * (src/policy/rules.ts).
 */
import type { Compiled } from '../config/compile.ts';
import { RESERVED_NAMES } from '../mesh/index.ts';
import type { RedirectSettings, Role } from '../mesh/types.ts';
import { CONTAINER_LISTS, type Container, type ContainerList, type Pod } from '../pod/types.ts';
import { sameJson } from '../util/same.ts';
import type { DeepReadonly } from '../util/readonly.ts';
import { ownInitSettings } from './own-init.ts';

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
}

/**
 * A field as the apiserver stores it: it defaults `fieldRef.apiVersion` of env vars to "v1" before admission, and
 * again after every mutating webhook, so a template compares equal to the container it became.
 */
function stored(field: string, value: unknown): unknown {
  if (field !== 'env' || !Array.isArray(value)) return value;
  return value.map((e: { valueFrom?: { fieldRef?: { apiVersion?: string } } }) =>
    e?.valueFrom?.fieldRef && e.valueFrom.fieldRef.apiVersion === undefined
      ? { ...e, valueFrom: { ...e.valueFrom, fieldRef: { apiVersion: 'v1', ...e.valueFrom.fieldRef } } }
      : e,
  );
}

/** The first field in which a container differs from a template, as words; undefined when it matches. */
export function templateMismatch(
  c: Container,
  t: DeepReadonly<Container>,
  fields: readonly string[],
): string | undefined {
  for (const f of fields) {
    if (!sameJson(stored(f, c[f]), stored(f, t[f])))
      return `its ${f} ${JSON.stringify(c[f] ?? null)} differs from the configured ${JSON.stringify(t[f] ?? null)}`;
  }
  return undefined;
}

const TEMPLATE_FIELDS = ['image', 'command', 'args', 'env', 'securityContext'] as const;

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

function judgeProxy(f: Found, pod: Pod, cfg: Compiled): string | undefined {
  if (cfg.own) {
    const t = f.list === 'initContainers' ? cfg.own.proxyNative : cfg.own.proxy;
    return templateMismatch(f.container, t, [...TEMPLATE_FIELDS, 'restartPolicy']);
  }
  return cfg.profile.judgeProxy(f.container, pod, cfg.identity);
}

function judgeInit(f: Found, cfg: Compiled): { problem: string } | { settings: RedirectSettings; own: boolean } {
  if (cfg.own) {
    const problem = templateMismatch(f.container, cfg.own.init, ['image', 'command', 'args', 'securityContext']);
    if (problem) return { problem };
    const settings = ownInitSettings(f.container);
    return 'problem' in settings ? settings : { settings, own: true };
  }
  const r = cfg.profile.judgeInit(f.container, cfg.identity);
  return 'problem' in r ? r : { settings: r.settings, own: false };
}

/** meshgate's validator is accepted under every profile; a companion mesh's own validator too. */
function judgeValidator(f: Found, pod: Pod, cfg: Compiled): { problem: string } | { own: boolean } {
  const ownProblem = templateMismatch(f.container, cfg.validator, TEMPLATE_FIELDS);
  if (!ownProblem) return { own: true };
  if (cfg.own) return { problem: ownProblem };
  const theirs = cfg.profile.judgeValidator(f.container, pod, cfg.identity);
  if (!theirs) return { own: false };
  return { problem: `it is neither meshgate's validator (${ownProblem}) nor ${cfg.profile.title}'s own (${theirs})` };
}

export function identifyPod(pod: Pod, cfg: Compiled): PodMesh {
  const out: PodMesh = { impostors: [], apps: [] };
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
      if (role === 'proxy') {
        const problem = judgeProxy(f, pod, cfg);
        if (problem) out.impostors.push({ ...f, problem });
        else out.proxy = { ...f, own: !!cfg.own, native: list === 'initContainers' };
      } else if (role === 'init') {
        const r = judgeInit(f, cfg);
        if ('problem' in r) out.impostors.push({ ...f, problem: r.problem });
        else out.init = { ...f, own: r.own, settings: r.settings };
      } else {
        const r = judgeValidator(f, pod, cfg);
        if ('problem' in r) out.impostors.push({ ...f, problem: r.problem });
        else out.validator = { ...f, own: r.own };
      }
    }
  }
  return out;
}
