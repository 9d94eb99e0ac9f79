/**
 * The patch encoder: an AdmissionReview answer carries its JSON Patch (RFC 6902) as base64 of its JSON text.
 *
 * Most of meshgate's patch is the same in every review: the containers, volumes and other templates the
 * configuration compiles to. `preEncode` serialises such a value once, when the configuration is compiled, to UTF-8
 * bytes, and the encoder copies those bytes into every patch holding the value; everything else in a patch (paths,
 * the status annotation, values built for this pod) is serialised per review. The patch is written as bytes into one
 * reused buffer, never as a string of many pieces (whose flattening and UTF-8 conversion cost more than writing it),
 * and base64-encoded from there in one go.
 *
 * The only memo is the JSON of pre-encoded values, and its key is explicit: the value itself (identity). `preEncode`
 * deep-freezes the value before it serialises it, so the JSON cannot go stale; a copy (`{ ...template, resources }`)
 * is another key and is serialised afresh. Nothing a request carries is added to it, so its size is the number of
 * templates of the configurations alive (a handful each), and it is held weakly: an entry goes with its template.
 *
 * Kept after measuring (issue 22, `npm run bench -- --before`, docs/benchmarks.md): it saves ~3–4 µs of a review's
 * server CPU against JSON.stringify and a base64 of the string, beyond the run's own noise.
 *
 * Decoded, the patch parses to exactly the ops given (test/util/base64-json.test.ts: against JSON.stringify, over
 * every corpus pod's patch under every mesh profile).
 */
import { deepFreeze } from './json.ts';
import type { DeepReadonly } from './readonly.ts';

declare const PRE_ENCODED: unique symbol;

/** A value whose JSON the encoder already holds: deeply read-only, so the JSON stays true. */
export type PreEncoded<T> = DeepReadonly<T> & { readonly [PRE_ENCODED]: true };

/** UTF-8 JSON of pre-encoded values, by identity. Filled only by preEncode (at compile time), never per request. */
const preEncodedJson = new WeakMap<object, Uint8Array>();

const utf8 = (v: unknown) => Buffer.from(JSON.stringify(v), 'utf8');

/**
 * Freezes `value` all the way down and records its JSON, and that of each item when it is a list (a patch may add
 * the items one by one: `/spec/volumes/-`). Call it when a configuration is compiled, not per request.
 */
export function preEncode<T extends object>(value: T): PreEncoded<T> {
  deepFreeze(value);
  preEncodedJson.set(value, utf8(value));
  if (Array.isArray(value)) {
    for (const item of value) if (typeof item === 'object' && item !== null) preEncodedJson.set(item, utf8(item));
  }
  return value as unknown as PreEncoded<T>;
}

/**
 * Where a patch starts being written: a buffer of each call's own, taken from Node's shared allocation pool (which
 * serves requests under 4 KiB without allocating), so no state is shared between reviews. The CNI-mode patch is
 * ~2 KB; a longer one grows into a buffer of its own, dropped with the call.
 */
const FIRST_BYTES = 4000;

/** Strings up to this length are written by a loop in JavaScript; longer ones by Buffer#write (a call into C++). */
const SHORT = 48;

class PatchWriter {
  buf = Buffer.allocUnsafe(FIRST_BYTES);
  at = 0;

  /** Room for `bytes` more. */
  private room(bytes: number): void {
    if (this.at + bytes <= this.buf.length) return;
    const bigger = Buffer.allocUnsafe(Math.max(2 * this.buf.length, this.at + bytes));
    this.buf.copy(bigger, 0, 0, this.at);
    this.buf = bigger;
  }

  /** `s` as UTF-8. */
  text(s: string): void {
    const len = s.length;
    this.room(3 * len);
    if (len > SHORT) {
      this.at += this.buf.write(s, this.at, 'utf8');
      return;
    }
    const b = this.buf;
    let at = this.at;
    for (let i = 0; i < len; i++) {
      const c = s.charCodeAt(i);
      if (c >= 0x80) {
        this.at = at + b.write(s.slice(i), at, 'utf8');
        return;
      }
      b[at++] = c;
    }
    this.at = at;
  }

  /**
   * `s` as a JSON string, as JSON.stringify writes it. A short string (an op, a path, a label value) of printable
   * ASCII is copied between quotes by the loop, with `"` and `\\` escaped; a longer one (the status annotation, JSON
   * in a string) or one with a control character or anything beyond ASCII is left to JSON.stringify, which escapes
   * a long string faster than the loop (measured: 0.3 µs per corpus review).
   */
  string(s: string): void {
    const len = s.length;
    if (len > SHORT) {
      this.text(JSON.stringify(s));
      return;
    }
    this.room(2 * len + 2);
    const b = this.buf;
    let at = this.at;
    b[at++] = 0x22;
    for (let i = 0; i < len; i++) {
      const c = s.charCodeAt(i);
      if (c < 0x20 || c >= 0x7f) {
        this.text(JSON.stringify(s));
        return;
      }
      if (c === 0x22 || c === 0x5c) b[at++] = 0x5c;
      b[at++] = c;
    }
    b[at++] = 0x22;
    this.at = at;
  }

  /** JSON.stringify's text for a JSON value, with pre-encoded values (also as list items) copied in. */
  value(v: unknown): void {
    if (typeof v === 'string') this.string(v);
    else if (v === true || v === false || v === null) this.text(String(v));
    // Numbers; in a list, what JSON has no value for (undefined, a function, a symbol) is null.
    else if (typeof v !== 'object') this.text(JSON.stringify(v) ?? 'null');
    else this.object(v);
  }

  private object(v: object): void {
    const known = preEncodedJson.get(v);
    if (known !== undefined) {
      this.room(known.length);
      this.buf.set(known, this.at);
      this.at += known.length;
    } else if (!Array.isArray(v)) {
      this.members(v as Record<string, unknown>);
    } else {
      // A list built for this pod from templates (the init containers to add): its items are pre-encoded.
      this.text('[');
      for (let i = 0; i < v.length; i++) {
        if (i > 0) this.text(',');
        this.value(v[i]);
      }
      this.text(']');
    }
  }

  /**
   * An object built for this pod (a token mount, an affinity term) member by member, as JSON.stringify writes it:
   * its own enumerable keys in their order, members JSON cannot hold left out. Cheaper than JSON.stringify of the
   * object and a copy of its text (measured: a ServiceAccount token mount). An object with a toJSON method (none that
   * meshgate builds, none that JSON.parse makes) is left to JSON.stringify.
   */
  private members(v: Record<string, unknown>): void {
    if (typeof v.toJSON === 'function') {
      this.text(JSON.stringify(v));
      return;
    }
    this.text('{');
    let first = true;
    for (const k of Object.keys(v)) {
      const x = v[k];
      if (x === undefined || typeof x === 'function' || typeof x === 'symbol') continue;
      if (!first) this.text(',');
      first = false;
      this.string(k);
      this.text(':');
      this.value(x);
    }
    this.text('}');
  }

  /** The JSON text of a JSON Patch; returns the buffer and the length written. */
  patch(ops: ReadonlyArray<{ op: string; path: string; value?: unknown }>): { buf: Buffer; length: number } {
    this.text('[');
    for (let i = 0; i < ops.length; i++) {
      const o = ops[i];
      this.text(i > 0 ? ',{"op":' : '{"op":');
      this.string(o.op);
      this.text(',"path":');
      this.string(o.path);
      // As JSON.stringify: a member whose value JSON cannot hold (undefined, a function, a symbol) is left out.
      const v = o.value;
      if (v !== undefined && typeof v !== 'function' && typeof v !== 'symbol') {
        this.text(',"value":');
        this.value(v);
      }
      this.text('}');
    }
    this.text(']');
    return { buf: this.buf, length: this.at };
  }
}

/** The JSON text of a JSON Patch. */
export function jsonPatch(ops: ReadonlyArray<{ op: string; path: string; value?: unknown }>): string {
  const { buf, length } = new PatchWriter().patch(ops);
  return buf.toString('utf8', 0, length);
}

/** Base64 of the JSON of a JSON Patch, as an AdmissionReview response's `patch` carries it. */
export function base64JsonPatch(ops: ReadonlyArray<{ op: string; path: string; value?: unknown }>): string {
  const { buf, length } = new PatchWriter().patch(ops);
  return buf.toString('base64', 0, length);
}
