/**
 * A JSON Patch written straight to base64 from cached pieces. An AdmissionReview carries its patch as base64
 * of JSON, and most of meshgate's patch is the same frozen containers in every review.
 *
 * Base64 turns every 3 bytes of input into 4 characters on their own, so the base64 of a text cut into pieces
 * whose byte lengths are multiples of 3 is the concatenation of the pieces' base64. Each piece is therefore
 * padded to such a length with spaces, which JSON allows between tokens (a piece always ends after a value,
 * a `:`, a `,` or a `[`). The base64 of a frozen value's padded JSON is computed once per process and kept
 * with the value; the short texts between values (op names, paths, small values) are kept in a bounded map,
 * since the same few recur in every review; and a whole patch made only of shared ops (inject/shared-op.ts) is
 * encoded once and kept with their sequence. Decoded, the result parses to exactly the ops given
 * (test/util/base64-json.test.ts checks that against JSON.stringify, over every corpus pod's patch).
 */
import { cachedJson, sharedList } from './json.ts';
import { cached } from './cache.ts';

/** Base64 of frozen values' padded JSON (values shared by every review: containers, volumes, affinity terms). */
const frozenPieces = new WeakMap<object, string>();
/** Base64 of padded short texts. Bounded: when full it starts again, so odd inputs cannot grow it. */
const textPieces = new Map<string, string>();
const MAX_TEXT_PIECES = 4096;

/** Base64 of the text padded with spaces to a multiple of 3 bytes. */
function paddedBase64(text: string): string {
  const bytes = Buffer.from(text);
  const pad = (3 - (bytes.length % 3)) % 3;
  return (pad === 0 ? bytes : Buffer.concat([bytes, Buffer.from('  '.slice(0, pad))])).toString('base64');
}

const textPiece = (text: string) => cached(textPieces, text, paddedBase64, MAX_TEXT_PIECES);
const frozenPiece = (value: object) => cached(frozenPieces, value, (v) => paddedBase64(cachedJson(v)));

/**
 * Base64 of a string value's padded JSON, keyed by the string itself: shared strings (a label value, a status
 * annotation recorded once) keep their hash, so a hit costs no serialisation.
 */
const stringPieces = new Map<string, string>();

const stringPiece = (value: string) => cached(stringPieces, value, (v) => paddedBase64(JSON.stringify(v)), MAX_TEXT_PIECES);

/** Base64 of `{"op":…,"path":…` per op and path: two levels, so no key is built per review. */
const opPieces = new Map<string, Map<string, string>>();
const newPieceMap = () => new Map<string, string>();
const SEP = { open: textPiece('['), comma: textPiece(','), close: textPiece(']'), end: textPiece('}'), value: textPiece(',"value":') };

function opPiece(op: string, path: string): string {
  const byPath = cached(opPieces, op, newPieceMap);
  return cached(byPath, path, (p) => textPiece(`{"op":${JSON.stringify(op)},"path":${JSON.stringify(p)}`), MAX_TEXT_PIECES);
}

/** Base64 pieces of one JSON value: frozen objects whole and cached; a fresh list item by item. */
function valuePieces(v: unknown, out: string[]): void {
  if (v !== null && typeof v === 'object' && Object.isFrozen(v)) {
    out.push(frozenPiece(v));
  } else if (Array.isArray(v)) {
    // A fresh list of frozen items (e.g. a requirement added to a term): the items are still cached.
    out.push(SEP.open);
    for (let i = 0; i < v.length; i++) {
      if (i > 0) out.push(SEP.comma);
      valuePieces(v[i] === undefined || typeof v[i] === 'function' ? null : v[i], out);
    }
    out.push(SEP.close);
  } else if (typeof v === 'string') {
    out.push(stringPiece(v));
  } else {
    out.push(textPiece(cachedJson(v)));
  }
}

/** Whole patches made only of shared (frozen) ops, by their sequence (see sharedList): encoded once. */
const wholePatches = new WeakMap<object, string>();

/** Base64 of the JSON of a JSON Patch (RFC 6902), as an AdmissionReview response's `patch` carries it. */
export function base64JsonPatch(ops: ReadonlyArray<{ op: string; path: string; value?: unknown }>): string {
  if (ops.length === 0 || !ops.every((o) => Object.isFrozen(o))) return assemble(ops);
  // Encoded whole, so it needs no padding: the compact JSON, as JSON.stringify writes it.
  return cached(wholePatches, sharedList(ops), (list) => Buffer.from(JSON.stringify(list)).toString('base64'));
}

function assemble(ops: ReadonlyArray<{ op: string; path: string; value?: unknown }>): string {
  const out: string[] = [SEP.open];
  for (let i = 0; i < ops.length; i++) {
    const o = ops[i];
    if (i > 0) out.push(SEP.comma);
    out.push(opPiece(o.op, o.path));
    if ('value' in o && o.value !== undefined) {
      out.push(SEP.value);
      valuePieces(o.value, out);
    }
    out.push(SEP.end);
  }
  out.push(SEP.close);
  return out.join('');
}
