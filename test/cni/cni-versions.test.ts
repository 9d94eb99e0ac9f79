/**
 * libcni ≥ 1.2's `cniVersions` (src/cni/cni-versions.ts): libcni's own version parsing, the filter above 1.1.0 and
 * which entry its sort leaves last. The oracle test proves the same against the real libcni v1.2.3 and v1.3.x.
 */
import { describe, expect, it } from 'vitest';
import { parseVersion, resolveCniVersions } from '../../src/cni/cni-versions.ts';
import { JsonNumber } from '../../src/cni/gojson.ts';

describe('parseVersion (libcni version.ParseVersion, not semver)', () => {
  it.each([
    ['', '0.1.0'],
    ['1', '1.0.0'],
    ['1.0', '1.0.0'],
    ['0.4.0', '0.4.0'],
    ['01.0.0', '1.0.0'],
    ['+1.-2.3', '1.-2.3'],
    ['9223372036854775807.0.0', '9223372036854775807.0.0'],
  ])('%j → %s', (text, want) => {
    const v = parseVersion(text);
    expect(typeof v === 'string' ? v : v.join('.')).toBe(want);
  });

  it.each([
    ['1.0.0.0', /too many parts/],
    ['v1.0.0', /major version part "v1"/],
    ['1.0.0-rc1', /micro version part "0-rc1"/],
    ['1..0', /minor version part ""/],
    ['1.', /minor version part ""/],
    [' 1.0.0', /major/],
    ['9223372036854775808.0.0', /major/],
    ['١.0.0', /major/],
  ])('%j is refused', (text, err) => {
    expect(parseVersion(text)).toMatch(err);
  });
});

describe('resolveCniVersions', () => {
  it.each<[unknown, string, string]>([
    [['0.3.1', '1.0.0'], '0.4.0', '1.0.0'],
    [['1.1.0', '2.0.0'], '0.4.0', '1.1.0'],
    [['2.0.0'], '0.4.0', '0.4.0'],
    [['2.0.0'], '3.0.0', '3.0.0'],
    [['1.0.0'], '2.0.0', '1.0.0'],
    [[], '0.4.0', '0.4.0'],
    [[''], '', ''],
    [[''], '0.4.0', '0.4.0'],
    // Two spellings of one version: which one Go's insertion sort leaves last (the same lists agree with the real
    // libcni v1.2.3 and v1.3.x in test/cni/oracle-lines.ts).
    [['1.0', '1.0.0'], '0.4.0', '1.0'],
    [['1.0.0', '1.0'], '0.4.0', '1.0.0'],
    [['1.0', '1.0.0'], '1', '1.0'],
  ])('%j with cniVersion %j → %j', (list, cniVersion, want) => {
    expect(resolveCniVersions(list as never, cniVersion)).toEqual({ ok: true, cniVersion: want });
  });

  it.each<[unknown, string, RegExp]>([
    [null, '0.4.0', /invalid type for cniVersions/],
    ['1.0.0', '0.4.0', /invalid type for cniVersions/],
    [[new JsonNumber('1')], '0.4.0', /index 0: float64/],
    [[null], '0.4.0', /index 0: <nil>/],
    [['x'], '0.4.0', /invalid cniVersions entry x at index 0/],
    [[], 'x', /invalid cniVersion x/],
  ])('%j with cniVersion %j fails', (list, cniVersion, err) => {
    const r = resolveCniVersions(list as never, cniVersion);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toMatch(err);
  });

  it('a list too long for an insertion sort is resolved in one pass, to its top version', () => {
    const list = [...Array.from({ length: 200_000 }, (_, i) => `0.${i % 5}.0`), '1.1.0', '0.9.0'];
    expect(resolveCniVersions(list, '')).toEqual({ ok: true, cniVersion: '1.1.0' });
  });
});
