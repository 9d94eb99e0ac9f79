/**
 * libcni ≥ 1.2's `cniVersions` key of a conflist (ignored by v1.1): the spec versions the file is written for. When
 * the key is there, it must be a list of strings that each parse as a version, and `cniVersion` (when not empty)
 * must parse too; then the highest of them all that libcni implements (not above `version.Current()`, "1.1.0" in
 * v1.2.x and v1.3.x) replaces `cniVersion`, which then decides what CRI-O asks each plugin binary to support and
 * what the plugins are sent. Versions are read by libcni's own `version.ParseVersion` (not semver: "1", "1.0",
 * "01.2.+3" are versions; "1.0.0-rc1", "v1.0.0" and "" parts are not; "" is 0.1.0).
 *
 * The order: Go's `slices.SortFunc` with a comparator that calls two spellings of one version ("1.0" and "1.0.0")
 * each smaller than the other, so which spelling wins depends on the sort algorithm: insertion sort for up to 12
 * versions, which this file runs too; beyond 12 (pdqsort) it takes the last of the top version's spellings in O(n)
 * (a 2 MiB list must not cost a quadratic sort), which can differ from Go's only in the spelling of a tie at the
 * top, never in the version, and no verdict depends on it.
 */
import type { JsonValue } from './gojson.ts';
import { goTypeName } from './netconf.ts';

/** `version.Current()` of libcni v1.2.x and v1.3.x. */
export const IMPLEMENTED_SPEC_VERSION = '1.1.0';

type Version = readonly [bigint, bigint, bigint];

const INT_MIN = -(2n ** 63n);
const INT_MAX = 2n ** 63n - 1n;

/** strconv.Atoi on 64-bit: an optional sign, then decimal digits, within int64. */
function atoi(part: string): bigint | undefined {
  if (!/^[+-]?[0-9]+$/.test(part)) return undefined;
  const n = BigInt(part);
  return n < INT_MIN || n > INT_MAX ? undefined : n;
}

/** libcni's `version.ParseVersion`: up to three dot-separated integers; "" is 0.1.0. */
export function parseVersion(text: string): Version | string {
  if (text === '') return [0n, 1n, 0n];
  const parts = text.split('.');
  if (parts.length >= 4) return `invalid version ${JSON.stringify(text)}: too many parts`;
  const out: bigint[] = [0n, 0n, 0n];
  for (const [i, part] of parts.entries()) {
    const n = atoi(part);
    const which = ['major', 'minor', 'micro'][i];
    if (n === undefined) return `failed to convert ${which} version part ${JSON.stringify(part)}`;
    out[i] = n;
  }
  return [out[0], out[1], out[2]];
}

function greaterThan(a: Version, b: Version): boolean {
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i] > b[i];
  return false;
}

const CURRENT = parseVersion(IMPLEMENTED_SPEC_VERSION) as Version;

export type VersionsResult = { ok: true; cniVersion: string } | { ok: false; error: string };

/** The `cniVersion` a conflist with `cniVersions` ends with, or libcni's error (without its common prefix). */
export function resolveCniVersions(raw: JsonValue, cniVersion: string): VersionsResult {
  if (!Array.isArray(raw)) return { ok: false, error: 'invalid type for cniVersions: []interface {}' };
  const kept: Array<{ text: string; version: Version }> = [];
  for (const [i, entry] of raw.entries()) {
    if (typeof entry !== 'string')
      return { ok: false, error: `invalid type for cniVersions index ${i}: ${goTypeName(entry)}` };
    const version = parseVersion(entry);
    if (typeof version === 'string')
      return { ok: false, error: `invalid cniVersions entry ${entry} at index ${i}: ${version}` };
    if (!greaterThan(version, CURRENT)) kept.push({ text: entry, version });
  }
  if (cniVersion !== '') {
    const version = parseVersion(cniVersion);
    if (typeof version === 'string') return { ok: false, error: `invalid cniVersion ${cniVersion}: ${version}` };
    if (!greaterThan(version, CURRENT)) kept.push({ text: cniVersion, version });
  }
  return { ok: true, cniVersion: highest(kept) ?? cniVersion };
}

/** Go's insertion sort (pdqsort's choice for up to 12 items), whose last item libcni takes. */
const INSERTION_SORT_MAX = 12;

/** The version libcni's sort leaves last: insertion sort for short lists, else the top version in O(n). */
function highest(kept: Array<{ text: string; version: Version }>): string | undefined {
  if (kept.length > INSERTION_SORT_MAX) {
    // Which spelling of a tied top version pdqsort leaves last is not worth emulating (see above): take the last.
    let top = kept[0];
    for (const k of kept) if (!greaterThan(top.version, k.version)) top = k;
    return top.text;
  }
  // Go's insertionSortCmpFunc with libcni's comparator: equal strings are equal, otherwise "less" unless greater.
  const sorted = [...kept];
  const less = (a: (typeof kept)[number], b: (typeof kept)[number]) =>
    a.text !== b.text && !greaterThan(a.version, b.version);
  for (let i = 1; i < sorted.length; i++) {
    for (let j = i; j > 0 && less(sorted[j], sorted[j - 1]); j--)
      [sorted[j], sorted[j - 1]] = [sorted[j - 1], sorted[j]];
  }
  return sorted.at(-1)?.text;
}
