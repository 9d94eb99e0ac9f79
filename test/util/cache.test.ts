import { describe, expect, it } from 'vitest';
import { cached } from '../../src/util/cache.ts';

describe('cached', () => {
  it('builds once per key and returns the kept value after', () => {
    const m = new Map<string, { n: number }>();
    let builds = 0;
    const build = (k: string) => ({ n: (builds++, k.length) });
    const a = cached(m, 'abc', build);
    expect(cached(m, 'abc', build)).toBe(a);
    expect(builds).toBe(1);
    const w = new WeakMap<object, string>();
    const key = {};
    expect(cached(w, key, () => 'x')).toBe('x');
    expect(cached(w, key, () => 'y')).toBe('x');
  });

  it('bounds a Map: full, it starts again rather than growing', () => {
    const m = new Map<number, number>();
    for (let i = 0; i < 10; i++) cached(m, i, (k) => k * 2, 4);
    expect(m.size).toBeLessThanOrEqual(4);
    expect(cached(m, 9, () => -1, 4)).toBe(18);
    expect(cached(m, 0, (k) => k * 2, 4)).toBe(0);
  });
});
