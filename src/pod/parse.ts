/**
 * The one parser of a pod, shared by the webhook (request.object / oldObject) and the CLI (pod templates in
 * manifests), so both refuse the same shapes with the same message. The apiserver only sends valid pods, but the
 * handlers are reachable by anything that can POST, manifests are hand-written, and every field meshgate reads or
 * patches must have the type it assumes — a `null` container or a string UID must be an error naming its path,
 * never an exception. What is checked is the pod's one declaration (src/contract/pod.ts, in the shape language of
 * src/contract/shape.ts, whose types are inferred from it), compiled here once into a check per node; everything else
 * a pod carries is kept as it is.
 *
 * The checks walk the declaration's nodes. Written out field by field they were 0.38 µs per corpus pod
 * against 0.87 µs for this walk: about 0.5 µs of the 60–200 µs of server CPU a review costs, inside what
 * `npm run bench -- --before` measures as the tree's noise (docs/benchmarks.md), so the declaration is what runs.
 */
import { isObject } from '../util/json.ts';
import { POD, type Pod } from '../contract/pod.ts';
import type { SchemaNode } from '../contract/shape.ts';

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
function mapping(node: SchemaNode, properties: Readonly<Record<string, SchemaNode>>): Check {
  const keys = Object.keys(properties);
  const checks = keys.map((k) => compile(properties[k]));
  const required = keys.map((k) => node.required?.includes(k) === true);
  const what = typeof node.what === 'string' ? node.what : 'a mapping';
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

/**
 * The keywords this parser checks, each with the values it checks them for: a declaration that says more than this
 * (a pattern, a range, a closed mapping) is refused when the module loads, never silently not checked.
 */
const CHECKED: Readonly<Record<string, (node: SchemaNode) => boolean>> = {
  type: (n) => ['string', 'boolean', 'integer', 'array', 'object'].includes(n.type as string),
  minLength: (n) => n.type === 'string' && n.minLength === 1,
  items: (n) => n.type === 'array',
  properties: (n) => n.type === 'object' && n.additionalProperties === undefined,
  required: (n) => n.properties !== undefined,
  additionalProperties: (n) => isStringMap(n),
  what: (n) => n.properties !== undefined,
  description: () => true,
};

/** labels and annotations: a mapping of strings. */
const isStringMap = (n: SchemaNode) =>
  n.type === 'object' &&
  n.properties === undefined &&
  isObject(n.additionalProperties) &&
  Object.keys(n.additionalProperties).length === 1 &&
  n.additionalProperties.type === 'string';

function compile(node: SchemaNode): Check {
  for (const keyword of Object.keys(node))
    if (!Object.hasOwn(CHECKED, keyword) || !CHECKED[keyword](node))
      throw new Error(`src/pod/parse.ts does not check ${keyword} as ${JSON.stringify(node)} declares it`);
  switch (node.type) {
    case 'string':
      return node.minLength === 1 ? nonEmptyString : string;
    case 'boolean':
      return boolean;
    case 'integer':
      return integer;
    case 'array':
      if (node.items) return listOf(compile(node.items));
      break;
    case 'object':
      if (isStringMap(node)) return stringMap;
      if (node.properties) return mapping(node, node.properties);
  }
  throw new Error(`src/pod/parse.ts cannot check ${JSON.stringify(node)}`);
}

/**
 * The check of a declaration, compiled once: the first problem of a value, its path prefixed with `where`, or
 * undefined. Throws when the declaration says what this parser does not check.
 */
export function compileShape(node: SchemaNode): (value: unknown, where: string) => string | undefined {
  const check = compile(node);
  // The second pass meets the same first problem (the checks are pure) and names its path.
  return (value, where) => (check(value, null) === undefined ? undefined : check(value, where));
}

const pod = compileShape(POD);

/** `where` prefixes the paths in messages (`request.object`, `Deployment web: spec.template`). */
export function parsePod(value: unknown, where = 'pod'): ParsedPod {
  const error = pod(value, where);
  return error === undefined ? { ok: true, pod: value as Pod } : { ok: false, error };
}
