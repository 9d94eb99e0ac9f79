/**
 * JSON helpers for the admission hot path. Injected containers are built once per config and shared by every
 * review; they are deep-frozen so nothing can change them, and `cachedJson` remembers the JSON of frozen
 * objects, so a review's patch serialises the big, constant parts (containers, volumes) once per process
 * (util/base64-json.ts goes one step further and keeps their base64).
 * The output is byte-identical to JSON.stringify for plain JSON data (no toJSON, no cycles).
 */

/** A JSON object (mapping): not null, not an array. */
export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

const cache = new WeakMap<object, string>();

/** JSON of a value; frozen objects are serialised once and remembered (they cannot change). */
export function cachedJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  const hit = cache.get(value);
  if (hit !== undefined) return hit;
  if (Array.isArray(value) && !Object.isFrozen(value)) {
    // An op's list of shared containers: the list is new, its items are the frozen templates.
    return `[${value.map((v) => (v === undefined || typeof v === 'function' ? 'null' : cachedJson(v))).join(',')}]`;
  }
  const out = JSON.stringify(value);
  if (Object.isFrozen(value)) cache.set(value, out);
  return out;
}

interface ListNode {
  list?: readonly object[];
  next: WeakMap<object, ListNode>;
}
const lists: ListNode = { next: new WeakMap() };

/**
 * One frozen list per sequence of shared (frozen) items, so a patch value made of shared containers is itself
 * shared and its JSON is cached like theirs. Held weakly by its items: nothing outlives the config.
 */
export function sharedList<T extends object>(items: readonly T[]): readonly T[] {
  let node = lists;
  for (const item of items) {
    let next = node.next.get(item);
    if (!next) node.next.set(item, (next = { next: new WeakMap() }));
    node = next;
  }
  return (node.list ??= Object.freeze([...items])) as readonly T[];
}
