/**
 * Structural equality of JSON values, key order ignored and an absent key equal to `undefined`: how a container
 * read from a review is compared with the template meshgate built it from.
 */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((v, i) => sameJson(v, bb[i]));
  }
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  // Every key of either side, without building their union: on the admission path for every contract check.
  for (const k in ao) if (Object.hasOwn(ao, k) && !sameJson(ao[k], bo[k])) return false;
  for (const k in bo) if (Object.hasOwn(bo, k) && !Object.hasOwn(ao, k) && !sameJson(undefined, bo[k])) return false;
  return true;
}
