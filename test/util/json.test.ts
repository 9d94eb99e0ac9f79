import { describe, expect, it } from 'vitest';
import { deepFreeze, isObject, jsonString, jsonStrings } from '../../src/util/json.ts';
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
    }
  });
});

describe('jsonString / jsonStrings', () => {
  it('writes what JSON.stringify writes, for every UTF-16 code unit alone and inside printable text', () => {
    for (let c = 0; c <= 0xffff; c++) {
      const ch = String.fromCharCode(c);
      for (const s of [ch, `uid-${ch}-1`, `${ch}${ch}`])
        if (jsonString(s) !== JSON.stringify(s)) expect.fail(`code unit ${c}: ${jsonString(s)}`);
    }
  });

  it('writes what JSON.stringify writes, for seeded random strings and lists', () => {
    // mulberry32: a seeded generator whose low bits are as random as its high ones.
    let seed = 42;
    const next = () => {
      seed = (seed + 0x6d2b79f5) | 0;
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return (t ^ (t >>> 14)) >>> 0;
    };
    // Mostly printable ASCII (the fast path), with quotes, backslashes, controls, non-ASCII and lone surrogates.
    const alphabet = ['a', 'Z', '0', '-', ' ', '~', '"', '\\', '\n', '\u0000', '\u007f', 'é', '✓', '\ud834', '\udd1e'];
    let fast = 0;
    for (let n = 0; n < 5000; n++) {
      const list: string[] = [];
      for (let k = next() % 4; k > 0; k--) {
        let s = '';
        for (let len = next() % 40; len > 0; len--) s += next() % 32 === 0 ? alphabet[next() % alphabet.length] : 'x';
        if (/^[\x20\x21\x23-\x5b\x5d-\x7e]*$/.test(s)) fast++;
        expect(jsonString(s)).toBe(JSON.stringify(s));
        list.push(s);
      }
      expect(jsonStrings(list)).toBe(JSON.stringify(list));
    }
    // Both paths were taken many times.
    expect(fast).toBeGreaterThan(500);
  });
});
