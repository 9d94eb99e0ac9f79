/**
 * The one parser of a pod, shared by the webhook (request.object / oldObject) and the CLI (pod templates in
 * manifests), so both refuse the same shapes with the same message. The apiserver only sends valid pods, but the
 * handlers are reachable by anything that can POST, manifests are hand-written, and every field meshgate reads or
 * patches must have the type it assumes — a `null` container or a string UID must be an error naming its path,
 * never an exception. What is checked is the pod's one declaration (src/contract/pod.ts, whose types are inferred
 * from it), compiled here once into a check per node; everything else a pod carries is kept as it is.
 *
 * The checks walk the declaration's field tables. Written out field by field they were 0.38 µs per corpus pod
 * against 0.87 µs for this walk: about 0.5 µs of the 60–200 µs of server CPU a review costs, inside what
 * `npm run bench -- --before` measures as the tree's noise (docs/benchmarks.md), so the declaration is what runs.
 */
import { isObject } from '../util/json.ts';
import { POD, type Pod } from '../contract/pod.ts';
import type { Field, Mapping, Shape } from '../contract/shape.ts';

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

const string: Check = (v, path) => (typeof v === 'string' ? undefined : expected(path, 'a string', v));
const nonEmptyString: Check = (v, path) =>
  typeof v === 'string' && v !== '' ? undefined : expected(path, 'a non-empty string', v);
const boolean: Check = (v, path) => (typeof v === 'boolean' ? undefined : expected(path, 'true or false', v));
const integer: Check = (v, path) => (Number.isInteger(v) ? undefined : expected(path, 'an integer', v));

const stringMap: Check = (v, path) => {
  if (!isObject(v)) return expected(path, 'a mapping', v);
  for (const key of Object.keys(v)) {
    const value = v[key];
    if (typeof value !== 'string')
      return expected(path === null ? null : `${path}[${JSON.stringify(key)}]`, 'a string', value);
  }
  return undefined;
};

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

/** Each field in the declaration's order; an optional field that is absent is skipped without a call. */
function mapping(shape: Mapping): Check {
  const entries = Object.entries(shape.fields);
  const keys = entries.map(([k]) => k);
  const checks = entries.map(([, f]) => compile(fieldShape(f)));
  const required = entries.map(([, f]) => !('optional' in f));
  const what = shape.what ?? 'a mapping';
  return (v, path) => {
    if (!isObject(v)) return expected(path, what, v);
    for (let i = 0; i < keys.length; i++) {
      const value = v[keys[i]];
      if (value === undefined && !required[i]) continue;
      const problem = checks[i](value, member(path, keys[i]));
      if (problem) return problem;
    }
    return undefined;
  };
}

const fieldShape = (f: Field): Shape => ('optional' in f ? f.optional : f);

function compile(shape: Shape): Check {
  switch (shape.kind) {
    case 'string':
      return string;
    case 'nonEmptyString':
      return nonEmptyString;
    case 'boolean':
      return boolean;
    case 'integer':
      return integer;
    case 'stringMap':
      return stringMap;
    case 'list':
      return listOf(compile(shape.item));
    case 'mapping':
      return mapping(shape);
  }
}

const pod = compile(POD);

/** `where` prefixes the paths in messages (`request.object`, `Deployment web: spec.template`). */
export function parsePod(value: unknown, where = 'pod'): ParsedPod {
  // The second pass meets the same first problem (the checks are pure) and names its path.
  const error = pod(value, null) === undefined ? undefined : pod(value, where);
  return error === undefined ? { ok: true, pod: value as Pod } : { ok: false, error };
}
