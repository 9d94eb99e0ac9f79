/**
 * The list parsers on the admission path (issue 21 §4): linear, and bounded before they split. The linear
 * parseCidrList must read every list as the quadratic one it replaced did (same CIDRs, same order of first
 * occurrence, the same first error); lists over MAX_LIST_ENTRIES are refused unread, as too large.
 */
import { describe, expect, it } from 'vitest';
import { MAX_LIST_ENTRIES, parseCidr, parseCidrList, parsePortRanges, type Parsed } from '../../src/util/values.ts';

/** parseCidrList as it was before it was made linear (Array.includes per entry), kept as the reference. */
function quadraticCidrList(raw: string): Parsed<string[]> {
  const out: string[] = [];
  for (const part of raw.split(',')) {
    if (part.trim() === '') continue;
    const c = parseCidr(part);
    if (!c.ok) return c;
    if (!out.includes(c.value)) out.push(c.value);
  }
  return { ok: true, value: out };
}

describe('parseCidrList reads lists as the quadratic version did', () => {
  const lists: string[] = [
    '',
    ' ',
    '10.0.0.0/8',
    '10.0.0.0/8,10.0.0.0/8',
    '10.0.0.0/8, 192.168.0.0/16 ,10.0.0.0/8,172.16.0.0/12,192.168.0.0/16',
    ',,10.0.0.0/8,,',
    '2001:db8::/32,10.0.0.0/8,2001:db8::/32,::/0',
    // Spelled differently, kept apart: the parser dedupes text, not addresses (coverage counts overlaps once).
    '10.0.0.0/8,10.1.0.0/8,10.0.0.0/08',
    '10.0.0.0/8,bad,also-bad',
    '10.0.0.0/8,10.0.0.0/33',
    '::1/129',
    Array.from({ length: MAX_LIST_ENTRIES }, (_, i) => `10.0.${i % 100}.0/24`).join(','),
  ];
  it.each(lists.map((l) => [l.length > 60 ? `${l.slice(0, 60)}…` : l, l]))('%j', (_, raw) => {
    expect(parseCidrList(raw)).toEqual(quadraticCidrList(raw));
  });
});

describe('lists longer than MAX_LIST_ENTRIES are refused unread, as too large', () => {
  const cidrs = (n: number) => Array.from({ length: n }, (_, i) => `10.0.${i >> 8}.${i & 255}/32`).join(',');
  const ports = (n: number) => Array.from({ length: n }, (_, i) => `${i + 1}`).join(',');
  const cases: Array<[string, () => Parsed<unknown>, number | 'ok']> = [
    ['256 CIDRs', () => parseCidrList(cidrs(256)), 'ok'],
    ['257 CIDRs', () => parseCidrList(cidrs(257)), 257],
    ['60,000 CIDRs', () => parseCidrList(cidrs(60_000)), 60_000],
    ['256 ports', () => parsePortRanges(ports(256)), 'ok'],
    ['257 ports', () => parsePortRanges(ports(257)), 257],
    // Empty parts count: the list is refused for its length before anything is read.
    ['one port and 300 commas', () => parsePortRanges(`80${','.repeat(300)}`), 301],
    ['257 entries, the last invalid', () => parsePortRanges(`${ports(256)},nope`), 257],
  ];
  it.each(cases)('%s', (_, parse, want) => {
    const p = parse();
    if (want === 'ok') {
      expect(p.ok).toBe(true);
      return;
    }
    expect(p).toEqual({
      ok: false,
      tooLarge: true,
      error: `${want} comma-separated entries; meshgate reads at most ${MAX_LIST_ENTRIES} in one list`,
    });
  });

  it('an invalid entry in a list within the bound is an error, not too large', () => {
    const p = parsePortRanges('80,nope');
    expect(p).toEqual({ ok: false, error: '"nope" is not a port or port range' });
  });
});
