/**
 * The pod parser (src/pod/parse.ts) walks the pod's one declaration (src/contract/pod.ts). On every corpus pod, and on
 * seeded mutations of them that put values of every wrong type at the fields the declaration lists (and anywhere
 * else): a corpus pod is accepted as it is; a refusal names a field the declaration lists and the kind of value
 * really found there.
 */
import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { parsePod } from '../../src/pod/parse.ts';
import { POD } from '../../src/contract/pod.ts';
import type { SchemaNode } from '../../src/contract/shape.ts';
import { mulberry32, type Rng } from '../http/mutators.ts';

import { corpusTemplatePods } from '../support/corpus.ts';

const admission = new URL('../../../shared/corpus/admission/', import.meta.url);

function corpusPods(): unknown[] {
  const pods: unknown[] = [];
  for (const file of readdirSync(admission).filter((f) => f.endsWith('.json'))) {
    const review = JSON.parse(readFileSync(new URL(file, admission), 'utf8')) as {
      request?: { object?: unknown; oldObject?: unknown };
    };
    for (const o of [review.request?.object, review.request?.oldObject]) if (o) pods.push(o);
  }
  pods.push(...corpusTemplatePods());
  return pods;
}

/** Every key either parser reads, so that mutations land on them far more often than chance would. */
const KEYS = [
  'metadata',
  'labels',
  'annotations',
  'spec',
  'containers',
  'initContainers',
  'ephemeralContainers',
  'volumes',
  'nodeName',
  'hostNetwork',
  'securityContext',
  'runAsUser',
  'runAsGroup',
  'fsGroup',
  'supplementalGroups',
  'imagePullSecrets',
  'affinity',
  'nodeAffinity',
  'requiredDuringSchedulingIgnoredDuringExecution',
  'nodeSelectorTerms',
  'matchExpressions',
  'matchFields',
  'key',
  'operator',
  'values',
  'name',
  'image',
  'command',
  'args',
  'env',
  'value',
  'restartPolicy',
  'runAsNonRoot',
  'privileged',
  'allowPrivilegeEscalation',
  'capabilities',
  'add',
  'drop',
  'other',
];

const WRONG: readonly unknown[] = [null, '', 'x', 0, 7, 1.5, -1, true, false, [], [null], ['a'], [1], {}, { a: 1 }];

const int = (rng: Rng, n: number) => Math.floor(rng() * n);
const pick = <T>(rng: Rng, xs: readonly T[]): T => xs[int(rng, xs.length)];

/** Every object and list inside `v` (v included). */
function containersOf(v: unknown, out: Array<Record<string, unknown> | unknown[]> = []) {
  if (typeof v !== 'object' || v === null) return out;
  out.push(v as Record<string, unknown>);
  for (const x of Array.isArray(v) ? v : Object.values(v)) containersOf(x, out);
  return out;
}

/** One to three changes: a member or item replaced by a wrong value, deleted, or a read key added with one. */
function mutate(pod: unknown, rng: Rng): unknown {
  const copy = structuredClone(pod);
  for (let n = 1 + int(rng, 3); n > 0; n--) {
    const target = pick(rng, containersOf(copy));
    const value = structuredClone(pick(rng, WRONG));
    if (Array.isArray(target)) {
      if (target.length === 0 || rng() < 0.3) target.push(value);
      else target[int(rng, target.length)] = value;
      continue;
    }
    const keys = Object.keys(target);
    const r = rng();
    if (keys.length > 0 && r < 0.15) delete target[pick(rng, keys)];
    else if (keys.length > 0 && r < 0.6) target[pick(rng, keys)] = value;
    else target[pick(rng, KEYS)] = value;
  }
  return copy;
}

/** `.key`, `[3]` and `["key"]` segments of a message's path, after its `where` prefix. */
function segments(path: string): Array<string | number> {
  const out: Array<string | number> = [];
  for (const m of path.matchAll(/\.([^.[]+)|\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]/g))
    out.push(m[1] ?? (m[2] !== undefined ? Number(m[2]) : (JSON.parse(m[3]) as string)));
  return out;
}

/** The declaration's node at `path` (a stringMap's member is its value kind), or undefined: not declared there. */
function declared(path: Array<string | number>): SchemaNode | undefined {
  let node: SchemaNode = POD;
  for (const seg of path) {
    if (node.type === 'array' && typeof seg === 'number' && node.items) node = node.items;
    else if (node.properties && typeof seg === 'string' && Object.hasOwn(node.properties, seg))
      node = node.properties[seg];
    else if (node.type === 'object' && typeof seg === 'string' && typeof node.additionalProperties === 'object')
      node = node.additionalProperties as SchemaNode;
    else return undefined;
  }
  return node;
}

const kindOf = (v: unknown): string =>
  v === null ? 'null' : Array.isArray(v) ? 'a list' : typeof v === 'object' ? 'a mapping' : String(JSON.stringify(v));

/** A refusal must name a declared field and the kind of value really there; returns the message, or undefined. */
function checkRefusal(pod: unknown, label: string): string | undefined {
  const got = parsePod(pod, 'request.object');
  if (got.ok) {
    expect(got.pod).toBe(pod);
    return undefined;
  }
  const m = /^request\.object(.*): expected (.+), got (.+)$/.exec(got.error);
  expect(m, `${label}: ${got.error}`).not.toBeNull();
  const [, path, , found] = m as RegExpExecArray;
  const segs = segments(path);
  expect(declared(segs), `${label}: ${got.error} is not a declared field`).toBeDefined();
  const value = segs.reduce<unknown>((v, s) => (v as Record<string | number, unknown> | undefined)?.[s], pod);
  expect(kindOf(value), `${label}: ${got.error}`).toBe(found);
  return got.error;
}

describe('the pod parser checks what the declaration (src/contract/pod.ts) says', () => {
  const pods = corpusPods();

  it('accepts the corpus pods as they are, and refuses the few with a non-string annotation at that annotation', () => {
    expect(pods.length).toBeGreaterThan(50);
    const refused = pods.map((pod, i) => checkRefusal(pod, `corpus pod ${i}`)).filter((e) => e !== undefined);
    expect(refused.length).toBeLessThan(pods.length / 10);
    for (const e of refused)
      expect(e).toMatch(/\.metadata\.annotations\["[^"]+"\]: expected a string, got (\d+|true|false)$/);
  });

  it('refuses seeded mutations at a declared field, naming it and the kind found there', () => {
    const rng = mulberry32(1411);
    const refused = new Set<string>();
    let accepted = 0;
    for (let i = 0; i < 20_000; i++) {
      const error = checkRefusal(mutate(pick(rng, pods), rng), `case ${i}`);
      if (error === undefined) accepted++;
      else refused.add(error.replace(/\[\d+\]/g, '[]'));
    }
    // Both outcomes, and refusals at many different fields: the mutations reach what the parser checks.
    expect(accepted).toBeGreaterThan(1000);
    expect(refused.size).toBeGreaterThan(100);
  });

  it('refuses values that are not pods at all', () => {
    for (const v of [undefined, null, 'pod', 1, [], {}, { spec: null }, { metadata: [], spec: {} }])
      expect(parsePod(v).ok).toBe(false);
    expect(parsePod({ spec: {} })).toEqual({ ok: false, error: 'pod.spec.containers: expected a list, got undefined' });
  });
});
