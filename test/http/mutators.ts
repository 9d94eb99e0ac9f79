/**
 * Seeded mutations of AdmissionReviews for the fuzz test. mulberry32 keeps every run identical, so a failing
 * case is reproduced by its index alone. Mutations work on the parsed review (delete keys, swap in values of
 * the wrong type, hit the fields the handlers read) and on its JSON text (truncate, flip bytes, prototype keys,
 * deep nesting), plus the odd wrong content type and oversized body.
 */
import { BODY_LIMIT } from '../../src/server/app.ts';
import type { Review } from './helpers.ts';
import { mulberry32, type Rng } from '../support/random.ts';

export { mulberry32, type Rng };

const int = (rng: Rng, n: number): number => Math.floor(rng() * n);
const pick = <T>(rng: Rng, xs: readonly T[]): T => xs[int(rng, xs.length)];

export interface FuzzCase {
  label: string;
  payload: string | Buffer;
  /** undefined: no content-type header at all. */
  contentType: string | undefined;
}

const KEYS: readonly string[] = [
  'containers',
  'initContainers',
  'metadata',
  'annotations',
  'labels',
  'meshgate.io/status',
  'meshgate.io/inject',
  'nodeName',
  'hostNetwork',
  'affinity',
  'nodeAffinity',
  'spec',
  'uid',
  'operation',
  'subResource',
  'kind',
  'resource',
  'object',
  'name',
  'namespace',
  'target',
  'toString',
  'hasOwnProperty',
  'valueOf',
  'length',
  '',
];

const STRINGS = [
  '',
  'x',
  'CREATE',
  'UPDATE',
  'pods',
  'binding',
  'true',
  'false',
  'enabled',
  '0',
  '-1',
  '../..',
  '~1/~0',
  '/spec',
  'meshgate-proxy',
  'istio-proxy',
  'istio-init',
  'meshgate-init',
  'n1',
  'n2',
  'kube-system',
  'meshgate',
  '\u0000',
  '☃\ud83d\ude00',
  '{"containers":["meshgate-proxy"]}',
  '{',
  'null',
  '100m',
  '65536',
  '10.0.0.0/8,::/0',
  '1,2,99999',
] as const;

/** [a, [b, ...]] nested `depth` deep, built without recursion. */
function nested(depth: number): unknown {
  let v: unknown = 'bottom';
  for (let i = 0; i < depth; i++) v = i % 2 ? [v] : { n: v };
  return v;
}

export function randomValue(rng: Rng, depth = 0): unknown {
  switch (int(rng, 12)) {
    case 0:
      return null;
    case 1:
      return rng() < 0.5;
    case 2:
      return pick(rng, [0, -1, 1.5, 1e308, -0, 2 ** 53 + 1, 65536]);
    case 3:
    case 4:
      return pick(rng, STRINGS);
    case 5:
      return 'y'.repeat(rng() < 0.9 ? 1 + int(rng, 2000) : 100_000 + int(rng, 200_000));
    case 6:
      return [];
    case 7:
      return {};
    case 8:
      return depth < 3 ? Array.from({ length: 1 + int(rng, 3) }, () => randomValue(rng, depth + 1)) : [];
    case 9:
      return depth < 3 ? { [pick(rng, KEYS)]: randomValue(rng, depth + 1) } : {};
    case 10:
      return nested(1 + int(rng, 1500));
    default:
      return { name: randomValue(rng, 3), image: randomValue(rng, 3) };
  }
}

type Container = Record<string | number, unknown>;
type Path = Array<string | number>;

/** Every path into the value (depth-first, containers included), so a random one can be picked. */
function paths(root: unknown): Path[] {
  const out: Path[] = [];
  const stack: Array<[unknown, Path]> = [[root, []]];
  while (stack.length > 0) {
    const [v, p] = stack.pop()!;
    if (p.length > 0) out.push(p);
    if (typeof v !== 'object' || v === null || p.length > 12) continue;
    for (const k of Object.keys(v)) stack.push([(v as Container)[k], [...p, Array.isArray(v) ? Number(k) : k]]);
  }
  return out;
}

function parentOf(root: unknown, p: Path): Container | undefined {
  let v = root;
  for (const k of p.slice(0, -1)) {
    if (typeof v !== 'object' || v === null) return undefined;
    v = (v as Container)[k];
  }
  return typeof v === 'object' && v !== null ? (v as Container) : undefined;
}

const TERMS = [
  'request',
  'object',
  'spec',
  'affinity',
  'nodeAffinity',
  'requiredDuringSchedulingIgnoredDuringExecution',
  'nodeSelectorTerms',
];

/** Fields the handlers and the decision core read, hit directly more often than a random walk would. */
const TARGETS: Path[] = [
  ['request', 'object'],
  ['request', 'object', 'spec'],
  ['request', 'object', 'spec', 'containers'],
  ['request', 'object', 'spec', 'containers', 0],
  ['request', 'object', 'spec', 'containers', 0, 'name'],
  ['request', 'object', 'spec', 'initContainers'],
  ['request', 'object', 'spec', 'nodeName'],
  ['request', 'object', 'spec', 'hostNetwork'],
  ['request', 'object', 'spec', 'affinity'],
  ['request', 'object', 'spec', 'affinity', 'nodeAffinity'],
  [...TERMS],
  [...TERMS, 0],
  [...TERMS, 0, 'matchFields'],
  [...TERMS, 0, 'matchFields', 0],
  [...TERMS, 0, 'matchFields', 0, 'values'],
  [...TERMS, 0, 'matchExpressions', 0],
  ['request', 'object', 'spec', 'volumes'],
  ['request', 'object', 'spec', 'nodeSelector'],
  ['request', 'object', 'metadata'],
  ['request', 'object', 'metadata', 'annotations'],
  ['request', 'object', 'metadata', 'labels'],
  ['request', 'object', 'metadata', 'annotations', 'meshgate.io/status'],
  ['request', 'object', 'metadata', 'labels', 'meshgate.io/inject'],
  ['request', 'object', 'metadata', 'name'],
  ['request', 'object', 'target'],
  ['request', 'object', 'target', 'name'],
  ['request', 'subResource'],
  ['request', 'namespace'],
  ['request', 'name'],
  ['request', 'operation'],
  ['request', 'resource'],
  ['request', 'resource', 'resource'],
  ['request', 'resource', 'group'],
  ['request', 'kind'],
  ['request', 'dryRun'],
  ['request', 'uid'],
  ['request'],
  ['apiVersion'],
  ['kind'],
];

function setPath(root: Container, p: Path, value: unknown): void {
  let v: Container = root;
  for (let i = 0; i < p.length - 1; i++) {
    if (typeof v[p[i]] !== 'object' || v[p[i]] === null) v[p[i]] = typeof p[i + 1] === 'number' ? [] : {};
    v = v[p[i]] as Container;
  }
  v[p[p.length - 1]] = value;
}

/** `all` is computed once per case; after an earlier mutation some entries may be stale, which is harmless. */
function mutateTree(rng: Rng, review: Container, all: Path[]): string {
  const kind = int(rng, 5);
  if (kind === 0) {
    const p = pick(rng, all);
    const parent = parentOf(review, p);
    if (Array.isArray(parent)) parent.splice(p[p.length - 1] as number, 1);
    else if (parent) delete parent[p[p.length - 1]];
    return `delete ${p.join('.')}`;
  }
  if (kind === 1) {
    const p = pick(rng, all);
    const parent = parentOf(review, p);
    if (parent) parent[p[p.length - 1]] = randomValue(rng);
    return `replace ${p.join('.')}`;
  }
  if (kind === 2) {
    const p = pick(rng, all);
    const parent = parentOf(review, p);
    // Sometimes an own "__proto__" or "constructor" key (as JSON.parse makes them): fastify must refuse those.
    const poison = rng() < 0.2;
    const key = poison ? pick(rng, ['__proto__', 'constructor']) : pick(rng, KEYS);
    const value = poison
      ? key === '__proto__'
        ? { polluted: true }
        : { prototype: { polluted: true } }
      : randomValue(rng);
    if (parent && !Array.isArray(parent))
      Object.defineProperty(parent, key, { value, enumerable: true, writable: true, configurable: true });
    return `add key ${key} at ${p.join('.')}`;
  }
  const p = pick(rng, TARGETS);
  if (kind === 3) {
    setPath(review, p, randomValue(rng));
    return `target ${p.join('.')}`;
  }
  const parent = parentOf(review, p);
  if (parent) delete parent[p[p.length - 1]];
  return `target delete ${p.join('.')}`;
}

function mutateText(rng: Rng, text: string): [string, string | Buffer] {
  switch (int(rng, 7)) {
    case 0: {
      const at = int(rng, text.length);
      return [`truncate at ${at}`, text.slice(0, at)];
    }
    case 1: {
      const buf = Buffer.from(text);
      const n = 1 + int(rng, 8);
      for (let i = 0; i < n; i++) buf[int(rng, buf.length)] = int(rng, 256);
      return [`flip ${n} bytes`, buf];
    }
    case 2: {
      const opens = [...text.matchAll(/\{/g)].map((m) => m.index);
      const at = pick(rng, opens);
      return [`__proto__ at ${at}`, `${text.slice(0, at + 1)}"__proto__":{"polluted":true},${text.slice(at + 1)}`];
    }
    case 3:
      return ['random bytes', Buffer.from(Array.from({ length: int(rng, 4096) }, () => int(rng, 256)))];
    case 4: {
      const depth = 1 + int(rng, 10_000);
      return [
        `deep nesting ${depth}`,
        text.replace(/"kind":/, `"deep":${'['.repeat(depth)}${']'.repeat(depth)},"kind":`),
      ];
    }
    case 5:
      return ['BOM and whitespace', `\ufeff \n\t${text}\n `];
    default:
      return ['trailing junk', `${text}${pick(rng, ['}', ',', ' x', '\u0000', '{}'])}`];
  }
}

/** Bases as JSON text: parsing a copy is several times cheaper than structuredClone for thousands of cases. */
const texts = new WeakMap<Review, string>();

/** One malformed or mutated review, derived from `base` (which is not modified). */
export function fuzzCase(rng: Rng, base: Review): FuzzCase {
  if (!texts.has(base)) texts.set(base, JSON.stringify(base));
  const review = JSON.parse(texts.get(base)!) as Container;
  const labels: string[] = [];
  let contentType: string | undefined = 'application/json';
  const roll = rng();
  if (roll < 0.02)
    contentType = pick(rng, [
      undefined,
      'text/plain',
      'application/xml',
      'application/json-patch+json',
      'multipart/form-data',
    ]);
  else if (roll < 0.025) {
    const text = JSON.stringify(review);
    return { label: 'oversized', payload: `${text.slice(0, -1)},"pad":"${'z'.repeat(BODY_LIMIT)}"}`, contentType };
  }
  const treeMutations = rng() < 0.85 ? 1 + int(rng, 4) : 0;
  const all = treeMutations > 0 ? paths(review) : [];
  for (let i = 0; i < treeMutations; i++) labels.push(mutateTree(rng, review, all));
  let payload: string | Buffer = JSON.stringify(review);
  if (treeMutations === 0 || rng() < 0.15) {
    const [label, text] = mutateText(rng, payload);
    labels.push(label);
    payload = text;
  }
  return { label: labels.join('; ') || 'unchanged', payload, contentType };
}
