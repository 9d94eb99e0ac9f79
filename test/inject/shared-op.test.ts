import { describe, expect, it } from 'vitest';
import { sharedOp } from '../../src/inject/shared-op.ts';
import { deepFreeze } from '../../src/util/json.ts';
import { base64JsonPatch } from '../../src/util/base64-json.ts';

const decode = (b64: string) => JSON.parse(Buffer.from(b64, 'base64').toString('utf8'));

describe('sharedOp', () => {
  const c = deepFreeze({ name: 'proxy' });

  it('gives one frozen op per op, path and shared value', () => {
    const a = sharedOp('add', '/spec/containers/-', c);
    expect(sharedOp('add', '/spec/containers/-', c)).toBe(a);
    expect(Object.isFrozen(a)).toBe(true);
    expect(sharedOp('replace', '/spec/containers/-', c)).not.toBe(a);
    expect(sharedOp('add', '/spec/containers/0', c)).not.toBe(a);
    expect(sharedOp('add', '/metadata/labels/x', 'v')).toBe(sharedOp('add', '/metadata/labels/x', 'v'));
    expect(sharedOp('remove', '/spec/initContainers/1')).toEqual({ op: 'remove', path: '/spec/initContainers/1' });
  });

  it('never shares an op whose value could change', () => {
    const value = { name: 'mutable' };
    const a = sharedOp('add', '/x', value);
    expect(sharedOp('add', '/x', value)).not.toBe(a);
    expect(Object.isFrozen(a)).toBe(false);
    value.name = 'changed';
    expect(decode(base64JsonPatch([a]))).toEqual([{ op: 'add', path: '/x', value: { name: 'changed' } }]);
  });

  it('a patch of shared ops encodes the same as one assembled afresh, in its own order', () => {
    const ops = [sharedOp('add', '/spec/containers/-', c), sharedOp('add', '/metadata/labels/x', 'v')];
    const fresh = ops.map((o) => ({ ...o }));
    expect(decode(base64JsonPatch(ops))).toEqual(decode(base64JsonPatch(fresh)));
    expect(base64JsonPatch(ops)).toBe(base64JsonPatch([...ops]));
    expect(decode(base64JsonPatch([...ops].reverse()))).toEqual([...fresh].reverse());
  });
});
