/**
 * Get-or-build for the admission path's caches. A Map is bounded: once it holds `max` entries it starts
 * again, so keys that come from requests (paths with indices, node names, override values) cannot grow it
 * without limit. A WeakMap needs no bound: its entries go with their keys. `build` gets the key, so hot
 * callers can pass a module-level function instead of allocating a closure per lookup.
 */
export function cached<K, V>(map: Map<K, V>, key: K, build: (key: K) => V, max?: number): V;
export function cached<K extends object, V>(map: WeakMap<K, V>, key: K, build: (key: K) => V): V;
export function cached<K, V>(map: Map<K, V> | WeakMap<K & object, V>, key: K, build: (key: K) => V, max = 4096): V {
  const m = map as Map<K, V>;
  const hit = m.get(key);
  if (hit !== undefined) return hit;
  if (map instanceof Map && map.size >= max) map.clear();
  const value = build(key);
  m.set(key, value);
  return value;
}
