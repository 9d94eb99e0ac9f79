/**
 * A cap on how many objects and arrays one request body may hold, checked before it is parsed. The body cap
 * (7 MiB) bounds bytes, not what they parse to: JSON.parse turns 7 MiB of `{},{},…` into 2.4 million objects,
 * 156 MiB of heap (22 bytes of heap per byte of input; numbers, strings and keys measured 3-6). With at most
 * MAX_JSON_CONTAINERS objects and arrays, a 7 MiB body parses to at most ~40 MiB, whatever its shape.
 *
 * The count skips strings, so text inside a value (an annotation holding JSON) is not counted. Bodies under
 * SCAN_FROM_BYTES are not scanned: at the worst expansion they parse to under 1.5 MiB.
 */

/**
 * 200,000. A pod etcd can store (1.5 MiB) holds about 50,000 objects and arrays at a realistic ~30 bytes each,
 * and an UPDATE carries two; the amplified pod (120,000 empty node-selector terms) still parses and is
 * refused by policy with its own reason. Parsed, 200,000 empty objects are ~14 MiB.
 */
export const MAX_JSON_CONTAINERS = 200_000;

/** 64 KiB: below it the scan costs more than the worst parse it could prevent (22 × 64 KiB ≈ 1.4 MiB). */
export const SCAN_FROM_BYTES = 64 * 1024;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const BRACE = 0x7b;
const BRACKET = 0x5b;

/**
 * The number of `{` and `[` outside strings in `text`, counting no further than `limit + 1`. Invalid JSON is
 * counted as far as it goes; the parser that follows reports it.
 */
export function countContainers(text: string, limit: number): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      // To the closing quote: one preceded by an even number of backslashes.
      let end = text.indexOf('"', i + 1);
      while (end !== -1) {
        let slashes = 0;
        while (text.charCodeAt(end - 1 - slashes) === BACKSLASH) slashes++;
        if (slashes % 2 === 0) break;
        end = text.indexOf('"', end + 1);
      }
      if (end === -1) return n;
      i = end;
    } else if ((c === BRACE || c === BRACKET) && ++n > limit) {
      return n;
    }
  }
  return n;
}

/** An error for fastify's error handler: 413 with a message saying what was counted and the cap. */
export function checkShape(text: string): (Error & { statusCode: number; code: string }) | null {
  if (text.length < SCAN_FROM_BYTES) return null;
  const n = countContainers(text, MAX_JSON_CONTAINERS);
  if (n <= MAX_JSON_CONTAINERS) return null;
  return Object.assign(
    new Error(
      `the body holds more than ${MAX_JSON_CONTAINERS} JSON objects and arrays, meshgate's limit for one review ` +
        '(an object the apiserver can store holds far fewer); it was not parsed',
    ),
    {
      statusCode: 413,
      code: 'too_many_json_values',
    },
  );
}
