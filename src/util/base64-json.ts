/**
 * The patch encoder: an AdmissionReview answer carries its JSON Patch (RFC 6902) as base64 of its JSON text.
 *
 * Most of meshgate's patch is the same in every review: the containers, volumes and other templates the
 * configuration compiles to. `preEncode` serialises such a value once, when the configuration is compiled, and the
 * encoder copies that JSON into every patch holding the value; everything else in a patch (paths, the status
 * annotation, values built for this pod) is serialised per review. The text is then base64-encoded in one go.
 *
 * The only memo is the JSON of pre-encoded values, and its key is explicit: the value itself (identity). `preEncode`
 * deep-freezes the value before it serialises it, so the JSON cannot go stale; a copy (`{ ...template, resources }`)
 * is another key and is serialised afresh. Nothing a request carries is added to it, so its size is the number of
 * templates of the configurations alive (a handful each), and it is held weakly: an entry goes with its template.
 *
 * Decoded, the patch parses to exactly the ops given (test/util/base64-json.test.ts: against JSON.stringify, over
 * every corpus pod's patch under every mesh profile).
 */
import { deepFreeze } from './json.ts';
import type { DeepReadonly } from './readonly.ts';

declare const PRE_ENCODED: unique symbol;

/** A value whose JSON the encoder already holds: deeply read-only, so the JSON stays true. */
export type PreEncoded<T> = DeepReadonly<T> & { readonly [PRE_ENCODED]: true };

/** JSON text of pre-encoded values, by identity. Filled only by preEncode (at compile time), never per request. */
const preEncodedJson = new WeakMap<object, string>();

/**
 * Freezes `value` all the way down and records its JSON, and that of each item when it is a list (a patch may add
 * the items one by one: `/spec/volumes/-`). Call it when a configuration is compiled, not per request.
 */
export function preEncode<T extends object>(value: T): PreEncoded<T> {
  deepFreeze(value);
  preEncodedJson.set(value, JSON.stringify(value));
  if (Array.isArray(value)) {
    for (const item of value)
      if (typeof item === 'object' && item !== null) preEncodedJson.set(item, JSON.stringify(item));
  }
  return value as unknown as PreEncoded<T>;
}

/** JSON.stringify's text for a JSON value, with pre-encoded values (also as list items) copied in. */
function jsonOf(v: unknown): string {
  if (typeof v === 'object' && v !== null) {
    const known = preEncodedJson.get(v);
    if (known !== undefined) return known;
    if (Array.isArray(v)) {
      // A list built for this pod from templates (the init containers to add): its items are pre-encoded.
      let s = '[';
      for (let i = 0; i < v.length; i++) {
        const item: unknown = v[i];
        if (i > 0) s += ',';
        s += item === undefined || typeof item === 'function' || typeof item === 'symbol' ? 'null' : jsonOf(item);
      }
      return `${s}]`;
    }
  }
  return JSON.stringify(v);
}

/** `{"op":…,"path":` for the three ops meshgate writes (RFC 6902 has six; any other is serialised as it is). */
const OP_OPENINGS: Readonly<Record<string, string>> = {
  add: '{"op":"add","path":',
  remove: '{"op":"remove","path":',
  replace: '{"op":"replace","path":',
};

/** The JSON text of a JSON Patch. */
export function jsonPatch(ops: ReadonlyArray<{ op: string; path: string; value?: unknown }>): string {
  let s = '[';
  for (let i = 0; i < ops.length; i++) {
    const o = ops[i];
    if (i > 0) s += ',';
    s += Object.hasOwn(OP_OPENINGS, o.op) ? OP_OPENINGS[o.op] : `{"op":${JSON.stringify(o.op)},"path":`;
    s += JSON.stringify(o.path);
    // As JSON.stringify: a member whose value is undefined (or a function) is left out.
    if ('value' in o && o.value !== undefined && typeof o.value !== 'function') s += `,"value":${jsonOf(o.value)}`;
    s += '}';
  }
  return `${s}]`;
}

/**
 * Where a patch's UTF-8 bytes are written to be base64-encoded: reused by every call (each finishes before the
 * next begins, and nothing keeps it), instead of a new Buffer per review. 64 KiB holds any ordinary patch; a longer
 * text takes the allocating path.
 */
const scratch = Buffer.allocUnsafe(64 * 1024);

/** Base64 of the JSON of a JSON Patch, as an AdmissionReview response's `patch` carries it. */
export function base64JsonPatch(ops: ReadonlyArray<{ op: string; path: string; value?: unknown }>): string {
  const text = jsonPatch(ops);
  // A UTF-16 code unit is at most 3 UTF-8 bytes: a text that might not fit is encoded the allocating way.
  if (text.length * 3 > scratch.length) return Buffer.from(text, 'utf8').toString('base64');
  const n = scratch.write(text, 0, 'utf8');
  return scratch.toString('base64', 0, n);
}
