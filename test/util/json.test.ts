import { describe, expect, it } from 'vitest';
import { cachedJson, deepFreeze, sharedList } from '../../src/util/json.ts';
import { encodeResponse, serializeResponse } from '../../src/admission/review.ts';

describe('cachedJson', () => {
  it('is byte-identical to JSON.stringify, also on repeated calls (cache hits)', () => {
    const shared = deepFreeze({ name: 'proxy', args: ['--a', 'q"uote'], env: [{ name: 'X', value: '1', valueFrom: undefined }] });
    const list = [shared, undefined, shared];
    expect(cachedJson(shared)).toBe(JSON.stringify(shared));
    expect(cachedJson(shared)).toBe(JSON.stringify(shared));
    expect(cachedJson(list)).toBe(JSON.stringify(list));
  });

  it('never caches mutable values', () => {
    const v: Record<string, unknown> = { a: 1 };
    expect(cachedJson(v)).toBe('{"a":1}');
    v.a = 2;
    expect(cachedJson(v)).toBe('{"a":2}');
  });
});

describe('sharedList', () => {
  it('returns one frozen list per sequence of items', () => {
    const a = deepFreeze({ name: 'a' });
    const b = deepFreeze({ name: 'b' });
    const ab = sharedList([a, b]);
    expect(sharedList([a, b])).toBe(ab);
    expect(Object.isFrozen(ab)).toBe(true);
    expect(sharedList([b, a])).not.toBe(ab);
    expect(sharedList([a])).not.toBe(ab);
    expect(sharedList([a, b, a])).toEqual([a, b, a]);
    expect(sharedList([])).toEqual([]);
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
