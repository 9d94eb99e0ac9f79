/**
 * The CLI's list answers read item by item as they stream (src/check/list-items.ts): the same items and metadata as
 * JSON.parse of the whole answer, wherever the chunks are cut (inside strings, escapes and multi-byte characters),
 * each item handed over before the answer ends, and clear errors for what is not a list.
 */
import { describe, expect, it } from 'vitest';
import { ListItems, ListItemsError } from '../../../src/kube/api/list-items.ts';

/** A list whose items and metadata hold what a naive scanner trips on. */
const LIST = {
  kind: 'PodList',
  apiVersion: 'v1',
  metadata: { resourceVersion: '42', continue: 'eyJ2Ijoi"}]', remainingItemCount: 3 },
  items: [
    { metadata: { name: 'a', annotations: { x: '{"items":[1,2]}', y: 'back\\slash \\"quoted\\" ]}' } } },
    { metadata: { name: 'b', labels: { é: 'naïve – ✓ 日本 🚀' } }, spec: { items: [{ k: [] }, []] } },
    { metadata: { name: 'c' }, status: {} },
  ],
};

function parse(chunks: Buffer[], max = 1 << 20): { items: unknown[]; rest: unknown } {
  const items: unknown[] = [];
  const p = new ListItems((i) => items.push(i), max);
  for (const c of chunks) p.write(c);
  return { items, rest: p.end() };
}

/** Items whose metadata carries managedFields, and the same words elsewhere, where they must stay. */
const FIELDS = [{ manager: 'kubelet', fieldsV1: { 'f:status': { 'f:phase': {} } }, time: 'x"]}' }];
const MANAGED = {
  kind: 'PodList',
  metadata: { resourceVersion: '7' },
  items: [
    {
      metadata: { name: 'managedFields', managedFields: FIELDS, labels: { managedFields: 'managedFields' } },
      spec: { managedFields: [1, 2] },
    },
    { metadata: { labels: { a: 'b' }, generateName: 'managedFields', managedFields: FIELDS } },
    { metadata: { managedFields: null, ownerReferences: [{ managedFields: [3] }] } },
    { metadata: { annotations: { managedFields: '[]' }, managedFields: [] }, status: { managedFields: {} } },
  ],
};

describe('ListItems', () => {
  const bytes = Buffer.from(JSON.stringify(LIST, null, 1));
  const expected = { items: LIST.items, rest: { ...LIST, items: [] } };

  it('parses a list cut into two chunks at every byte', () => {
    for (let cut = 0; cut <= bytes.length; cut++)
      expect(parse([bytes.subarray(0, cut), bytes.subarray(cut)]), `cut at ${cut}`).toEqual(expected);
  });

  it('parses a list fed one byte at a time', () => {
    expect(parse([...bytes].map((b) => Buffer.from([b])))).toEqual(expected);
  });

  it('hands each item over as soon as its last byte arrives, not at the end', () => {
    const seen: string[] = [];
    const p = new ListItems((i) => seen.push((i as { metadata: { name: string } }).metadata.name), 1 << 20);
    const afterA = bytes.indexOf('"b"');
    p.write(bytes.subarray(0, afterA));
    expect(seen).toEqual(['a']);
    p.write(bytes.subarray(afterA));
    expect(seen).toEqual(['a', 'b', 'c']);
    p.end();
  });

  it("reads an item's metadata.managedFields as null, and only that, wherever the chunks are cut", () => {
    const managed = Buffer.from(JSON.stringify(MANAGED, null, 1));
    const [a, b, c, d] = MANAGED.items;
    const want = {
      items: [
        { ...a, metadata: { ...a.metadata, managedFields: null } },
        { metadata: { ...b.metadata, managedFields: null } },
        c,
        { ...d, metadata: { ...d.metadata, managedFields: null } },
      ],
      rest: { ...MANAGED, items: [] },
    };
    for (let cut = 0; cut <= managed.length; cut++)
      expect(parse([managed.subarray(0, cut), managed.subarray(cut)]), `cut at ${cut}`).toEqual(want);
    expect(parse([...managed].map((x) => Buffer.from([x])))).toEqual(want);
  });

  it('reads a list without items, an empty one and a Status', () => {
    expect(parse([Buffer.from('{"kind":"PodList","metadata":{},"items":[]}')])).toEqual({
      items: [],
      rest: { kind: 'PodList', metadata: {}, items: [] },
    });
    expect(parse([Buffer.from('{"kind":"Status","code":500,"message":"items: ["}')]).rest).toMatchObject({
      code: 500,
    });
    // `"items"` as a value, then another array: not the items.
    expect(parse([Buffer.from('{"kind":"items","other":[{"x":1}],"items":[{"y":2}]}')])).toEqual({
      items: [{ y: 2 }],
      rest: { kind: 'items', other: [{ x: 1 }], items: [] },
    });
  });

  it('fails on an item over the bound, a cut answer, an item that is not an object, and broken JSON', () => {
    const big = Buffer.from(JSON.stringify({ items: [{ a: 'x'.repeat(200) }] }));
    expect(() => parse([big], 100)).toThrow(/an item of the list exceeds 100 bytes/);
    expect(() => parse([bytes.subarray(0, bytes.length - 5)])).toThrow(ListItemsError);
    expect(() => parse([Buffer.from('{"items":[1]}')])).toThrow(/not an object/);
    expect(() => parse([Buffer.from('{"items":[{"a":}]}')])).toThrow(/not JSON/);
    expect(() => parse([Buffer.from('{"a":1}}')])).toThrow(/unbalanced/);
  });

  it('holds no more than one item: a thousand items in small chunks keep the rest to the list’s own fields', () => {
    const many = Buffer.from(
      JSON.stringify({ kind: 'PodList', metadata: {}, items: Array.from({ length: 1000 }, (_, i) => ({ i })) }),
    );
    let n = 0;
    const p = new ListItems(() => n++, 64);
    for (let at = 0; at < many.length; at += 7) p.write(many.subarray(at, at + 7));
    expect(n).toBe(1000);
    expect(JSON.stringify(p.end())).toBe('{"kind":"PodList","metadata":{},"items":[]}');
  });
});
