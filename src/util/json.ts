/**
 * JSON helpers for the admission hot path. Injected containers are built once per config and shared by every
 * review; they are deep-frozen so nothing can change them, and `stringifyCached` remembers the JSON of frozen
 * objects, so a review's patch serialises the big, constant parts (containers, volumes) once per process.
 * The output is byte-identical to JSON.stringify for plain JSON data (no toJSON, no cycles).
 */

export function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

const cache = new WeakMap<object, string>();

export function stringifyCached(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  const hit = cache.get(value);
  if (hit !== undefined) return hit;
  let out: string;
  if (Array.isArray(value)) {
    out = `[${value.map((v) => (v === undefined || typeof v === 'function' ? 'null' : stringifyCached(v))).join(',')}]`;
  } else {
    const parts: string[] = [];
    for (const [k, v] of Object.entries(value)) {
      if (v === undefined || typeof v === 'function' || typeof v === 'symbol') continue;
      parts.push(`${JSON.stringify(k)}:${stringifyCached(v)}`);
    }
    out = `{${parts.join(',')}}`;
  }
  if (Object.isFrozen(value)) cache.set(value, out);
  return out;
}
