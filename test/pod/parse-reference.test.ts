/**
 * The pod parser (src/pod/parse.ts) is written out field by field for speed; the table form it replaced
 * (reference-parser.ts) says the same thing in fewer lines. On every corpus pod, and on seeded mutations of them
 * that put values of every wrong type at the fields the parser reads (and anywhere else), both must give the same
 * answer: accepted, or refused with the same message.
 */
import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { parsePod } from '../../src/pod/parse.ts';
import { mulberry32, type Rng } from '../http/mutators.ts';
import { referenceParsePod } from './reference-parser.ts';
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

describe('the written-out pod parser agrees with the table', () => {
  const pods = corpusPods();

  it('on every corpus pod', () => {
    expect(pods.length).toBeGreaterThan(50);
    for (const pod of pods) expect(parsePod(pod, 'pod')).toEqual(referenceParsePod(pod, 'pod'));
  });

  it('on 20,000 seeded mutations of them, refusing with the same message', () => {
    const rng = mulberry32(1411);
    const refused = new Set<string>();
    let accepted = 0;
    for (let i = 0; i < 20_000; i++) {
      const pod = mutate(pick(rng, pods), rng);
      const want = referenceParsePod(pod, 'request.object');
      expect(parsePod(pod, 'request.object'), `case ${i}`).toEqual(want);
      if (want.ok) accepted++;
      else refused.add(want.error.replace(/\[\d+\]/g, '[]'));
    }
    // Both outcomes, and refusals at many different fields: the mutations reach what the parsers check.
    expect(accepted).toBeGreaterThan(1000);
    expect(refused.size).toBeGreaterThan(100);
  });

  it('on values that are not pods at all', () => {
    for (const v of [undefined, null, 'pod', 1, [], {}, { spec: null }, { spec: {} }, { metadata: [], spec: {} }])
      expect(parsePod(v)).toEqual(referenceParsePod(v));
  });
});
