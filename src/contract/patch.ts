/**
 * A JSON Patch operation (RFC 6902) as meshgate's webhooks return them, and RFC 6901 pointer escaping: the shape
 * every part that builds or reads patches shares (policy/mutate/patch.ts builds them; the mesh profiles add theirs).
 */
export type PatchOp =
  | { op: 'add'; path: string; value: unknown }
  | { op: 'remove'; path: string }
  | { op: 'replace'; path: string; value: unknown };

/** RFC 6901 escaping: `~` → `~0`, `/` → `~1` (label keys like meshgate.io/status contain slashes). */
export function escapePointer(segment: string): string {
  const tildes = segment.includes('~') ? segment.replaceAll('~', '~0') : segment;
  return tildes.includes('/') ? tildes.replaceAll('/', '~1') : tildes;
}
