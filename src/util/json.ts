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
