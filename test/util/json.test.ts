import { describe, expect, it } from 'vitest';
import { deepFreeze, isObject } from '../../src/util/json.ts';
import { encodeResponse, serializeResponse } from '../../src/admission/review.ts';

describe('deepFreeze', () => {
  it('freezes every level, also below an object that was frozen already', () => {
    const inner = { env: [{ name: 'X' }] };
    const outer = Object.freeze({ inner }); // frozen on top, mutable below
    deepFreeze(outer);
    expect(Object.isFrozen(inner)).toBe(true);
    expect(Object.isFrozen(inner.env)).toBe(true);
    expect(Object.isFrozen(inner.env[0])).toBe(true);
    expect(() => {
      (inner.env[0] as { name: string }).name = 'Y';
    }).toThrow(TypeError);
  });

  it('terminates on shared and cyclic references', () => {
    const shared = { a: 1 };
    const cyclic: Record<string, unknown> = { left: shared, right: shared };
    cyclic.self = cyclic;
    expect(deepFreeze(cyclic)).toBe(cyclic);
    expect(Object.isFrozen(shared)).toBe(true);
  });
});

describe('isObject', () => {
  it.each([
    [{}, true],
    [[], false],
    [null, false],
    ['x', false],
    [1, false],
  ] as const)('%j → %s', (v, want) => {
    expect(isObject(v)).toBe(want);
  });
});

describe('serializeResponse', () => {
  it.each([
    ['patch', { kind: 'patch', reason: 'node_verified', ops: [{ op: 'add', path: '/x', value: 1 }], warnings: ['w'] }],
    ['deny', { kind: 'deny', reason: 'node_unverified', message: 'no "quotes" here' }],
    ['allow', { kind: 'allow', reason: 'host_network' }],
    ['allow at audit', { kind: 'allow', reason: 'node_unverified', audited: { level: 'audit', message: 'm' } }],
    [
      'patch at warn',
      { kind: 'patch', reason: 'proxy_escalation', ops: [], warnings: ['w'], audited: { level: 'warn', message: 'm' } },
    ],
    ['error', { kind: 'error', reason: 'internal', message: 'line\nbreak \u2028 é' }],
  ] as const)('parses back to the encoded response (%s)', (_n, verdict) => {
    for (const [version, uid] of [
      ['admission.k8s.io/v1', 'uid-1'],
      ['admission.k8s.io/v1beta1', 'uid "with" \\ quotes ✓'],
    ]) {
      const body = encodeResponse(version, uid, verdict as never);
      expect(JSON.parse(serializeResponse(body))).toEqual(body);
      // Field for field what JSON.stringify writes for the encoded response, key order included.
      expect(serializeResponse(body)).toBe(JSON.stringify(body));
    }
  });
});
