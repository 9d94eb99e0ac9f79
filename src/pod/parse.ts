/**
 * The one parser of a pod, shared by the webhook (request.object / oldObject) and the CLI (pod templates in
 * manifests), so both refuse the same shapes with the same message. The apiserver only sends valid pods, but the
 * handlers are reachable by anything that can POST, manifests are hand-written, and every field meshgate reads or
 * patches must have the type it assumes — a `null` container or a string UID must be an error naming its path,
 * never an exception. One pass over the fields meshgate uses; everything else is kept as it is.
 *
 * What is checked, in the order the first problem is reported:
 *   metadata?: { labels?: {string: string}, annotations?: {string: string} }
 *   spec: {
 *     containers: [container], initContainers?: [container], ephemeralContainers?: [container],
 *     volumes?: [{ name: string }], nodeName?: string, hostNetwork?: boolean,
 *     securityContext?: { runAsUser?: int, runAsGroup?: int, fsGroup?: int, supplementalGroups?: [int] },
 *     imagePullSecrets?: [{ name?: string }],
 *     affinity?: { nodeAffinity?: { requiredDuringSchedulingIgnoredDuringExecution?: { nodeSelectorTerms?: [
 *       { matchExpressions?: [requirement], matchFields?: [requirement] } ] } } }
 *   }
 *   container: { name: non-empty string, image?: string, command?: [string], args?: [string],
 *     env?: [{ name: string, value?: string }], restartPolicy?: string, securityContext?: { runAsUser?: int,
 *     runAsGroup?: int, runAsNonRoot?: bool, privileged?: bool, allowPrivilegeEscalation?: bool,
 *     capabilities?: { add?: [string], drop?: [string] } } }
 *   requirement: { key: string, operator: string, values?: [string] }
 *
 * Written out field by field, each read by its name: a pod is parsed on every review, and a generic walk over a
 * table of keys (`v[key]` for each) cost over twice as much (0.87 vs 0.38 µs per corpus pod). The table form is kept
 * in the tests as the reference this must agree with (test/pod/parse-reference.test.ts).
 */
import { isObject } from '../util/json.ts';
import type { Pod } from '../contract/pod.ts';

export type ParsedPod = { ok: true; pod: Pod } | { ok: false; error: string };

/**
 * A check returns the problem with `v`, or undefined. `path` is null on the first pass, which only asks whether there
 * is a problem (FAILED) and builds no path strings: a review's pod has dozens of fields, and naming each one costs
 * more than checking it. Only a pod that fails is checked again with paths, to name where (parsePod).
 */
type Path = string | null;
type Problem = string | undefined;
type Check = (v: unknown, path: Path) => Problem;

const FAILED = 'failed';
const kindOf = (v: unknown) =>
  v === null ? 'null' : Array.isArray(v) ? 'a list' : typeof v === 'object' ? 'a mapping' : JSON.stringify(v);
const expected = (path: Path, what: string, v: unknown) =>
  path === null ? FAILED : `${path}: expected ${what}, got ${kindOf(v)}`;
const member = (path: Path, key: string) => (path === null ? null : `${path}.${key}`);
const item = (path: Path, i: number) => (path === null ? null : `${path}[${i}]`);

const string = (v: unknown, path: Path): Problem => (typeof v === 'string' ? undefined : expected(path, 'a string', v));
const boolean = (v: unknown, path: Path): Problem =>
  typeof v === 'boolean' ? undefined : expected(path, 'true or false', v);
const integer = (v: unknown, path: Path): Problem =>
  Number.isInteger(v) ? undefined : expected(path, 'an integer', v);

/** The problem with member `key` (value `x`) by `check`, or undefined when it is absent: an optional member. */
const optional = (x: unknown, path: Path, key: string, check: Check): Problem =>
  x === undefined ? undefined : check(x, member(path, key));

/** A list whose every item passes `check`. */
function list(v: unknown, path: Path, check: Check): Problem {
  if (!Array.isArray(v)) return expected(path, 'a list', v);
  for (let i = 0; i < v.length; i++) {
    const problem = check(v[i], item(path, i));
    if (problem) return problem;
  }
  return undefined;
}

function strings(v: unknown, path: Path): Problem {
  return list(v, path, string);
}

function integers(v: unknown, path: Path): Problem {
  return list(v, path, integer);
}

/** labels and annotations: the apiserver guarantees string values; anything else is named, never coerced. */
function stringMap(v: unknown, path: Path): Problem {
  if (!isObject(v)) return expected(path, 'a mapping', v);
  for (const key of Object.keys(v)) {
    const value = v[key];
    if (typeof value !== 'string')
      return expected(path === null ? null : `${path}[${JSON.stringify(key)}]`, 'a string', value);
  }
  return undefined;
}

function capabilities(v: unknown, path: Path): Problem {
  if (!isObject(v)) return expected(path, 'a mapping', v);
  return optional(v.add, path, 'add', strings) ?? optional(v.drop, path, 'drop', strings);
}

function containerSecurity(v: unknown, path: Path): Problem {
  if (!isObject(v)) return expected(path, 'a mapping', v);
  return (
    optional(v.runAsUser, path, 'runAsUser', integer) ??
    optional(v.runAsGroup, path, 'runAsGroup', integer) ??
    optional(v.runAsNonRoot, path, 'runAsNonRoot', boolean) ??
    optional(v.privileged, path, 'privileged', boolean) ??
    optional(v.allowPrivilegeEscalation, path, 'allowPrivilegeEscalation', boolean) ??
    optional(v.capabilities, path, 'capabilities', capabilities)
  );
}

function envVar(v: unknown, path: Path): Problem {
  if (!isObject(v)) return expected(path, 'a mapping', v);
  return string(v.name, member(path, 'name')) ?? optional(v.value, path, 'value', string);
}

function envVars(v: unknown, path: Path): Problem {
  return list(v, path, envVar);
}

function container(v: unknown, path: Path): Problem {
  if (!isObject(v)) return expected(path, 'a container (a mapping)', v);
  if (typeof v.name !== 'string' || v.name === '') return expected(member(path, 'name'), 'a non-empty string', v.name);
  return (
    optional(v.image, path, 'image', string) ??
    optional(v.command, path, 'command', strings) ??
    optional(v.args, path, 'args', strings) ??
    optional(v.env, path, 'env', envVars) ??
    optional(v.restartPolicy, path, 'restartPolicy', string) ??
    optional(v.securityContext, path, 'securityContext', containerSecurity)
  );
}

function containers(v: unknown, path: Path): Problem {
  return list(v, path, container);
}

function volume(v: unknown, path: Path): Problem {
  return isObject(v) ? string(v.name, member(path, 'name')) : expected(path, 'a mapping', v);
}

function volumes(v: unknown, path: Path): Problem {
  return list(v, path, volume);
}

/** A LocalObjectReference: Kubernetes defaults a missing name to "" (no Secret), so it may be absent. */
function pullSecret(v: unknown, path: Path): Problem {
  return isObject(v) ? optional(v.name, path, 'name', string) : expected(path, 'a mapping', v);
}

function pullSecrets(v: unknown, path: Path): Problem {
  return list(v, path, pullSecret);
}

function podSecurity(v: unknown, path: Path): Problem {
  if (!isObject(v)) return expected(path, 'a mapping', v);
  return (
    optional(v.runAsUser, path, 'runAsUser', integer) ??
    optional(v.runAsGroup, path, 'runAsGroup', integer) ??
    optional(v.fsGroup, path, 'fsGroup', integer) ??
    optional(v.supplementalGroups, path, 'supplementalGroups', integers)
  );
}

function requirement(v: unknown, path: Path): Problem {
  if (!isObject(v)) return expected(path, 'a mapping', v);
  return (
    string(v.key, member(path, 'key')) ??
    string(v.operator, member(path, 'operator')) ??
    optional(v.values, path, 'values', strings)
  );
}

function requirements(v: unknown, path: Path): Problem {
  return list(v, path, requirement);
}

function selectorTerm(v: unknown, path: Path): Problem {
  if (!isObject(v)) return expected(path, 'a mapping', v);
  return (
    optional(v.matchExpressions, path, 'matchExpressions', requirements) ??
    optional(v.matchFields, path, 'matchFields', requirements)
  );
}

function selectorTerms(v: unknown, path: Path): Problem {
  return list(v, path, selectorTerm);
}

function affinity(v: unknown, path: Path): Problem {
  if (!isObject(v)) return expected(path, 'a mapping', v);
  const nodeAffinity = v.nodeAffinity;
  if (nodeAffinity === undefined) return undefined;
  const nodePath = member(path, 'nodeAffinity');
  if (!isObject(nodeAffinity)) return expected(nodePath, 'a mapping', nodeAffinity);
  const required = nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution;
  if (required === undefined) return undefined;
  const requiredPath = member(nodePath, 'requiredDuringSchedulingIgnoredDuringExecution');
  if (!isObject(required)) return expected(requiredPath, 'a mapping', required);
  const terms = required.nodeSelectorTerms;
  return terms === undefined ? undefined : selectorTerms(terms, member(requiredPath, 'nodeSelectorTerms'));
}

function spec(v: unknown, path: Path): Problem {
  if (!isObject(v)) return expected(path, 'a mapping', v);
  return (
    containers(v.containers, member(path, 'containers')) ??
    optional(v.initContainers, path, 'initContainers', containers) ??
    optional(v.ephemeralContainers, path, 'ephemeralContainers', containers) ??
    optional(v.volumes, path, 'volumes', volumes) ??
    optional(v.nodeName, path, 'nodeName', string) ??
    optional(v.hostNetwork, path, 'hostNetwork', boolean) ??
    optional(v.securityContext, path, 'securityContext', podSecurity) ??
    optional(v.imagePullSecrets, path, 'imagePullSecrets', pullSecrets) ??
    optional(v.affinity, path, 'affinity', affinity)
  );
}

function metadata(v: unknown, path: Path): Problem {
  if (!isObject(v)) return expected(path, 'a mapping', v);
  return optional(v.labels, path, 'labels', stringMap) ?? optional(v.annotations, path, 'annotations', stringMap);
}

function pod(v: unknown, path: Path): Problem {
  if (!isObject(v)) return expected(path, 'a mapping', v);
  return optional(v.metadata, path, 'metadata', metadata) ?? spec(v.spec, member(path, 'spec'));
}

/** `where` prefixes the paths in messages (`request.object`, `Deployment web: spec.template`). */
export function parsePod(value: unknown, where = 'pod'): ParsedPod {
  // The second pass meets the same first problem (the checks are pure) and names its path.
  const error = pod(value, null) === undefined ? undefined : pod(value, where);
  return error === undefined ? { ok: true, pod: value as Pod } : { ok: false, error };
}
