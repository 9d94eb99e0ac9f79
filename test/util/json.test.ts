import { describe, expect, it } from 'vitest';
import { cachedJson, deepFreeze, stringifyOps } from '../../src/util/json.ts';
import { encodeResponse, serializeResponse } from '../../src/admission/review.ts';

describe('stringifyOps', () => {
  const shared = deepFreeze({ name: 'proxy', args: ['--a', 'q"uote'], env: [{ name: 'X', value: '1', valueFrom: undefined }] });
  const ops = [
    { op: 'remove', path: '/spec/initContainers/2' },
    { op: 'add', path: '/spec/initContainers', value: [shared, shared] },
    { op: 'add', path: '/spec/containers/-', value: shared },
    { op: 'add', path: '/metadata/annotations/meshgate.io~1status', value: '{"mode":"cni"}\u2028' },
    { op: 'add', path: '/spec/affinity', value: { nodeAffinity: { x: [1, null, true] } } },
  ];
  it('is byte-identical to JSON.stringify, also on repeated calls (cache hits)', () => {
    expect(stringifyOps(ops)).toBe(JSON.stringify(ops));
    expect(stringifyOps(ops)).toBe(JSON.stringify(ops));
  });

  it('never caches mutable values', () => {
    const v: Record<string, unknown> = { a: 1 };
    expect(cachedJson(v)).toBe('{"a":1}');
    v.a = 2;
    expect(cachedJson(v)).toBe('{"a":2}');
  });
});

describe('serializeResponse', () => {
  it.each([
    ['patch', { kind: 'patch', reason: 'node_verified', ops: [{ op: 'add', path: '/x', value: 1 }], warnings: ['w'] }],
    ['deny', { kind: 'deny', reason: 'node_unverified', message: 'no "quotes" here' }],
    ['allow', { kind: 'allow', reason: 'host_network' }],
  ] as const)('parses back to the encoded response (%s)', (_n, verdict) => {
    const body = encodeResponse('admission.k8s.io/v1', 'uid-1', verdict as never);
    expect(JSON.parse(serializeResponse(body))).toEqual(body);
  });
});
