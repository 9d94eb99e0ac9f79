import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { keyRing, markKey } from '../../src/mark/keys.ts';
import { MAX_SKEW_SECONDS, epochSeconds, issueMark, verifyMark } from '../../src/mark/mark.ts';
import { KEY_A, KEY_B, RING, T0, markFor } from '../support/mark.ts';

const A_ID = markKey(KEY_A).id;
const B_ID = markKey(KEY_B).id;

describe('issueMark', () => {
  it('writes v1.<key id>.<issued>.<HMAC-SHA256 over what it binds, base64url>', () => {
    const mark = issueMark(RING, 'shop', T0);
    const sig = createHmac('sha256', KEY_A).update(`meshgate.io/admitted v1\n${A_ID}\nshop\n${T0}`).digest('base64url');
    expect(mark).toBe(`v1.${A_ID}.${T0}.${sig}`);
    expect(A_ID).toMatch(/^[0-9a-f]{8}$/);
    expect(sig).toHaveLength(43);
  });

  it('signs with the ring’s signing key only', () => {
    const ring = keyRing(KEY_B, [KEY_A]);
    expect(issueMark(ring, 'shop', T0).split('.')[1]).toBe(B_ID);
  });
});

describe('verifyMark', () => {
  const good = markFor('shop');
  const [, , , sig] = good.split('.');
  const cases: Array<
    [string, { mark?: string; ring?: ReturnType<typeof keyRing>; ns?: string; created?: number }, RegExp | null]
  > = [
    ['the mark as issued', {}, null],
    ['created a few seconds after admission', { created: T0 + 3 }, null],
    [`created ${MAX_SKEW_SECONDS} s after admission (the edge)`, { created: T0 + MAX_SKEW_SECONDS }, null],
    ['the webhook’s clock a minute ahead of the apiserver’s', { created: T0 - 60 }, null],
    ['a mark from another namespace', { ns: 'other' }, /does not verify for namespace other/],
    [
      'another key (same id forged into the mark)',
      { ring: keyRing(KEY_B) },
      new RegExp(`names key ${A_ID}, which meshgate does not hold \\(it holds ${B_ID}\\)`),
    ],
    [
      'a mark forged with another key but the real key id',
      { mark: `v1.${A_ID}.${T0}.${issueMark(keyRing(KEY_B), 'shop', T0).split('.')[3]}` },
      /does not verify for namespace shop/,
    ],
    ['signed by the previous key, still accepted', { ring: keyRing(KEY_B, [KEY_A]) }, null],
    [
      'signed by the next key, already accepted',
      { mark: markFor('shop', T0, keyRing(KEY_B)), ring: keyRing(KEY_A, [KEY_B]) },
      null,
    ],
    [
      'truncated signature',
      { mark: good.slice(0, -1) },
      /is not a meshgate mark \(v1\.<key id>\.<issued>\.<signature>\)/,
    ],
    ['truncated to its key id', { mark: `v1.${A_ID}` }, /is not a meshgate mark/],
    ['empty', { mark: '' }, /"" is not a meshgate mark/],
    ['another version', { mark: good.replace(/^v1/, 'v2') }, /is not a meshgate mark/],
    [
      'a changed time with the old signature',
      { mark: `v1.${A_ID}.${T0 + 1}.${sig}`, created: T0 + 1 },
      /does not verify/,
    ],
    ['a padded signature', { mark: `${good}=` }, /is not a meshgate mark/],
    ['a long value', { mark: 'x'.repeat(10_000) }, /is 10000 characters long, not a meshgate mark/],
    [
      'a pod created long after the mark was issued (copied)',
      { created: T0 + MAX_SKEW_SECONDS + 1 },
      /was issued at 2026-01-01T00:00:00Z, but the pod was created at 2026-01-01T00:05:01Z: a mark holds only for a pod created within 5 minutes of its admission/,
    ],
    ['a pod created long before the mark was issued', { created: T0 - MAX_SKEW_SECONDS - 1 }, /was issued at/],
  ];
  it.each(cases)('%s', (_name, c, problem) => {
    const r = verifyMark(c.ring ?? RING, c.mark ?? good, c.ns ?? 'shop', c.created ?? T0);
    if (problem === null) expect(r).toEqual({ ok: true, keyId: expect.any(String), issued: T0 });
    else expect(r.ok === false && r.problem).toMatch(problem);
  });
});

describe('epochSeconds', () => {
  it.each([
    ['2026-01-01T00:00:00Z', T0],
    [new Date(T0 * 1000 + 999), T0],
    ['yesterday', undefined],
    [undefined, undefined],
  ] as const)('%s → %s', (t, want) => {
    expect(epochSeconds(t)).toBe(want);
  });
});
