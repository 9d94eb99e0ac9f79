/**
 * The patch encoder (src/util/base64-json.ts) copies the JSON of pre-encoded templates into the patch and serialises
 * the rest per review. Whatever the mix, the decoded text must parse to exactly the ops, byte for byte what
 * JSON.stringify writes, on the corpus's real patches and on odd values (multi-byte UTF-8, undefined, functions).
 */
import { describe, expect, it } from 'vitest';
import { base64JsonPatch, jsonPatch, preEncode } from '../../src/util/base64-json.ts';

import { decide } from '../../src/policy/mutate/decide.ts';
import { nodeFactsFromState } from '../../src/facts/node-state.ts';
import { parsePod } from '../../src/pod/parse.ts';
import { testConfig } from '../support/config.ts';
import { corpusTemplatePods } from '../support/corpus.ts';

const configs = [testConfig('custom'), testConfig('istio'), testConfig('linkerd')];

type Op = { op: string; path: string; value?: unknown };

function decoded(ops: Op[]): unknown {
  const b64 = base64JsonPatch(ops);
  // Canonical base64 of exactly what JSON.stringify writes (key order op, path, value as the builders write ops).
  const bytes = Buffer.from(b64, 'base64');
  expect(bytes.toString('base64')).toBe(b64);
  expect(bytes.toString('utf8')).toBe(JSON.stringify(ops));
  return JSON.parse(bytes.toString('utf8'));
}

const plain = (ops: Op[]) => JSON.parse(JSON.stringify(ops));

describe('base64JsonPatch', () => {
  const shared = preEncode({
    name: 'proxy',
    args: ['--a', 'q"uote', 'é✓𝄞'],
    env: [{ name: 'X', value: '1', valueFrom: undefined }],
  });
  const volumes = preEncode([
    { name: 'a', emptyDir: {} },
    { name: 'b', emptyDir: { medium: 'Memory' } },
  ]);

  it('decodes to the ops: pre-encoded values, fresh lists of them, strings, numbers, ops without a value', () => {
    const ops: Op[] = [
      { op: 'remove', path: '/spec/initContainers/2' },
      { op: 'add', path: '/spec/initContainers', value: [shared, shared] },
      { op: 'add', path: '/spec/containers/-', value: shared },
      { op: 'add', path: '/spec/volumes', value: volumes },
      { op: 'add', path: '/spec/volumes/-', value: volumes[1] },
      { op: 'add', path: '/metadata/annotations/meshgate.io~1status', value: '{"mode":"cni"}\u2028' },
      { op: 'add', path: '/spec/affinity', value: { nodeAffinity: { x: [1, null, true, shared] } } },
      { op: 'replace', path: '/spec/volumes', value: [] },
      { op: 'add', path: '/x', value: [undefined, () => 1] },
      { op: 'add', path: '/y', value: undefined },
    ];
    expect(decoded(ops)).toEqual(plain(ops));
    expect(decoded([])).toEqual([]);
  });

  it('multi-byte characters in paths, strings and pre-encoded values', () => {
    for (const ch of ['a', 'é', '✓', '𝄞']) {
      const s = ch.repeat(5);
      const ops: Op[] = [
        { op: 'add', path: `/a/${s}`, value: s },
        { op: 'add', path: '/b', value: preEncode({ s }) },
        { op: 'add', path: `/c${s}`, value: [preEncode([s]), s, 3] },
      ];
      expect(decoded(ops)).toEqual(plain(ops));
    }
  });

  it('long strings that need escaping, and characters JSON.stringify escapes, in paths and values', () => {
    const odd = ['"q"', 'back\\slash', 'tab\there', 'nl\n', '\u0000', '\u2028', '\ud800', 'é', '𝄞', '\u007f'];
    for (const piece of odd) {
      for (const len of [1, 47, 48, 49, 300]) {
        const s = `${'x'.repeat(len)}${piece}${'y'.repeat(len)}`;
        const ops: Op[] = [
          { op: 'add', path: `/a/${s}`, value: s },
          { op: 'add', path: '/b', value: [s, { s }, preEncode({ s })] },
        ];
        expect(decoded(ops), `${JSON.stringify(piece)} at ${len}`).toEqual(plain(ops));
        expect(jsonPatch(ops)).toBe(JSON.stringify(ops));
      }
    }
  });

  it('a patch longer than its first buffer is written whole, and the next one from the start', () => {
    const big = 'z'.repeat(40_000);
    const ops: Op[] = [
      { op: 'add', path: '/a', value: big },
      { op: 'add', path: '/b', value: [shared, big, 'é'.repeat(30_000)] },
      { op: 'add', path: '/c', value: 1 },
    ];
    expect(Buffer.byteLength(jsonPatch(ops))).toBeGreaterThan(2 * 64 * 1024);
    expect(decoded(ops)).toEqual(plain(ops));
    const small: Op[] = [{ op: 'replace', path: '/d', value: shared }];
    expect(decoded(small)).toEqual(plain(small));
  });

  it('leaves out a value JSON cannot hold, and writes null for one in a list, as JSON.stringify does', () => {
    const ops = [
      { op: 'add', path: '/s', value: Symbol('s') },
      { op: 'add', path: '/l', value: [Symbol('s'), () => 1, undefined, null, true, 1.5] },
    ] as unknown as Op[];
    expect(jsonPatch(ops)).toBe(JSON.stringify(ops));
  });

  it('writes objects built per review member by member, exactly as JSON.stringify does', () => {
    const inherited = Object.create({ inheritedKey: 'x' }) as Record<string, unknown>;
    inherited.own = 1;
    const hidden: Record<string, unknown> = { shown: true };
    Object.defineProperty(hidden, 'hidden', { value: 'x', enumerable: false });
    const values: unknown[] = [
      {},
      { name: 'kube-api-access-x', readOnly: true, mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' },
      { b: 1, a: 2, 10: 'ten', 2: 'two', '-1': 'minus' },
      { u: undefined, f: () => 1, s: Symbol('s'), [Symbol('k')]: 1, n: null, ok: false },
      { nums: [0, -0, 1.5, 1e21, Number.NaN, Number.POSITIVE_INFINITY, -1e-7] },
      { deep: { list: [{ a: undefined }, [{}], 'q"\\\n'] }, 'key "quoted"': 'é✓𝄞', '\u2028': 'ls' },
      { when: new Date(0), custom: { toJSON: () => 'custom' } },
      { toJSON: 'a string, not a method' },
      inherited,
      hidden,
    ];
    for (const value of values) {
      const ops: Op[] = [{ op: 'add', path: '/x', value }];
      expect(jsonPatch(ops)).toBe(JSON.stringify(ops));
    }
  });

  it('pre-encoding freezes the value all the way down, so its JSON cannot go stale', () => {
    expect(Object.isFrozen(shared.env[0])).toBe(true);
    expect(() => {
      (shared.args as string[]).push('--more');
    }).toThrow(TypeError);
  });

  it('a copy of a pre-encoded value is encoded as the copy, not as the template', () => {
    const copy = { ...shared, resources: { limits: { cpu: '2' } } };
    const ops: Op[] = [{ op: 'add', path: '/spec/containers/-', value: copy }];
    expect(decoded(ops)).toEqual(plain(ops));
    expect(jsonPatch(ops)).toContain('"resources"');
  });

  it('a value never pre-encoded is serialised as it is now, each time', () => {
    const value: Record<string, unknown> = { name: 'mutable' };
    const ops: Op[] = [{ op: 'add', path: '/x', value }];
    expect(decoded(ops)).toEqual([{ op: 'add', path: '/x', value: { name: 'mutable' } }]);
    value.name = 'changed';
    expect(decoded(ops)).toEqual([{ op: 'add', path: '/x', value: { name: 'changed' } }]);
  });

  it('encodes the real patch of every corpus pod template, for every mesh profile', () => {
    const facts = nodeFactsFromState({ nodes: { 'node-a': { verified: true, kubeletVersion: 'v1.34.1' } } }, 'test');
    let patched = 0;
    for (const template of corpusTemplatePods()) {
      const parsed = parsePod(template);
      if (!parsed.ok) continue;
      for (const cfg of configs) {
        const d = decide({ pod: parsed.pod, namespace: 'apps' }, facts, cfg);
        if (d.kind !== 'patch') continue;
        patched++;
        expect(decoded(d.ops)).toEqual(plain(d.ops));
      }
    }
    expect(patched).toBeGreaterThan(20);
  });
});
