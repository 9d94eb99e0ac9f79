/**
 * Shared, frozen JSON Patch ops: the same op, path and value give the same object, so a patch made only of them
 * is recognised by identity and its base64 is encoded once (util/base64-json.ts). Only values that are shared
 * themselves qualify (frozen objects such as the container templates and config lists, and strings); any other
 * value gets a plain op of its own. Bounded per op kind, since some paths carry indices.
 */
import type { PatchOp } from './patch.ts';
import { cached } from '../util/cache.ts';

interface Slot {
  objects: WeakMap<object, PatchOp>;
  strings: Map<string, PatchOp>;
  bare?: PatchOp;
}

const slots = new Map<PatchOp['op'], Map<string, Slot>>();
const MAX_PATHS = 4096;

const newPathMap = () => new Map<string, Slot>();
const newSlot = (): Slot => ({ objects: new WeakMap(), strings: new Map() });

function slot(op: PatchOp['op'], path: string): Slot {
  return cached(cached(slots, op, newPathMap), path, newSlot, MAX_PATHS);
}

export function sharedOp(op: 'remove', path: string): PatchOp;
export function sharedOp(op: 'add' | 'replace', path: string, value: unknown): PatchOp;
export function sharedOp(op: PatchOp['op'], path: string, value?: unknown): PatchOp {
  if (op === 'remove') {
    const s = slot(op, path);
    return (s.bare ??= Object.freeze({ op, path }));
  }
  const make = () => Object.freeze({ op, path, value }) as PatchOp;
  if (typeof value === 'string') return cached(slot(op, path).strings, value, make, MAX_PATHS);
  if (value !== null && typeof value === 'object' && Object.isFrozen(value)) return cached(slot(op, path).objects, value, make);
  return { op, path, value } as PatchOp;
}
