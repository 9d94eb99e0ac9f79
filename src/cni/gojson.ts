/**
 * JSON decoding the way Go's encoding/json (v1, as libcni uses it) sees a document, so "parses" means what it
 * means to the runtime. Differences from `JSON.parse` that change whether a CNI file loads or what it says:
 *
 * - nesting deeper than Go's `maxNestingDepth` (10000 open arrays/objects) is a syntax error ("exceeded max
 *   depth"); the parser is iterative (an explicit stack), so no input can overflow meshgate's own stack;
 * - objects keep every key in document order, duplicates included (`JsonObject.entries`): Go's struct decoding
 *   applies them one after another, its map decoding keeps the last;
 * - numbers keep their text (`JsonNumber`); the first literal outside float64's range (1e400) is reported,
 *   because Go's decoding into `interface{}` rejects it while struct decoding skips it in unknown fields;
 * - strings are decoded from bytes like Go's `unquote`: each byte of an invalid UTF-8 sequence becomes one
 *   U+FFFD (WHATWG decoding would merge some), and a lone `\uD800` escape becomes U+FFFD.
 * Whitespace, literals, number grammar and a BOM (rejected) are as in JSON.parse and Go alike.
 */
import { isUtf8 } from 'node:buffer';

/** Go's encoding/json `maxNestingDepth`: a document with more open arrays/objects at once is refused. */
export const MAX_NESTING_DEPTH = 10000;

export class JsonNumber {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
}

export class JsonObject {
  readonly entries: Array<[string, JsonValue]>;
  constructor(entries: Array<[string, JsonValue]>) {
    this.entries = entries;
  }
}

export type JsonValue = null | boolean | string | JsonNumber | JsonObject | JsonValue[];

export type GoJsonDecodeResult =
  /** `depth`: the most arrays/objects open at once (a `.conf` is decoded again wrapped two levels deeper). */
  { ok: true; value: JsonValue; depth: number; numberOutOfRange?: string } | { ok: false; error: string };

type Frame = { items: JsonValue[] } | { entries: Array<[string, JsonValue]>; key: string };

class SyntaxFailure extends Error {}

/** The read position, the deepest nesting seen and the first number out of float64 range. */
interface Position {
  i: number;
  depth: number;
  outOfRange?: string;
}

/** Decodes one JSON document, or says why Go's decoder would refuse it (Go's wording, with the byte offset). */
export function decodeJson(input: Uint8Array): GoJsonDecodeResult {
  const b = Buffer.isBuffer(input) ? input : Buffer.from(input.buffer, input.byteOffset, input.byteLength);
  const p: Position = { i: 0, depth: 0 };
  try {
    const value = parseDocument(b, p);
    return p.outOfRange === undefined
      ? { ok: true, value, depth: p.depth }
      : { ok: true, value, depth: p.depth, numberOutOfRange: p.outOfRange };
  } catch (err) {
    if (err instanceof SyntaxFailure) return { ok: false, error: err.message };
    throw err;
  }
}

function parseDocument(b: Buffer, p: Position): JsonValue {
  const stack: Frame[] = [];
  skipSpace(b, p);
  for (;;) {
    // A value starts here.
    let value: JsonValue;
    const c = need(b, p.i, 'looking for beginning of value');
    if (c === 0x7b || c === 0x5b) {
      if (stack.length >= MAX_NESTING_DEPTH) fail(b, p.i, 'exceeded max depth');
      p.depth = Math.max(p.depth, stack.length + 1);
      p.i++;
      skipSpace(b, p);
      if (c === 0x5b) {
        if (b[p.i] !== 0x5d) {
          stack.push({ items: [] });
          continue;
        }
        p.i++;
        value = [];
      } else {
        if (b[p.i] !== 0x7d) {
          stack.push({ entries: [], key: parseKey(b, p) });
          continue;
        }
        p.i++;
        value = new JsonObject([]);
      }
    } else {
      value = parseScalar(b, p, c);
    }
    // Hand the finished value to its container; close every container that ends right after it.
    for (;;) {
      const top = stack.at(-1);
      if (!top) {
        skipSpace(b, p);
        if (p.i < b.length) fail(b, p.i, 'after top-level value');
        return value;
      }
      if ('items' in top) top.items.push(value);
      else top.entries.push([top.key, value]);
      skipSpace(b, p);
      const close = 'items' in top ? 0x5d : 0x7d;
      const d = need(b, p.i, 'items' in top ? 'after array element' : 'after object key:value pair');
      p.i++;
      if (d === 0x2c) {
        skipSpace(b, p);
        if (!('items' in top)) top.key = parseKey(b, p);
        break;
      }
      if (d !== close) fail(b, p.i - 1, 'items' in top ? 'after array element' : 'after object key:value pair');
      stack.pop();
      value = 'items' in top ? top.items : new JsonObject(top.entries);
    }
  }
}

/** `"key"` then `:`, leaving the position at the value. */
function parseKey(b: Buffer, p: { i: number }): string {
  if (need(b, p.i, 'looking for beginning of object key string') !== 0x22) {
    fail(b, p.i, 'looking for beginning of object key string');
  }
  const key = parseString(b, p);
  skipSpace(b, p);
  if (need(b, p.i, 'after object key') !== 0x3a) fail(b, p.i, 'after object key');
  p.i++;
  skipSpace(b, p);
  return key;
}

function parseScalar(b: Buffer, p: Position, c: number): JsonValue {
  if (c === 0x22) return parseString(b, p);
  if (c === 0x2d || (c >= 0x30 && c <= 0x39)) return parseNumber(b, p);
  for (const [word, value] of LITERALS) {
    if (c !== word.charCodeAt(0)) continue;
    for (let k = 1; k < word.length; k++) {
      const x = need(b, p.i + k, `in literal ${word} (expecting '${word[k]}')`);
      if (x !== word.charCodeAt(k)) fail(b, p.i + k, `in literal ${word} (expecting '${word[k]}')`);
    }
    p.i += word.length;
    return value;
  }
  return fail(b, p.i, 'looking for beginning of value');
}

const LITERALS: ReadonlyArray<[string, JsonValue]> = [
  ['true', true],
  ['false', false],
  ['null', null],
];

function parseNumber(b: Buffer, p: Position): JsonNumber {
  const start = p.i;
  let i = p.i;
  if (b[i] === 0x2d) i++;
  const digits = (from: number): number => {
    let k = from;
    while (k < b.length && b[k] >= 0x30 && b[k] <= 0x39) k++;
    return k;
  };
  if (b[i] === 0x30) i++;
  else if (b[i] >= 0x31 && b[i] <= 0x39) i = digits(i);
  else fail(b, i, 'in numeric literal', i >= b.length);
  if (b[i] === 0x2e) {
    if (!(b[i + 1] >= 0x30 && b[i + 1] <= 0x39))
      fail(b, i + 1, 'after decimal point in numeric literal', i + 1 >= b.length);
    i = digits(i + 1);
  }
  if (b[i] === 0x65 || b[i] === 0x45) {
    i++;
    if (b[i] === 0x2b || b[i] === 0x2d) i++;
    if (!(b[i] >= 0x30 && b[i] <= 0x39)) fail(b, i, 'in exponent of numeric literal', i >= b.length);
    i = digits(i);
  }
  p.i = i;
  const text = b.toString('latin1', start, i);
  // strconv.ParseFloat's ErrRange: the value rounds to ±Inf (underflow to 0 is not an error in Go either).
  if (p.outOfRange === undefined && !Number.isFinite(Number(text))) p.outOfRange = text;
  return new JsonNumber(text);
}

/** A string starting at the opening quote; decoded like Go's `unquote`. */
function parseString(b: Buffer, p: { i: number }): string {
  const start = p.i + 1;
  let i = start;
  let plain = true;
  for (;;) {
    const c = need(b, i, 'in string literal');
    if (c === 0x22) break;
    if (c < 0x20) fail(b, i, 'in string literal');
    if (c === 0x5c) {
      plain = false;
      const e = need(b, i + 1, 'in string escape code');
      if (e === 0x75) {
        for (let k = 2; k < 6; k++) {
          if (!isHex(need(b, i + k, 'in \\u hexadecimal character escape')))
            fail(b, i + k, 'in \\u hexadecimal character escape');
        }
        i += 6;
        continue;
      }
      if (!ESCAPES.has(e)) fail(b, i + 1, 'in string escape code');
      i += 2;
      continue;
    }
    if (c >= 0x80) plain = false;
    i++;
  }
  p.i = i + 1;
  if (plain) return b.toString('latin1', start, i);
  const raw = b.subarray(start, i);
  if (!raw.includes(0x5c) && isUtf8(raw)) return raw.toString('utf8');
  return unquote(raw);
}

const ESCAPES = new Map<number, string>([
  [0x22, '"'],
  [0x5c, '\\'],
  [0x2f, '/'],
  [0x62, '\b'],
  [0x66, '\f'],
  [0x6e, '\n'],
  [0x72, '\r'],
  [0x74, '\t'],
]);

/** Go's unquote over already-validated bytes: escapes, surrogate pairs, invalid UTF-8 → U+FFFD per byte. */
function unquote(s: Buffer): string {
  let out = '';
  let i = 0;
  while (i < s.length) {
    const c = s[i];
    if (c === 0x5c) {
      const e = s[i + 1];
      if (e !== 0x75) {
        out += ESCAPES.get(e);
        i += 2;
        continue;
      }
      let r = parseInt(s.toString('latin1', i + 2, i + 6), 16);
      i += 6;
      if (r >= 0xd800 && r < 0xe000) {
        const next = s[i] === 0x5c && s[i + 1] === 0x75 ? parseInt(s.toString('latin1', i + 2, i + 6), 16) : -1;
        if (r < 0xdc00 && next >= 0xdc00 && next < 0xe000) {
          out += String.fromCharCode(r, next);
          i += 6;
          continue;
        }
        r = 0xfffd;
      }
      out += String.fromCharCode(r);
      continue;
    }
    if (c < 0x80) {
      out += String.fromCharCode(c);
      i++;
      continue;
    }
    const [rune, size] = decodeRune(s, i);
    out += String.fromCodePoint(rune);
    i += size;
  }
  return out;
}

/** Go's utf8.DecodeRune: a valid sequence (no overlongs, surrogates or > U+10FFFF), else U+FFFD of width 1. */
function decodeRune(s: Buffer, i: number): [number, number] {
  const c = s[i];
  const cont = (k: number, lo = 0x80, hi = 0xbf) => i + k < s.length && s[i + k] >= lo && s[i + k] <= hi;
  if (c >= 0xc2 && c <= 0xdf && cont(1)) return [((c & 0x1f) << 6) | (s[i + 1] & 0x3f), 2];
  if (c >= 0xe0 && c <= 0xef) {
    const lo = c === 0xe0 ? 0xa0 : 0x80;
    const hi = c === 0xed ? 0x9f : 0xbf;
    if (cont(1, lo, hi) && cont(2)) return [((c & 0x0f) << 12) | ((s[i + 1] & 0x3f) << 6) | (s[i + 2] & 0x3f), 3];
  }
  if (c >= 0xf0 && c <= 0xf4) {
    const lo = c === 0xf0 ? 0x90 : 0x80;
    const hi = c === 0xf4 ? 0x8f : 0xbf;
    if (cont(1, lo, hi) && cont(2) && cont(3)) {
      return [((c & 0x07) << 18) | ((s[i + 1] & 0x3f) << 12) | ((s[i + 2] & 0x3f) << 6) | (s[i + 3] & 0x3f), 4];
    }
  }
  return [0xfffd, 1];
}

function isHex(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46);
}

function skipSpace(b: Buffer, p: { i: number }): void {
  let i = p.i;
  for (let c = b[i]; c === 0x20 || c === 0x0a || c === 0x09 || c === 0x0d; c = b[++i]);
  p.i = i;
}

/** The byte at `i`, or Go's "unexpected end of JSON input" when the document ends there. */
function need(b: Buffer, i: number, context: string): number {
  if (i >= b.length) fail(b, i, context, true);
  return b[i];
}

function fail(b: Buffer, i: number, context: string, atEnd = false): never {
  if (atEnd || i >= b.length) throw new SyntaxFailure('unexpected end of JSON input');
  throw new SyntaxFailure(`invalid character ${quoteChar(b[i])} ${context} (offset ${i})`);
}

/** Go's quoteChar: the offending byte as Go prints it in its syntax errors. */
function quoteChar(c: number): string {
  if (c === 0x27) return `'\\''`;
  if (c === 0x22) return `'"'`;
  if (c < 0x20 || c === 0x7f) return `'\\x${c.toString(16).padStart(2, '0')}'`;
  return `'${String.fromCharCode(c)}'`;
}
