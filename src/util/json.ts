/** JSON helpers: the object test every decoder uses, and the deep freeze behind compiled, shared values. */

/** A JSON object (mapping): not null, not an array. */
export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Freezes `value` and everything it holds, so a value shared by every review (the compiled configuration, its
 * templates) cannot be changed by any of them; its type says the same (`DeepReadonly`, util/readonly.ts). Every
 * level is visited, including ones already frozen: a frozen object may hold mutable ones.
 */
export function deepFreeze<T>(value: T, seen = new WeakSet<object>()): T {
  if (typeof value === 'object' && value !== null && !seen.has(value)) {
    seen.add(value);
    for (const v of Object.values(value)) deepFreeze(v, seen);
    Object.freeze(value);
  }
  return value;
}

/**
 * JSON.stringify(s) for a string, cheaper for the strings an answer is made of (uids, reason codes, container names):
 * printable ASCII holding no `"` or `\` needs no escape and is put between quotes as it is; anything else goes to
 * JSON.stringify. The call into JSON.stringify is most of what it costs for a short string (~140 ns for a uid).
 */
export function jsonString(s: string): string {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c) return JSON.stringify(s);
  }
  return `"${s}"`;
}

/** JSON.stringify(xs) for a list of strings, by jsonString. */
export function jsonStrings(xs: readonly string[]): string {
  if (xs.length === 0) return '[]';
  let s = `[${jsonString(xs[0])}`;
  for (let i = 1; i < xs.length; i++) s += `,${jsonString(xs[i])}`;
  return `${s}]`;
}
