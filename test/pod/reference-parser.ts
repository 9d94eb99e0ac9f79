/**
 * The pod parser as a table (the form src/pod/parse.ts had until it was written out field by field for speed): each
 * mapping lists its fields and their checks, walked generically. Kept as the reference the written-out parser must
 * agree with, message for message (test/pod/parse-reference.test.ts): the table is easy to read against the
 * Kubernetes types, the written-out form is what runs.
 */
import { isObject } from '../../src/util/json.ts';
import type { Pod } from '../../src/contract/pod.ts';

export type ParsedPod = { ok: true; pod: Pod } | { ok: false; error: string };

/**
 * A check returns the problem with `v`, or undefined. `path` is null on the first pass, which only asks whether there
 * is a problem (FAILED) and builds no path strings: a review's pod has dozens of fields, and naming each one costs
 * more than checking it. Only a pod that fails is checked again with paths, to name where (parsePod).
 */
type Check = (v: unknown, path: string | null) => string | undefined;

const FAILED = 'failed';
const kindOf = (v: unknown) =>
  v === null ? 'null' : Array.isArray(v) ? 'a list' : typeof v === 'object' ? 'a mapping' : JSON.stringify(v);
const expected = (path: string | null, what: string, v: unknown) =>
  path === null ? FAILED : `${path}: expected ${what}, got ${kindOf(v)}`;
const member = (path: string | null, key: string) => (path === null ? null : `${path}.${key}`);
const item = (path: string | null, i: number) => (path === null ? null : `${path}[${i}]`);

/** A mapping's member that may be absent: mapping() skips it when undefined, without a call per absent field. */
interface Optional {
  optional: Check;
}
const optional = (check: Check): Optional => ({ optional: check });

const string: Check = (v, path) => (typeof v === 'string' ? undefined : expected(path, 'a string', v));
const boolean: Check = (v, path) => (typeof v === 'boolean' ? undefined : expected(path, 'true or false', v));
const integer: Check = (v, path) => (Number.isInteger(v) ? undefined : expected(path, 'an integer', v));

function listOf(check: Check): Check {
  return (v, path) => {
    if (!Array.isArray(v)) return expected(path, 'a list', v);
    for (let i = 0; i < v.length; i++) {
      const problem = check(v[i], item(path, i));
      if (problem) return problem;
    }
    return undefined;
  };
}

function mapping(fields: Record<string, Check | Optional>): Check {
  const keys = Object.keys(fields);
  const checks = keys.map((k) => {
    const f = fields[k];
    return typeof f === 'function' ? f : f.optional;
  });
  const required = keys.map((k) => typeof fields[k] === 'function');
  return (v, path) => {
    if (!isObject(v)) return expected(path, 'a mapping', v);
    for (let i = 0; i < keys.length; i++) {
      const value = v[keys[i]];
      if (value === undefined && !required[i]) continue;
      const problem = checks[i](value, member(path, keys[i]));
      if (problem) return problem;
    }
    return undefined;
  };
}

/** labels and annotations: the apiserver guarantees string values; anything else is named, never coerced. */
const stringMap: Check = (v, path) => {
  if (!isObject(v)) return expected(path, 'a mapping', v);
  for (const key of Object.keys(v)) {
    const value = v[key];
    if (typeof value !== 'string')
      return expected(path === null ? null : `${path}[${JSON.stringify(key)}]`, 'a string', value);
  }
  return undefined;
};

const securityContext = optional(
  mapping({
    runAsUser: optional(integer),
    runAsGroup: optional(integer),
    runAsNonRoot: optional(boolean),
    privileged: optional(boolean),
    allowPrivilegeEscalation: optional(boolean),
    capabilities: optional(mapping({ add: optional(listOf(string)), drop: optional(listOf(string)) })),
  }),
);

const containerFields = mapping({
  image: optional(string),
  command: optional(listOf(string)),
  args: optional(listOf(string)),
  env: optional(listOf(mapping({ name: string, value: optional(string) }))),
  restartPolicy: optional(string),
  securityContext,
});

const container: Check = (v, path) => {
  if (!isObject(v)) return expected(path, 'a container (a mapping)', v);
  if (typeof v.name !== 'string' || v.name === '') return expected(member(path, 'name'), 'a non-empty string', v.name);
  return containerFields(v, path);
};

const requirements = optional(listOf(mapping({ key: string, operator: string, values: optional(listOf(string)) })));

const podSpec = mapping({
  containers: listOf(container),
  initContainers: optional(listOf(container)),
  ephemeralContainers: optional(listOf(container)),
  volumes: optional(listOf(mapping({ name: string }))),
  nodeName: optional(string),
  hostNetwork: optional(boolean),
  securityContext: optional(
    mapping({
      runAsUser: optional(integer),
      runAsGroup: optional(integer),
      fsGroup: optional(integer),
      supplementalGroups: optional(listOf(integer)),
    }),
  ),
  imagePullSecrets: optional(listOf(mapping({ name: optional(string) }))),
  affinity: optional(
    mapping({
      nodeAffinity: optional(
        mapping({
          requiredDuringSchedulingIgnoredDuringExecution: optional(
            mapping({
              nodeSelectorTerms: optional(
                listOf(mapping({ matchExpressions: requirements, matchFields: requirements })),
              ),
            }),
          ),
        }),
      ),
    }),
  ),
});

const pod = mapping({
  metadata: optional(mapping({ labels: optional(stringMap), annotations: optional(stringMap) })),
  spec: podSpec,
});

/** `where` prefixes the paths in messages (`request.object`, `Deployment web: spec.template`). */
export function referenceParsePod(value: unknown, where = 'pod'): ParsedPod {
  // The second pass meets the same first problem (the checks are pure) and names its path.
  return pod(value, null) === undefined ? { ok: true, pod: value as Pod } : { ok: false, error: pod(value, where)! };
}
