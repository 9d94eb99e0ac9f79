/**
 * Shared, frozen JSON Patch ops: the same op, path and value give the same object, so a patch made only of them
 * is recognised by identity and its base64 is encoded once (util/base64-json.ts). Only values that are shared
 * themselves qualify (frozen objects such as the container templates and config lists, and strings); any other
 * value gets a plain op of its own. Bounded per op kind, since some paths carry indices.
 */
import type { PatchOp } from './patch.ts';

interface Slot {
  objects: WeakMap<object, PatchOp>;
  strings: Map<string, PatchOp>;
  bare?: PatchOp;
}

const slots = new Map<PatchOp['op'], Map<string, Slot>>();
const MAX_PATHS = 4096;

function slot(op: PatchOp['op'], path: string): Slot {
  let byPath = slots.get(op);
  if (!byPath) slots.set(op, (byPath = new Map()));
  let s = byPath.get(path);
  if (!s) {
    if (byPath.size >= MAX_PATHS) byPath.clear();
    byPath.set(path, (s = { objects: new WeakMap(), strings: new Map() }));
  }
  return s;
}

export function sharedOp(op: 'remove', path: string): PatchOp;
export function sharedOp(op: 'add' | 'replace', path: string, value: unknown): PatchOp;
export function sharedOp(op: PatchOp['op'], path: string, value?: unknown): PatchOp {
  if (op === 'remove') {
    const s = slot(op, path);
    return (s.bare ??= Object.freeze({ op, path }));
  }
  if (typeof value === 'string') {
    const s = slot(op, path);
    const hit = s.strings.get(value);
    if (hit) return hit;
    if (s.strings.size >= MAX_PATHS) s.strings.clear();
    const o = Object.freeze({ op, path, value });
    s.strings.set(value, o);
    return o;
  }
  if (value !== null && typeof value === 'object' && Object.isFrozen(value)) {
    const s = slot(op, path);
    const hit = s.objects.get(value);
    if (hit) return hit;
    const o = Object.freeze({ op, path, value });
    s.objects.set(value, o);
    return o;
  }
  return { op, path, value } as PatchOp;
}
