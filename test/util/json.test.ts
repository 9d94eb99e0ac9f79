import { describe, expect, it } from 'vitest';
import { deepFreeze, stringifyCached } from '../../src/util/json.ts';

describe('stringifyCached', () => {
  const samples: unknown[] = [
    null, 0, -1.5, 'a"b\\c\n\u2028', true, [], {}, [1, 'x', null, [2, { a: 3 }]],
    { a: undefined, b: () => 1, c: [undefined, () => 1], 'k"ey': { nested: [true, false] } },
    { unicode: 'é 😀', big: 1e21, small: 1e-7 },
  ];
  it.each(samples.map((s) => [JSON.stringify(s), s]))('matches JSON.stringify for %s', (_n, s) => {
    expect(stringifyCached(s)).toBe(JSON.stringify(s));
  });

  it('caches frozen objects and still matches JSON.stringify inside unfrozen ones', () => {
    const shared = deepFreeze({ name: 'proxy', args: ['--a', '--b'], env: [{ name: 'X', value: '1' }] });
    const ops = [{ op: 'add', path: '/spec/containers/-', value: shared }, { op: 'add', path: '/x', value: [shared, shared] }];
    expect(stringifyCached(ops)).toBe(JSON.stringify(ops));
    expect(stringifyCached(ops)).toBe(JSON.stringify(ops));
  });

  it('never caches mutable objects (a changed object serialises as changed)', () => {
    const o: Record<string, unknown> = { a: 1 };
    expect(stringifyCached(o)).toBe('{"a":1}');
    o.a = 2;
    expect(stringifyCached(o)).toBe('{"a":2}');
  });
});
