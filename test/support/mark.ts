/** Admission mark keys for tests: fixed bytes (never a real cluster's), so failures reproduce. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Marker } from '../../src/mark/admission.ts';
import { type KeyRing, keyRing } from '../../src/mark/keys.ts';
import { issueMark } from '../../src/mark/mark.ts';

export const KEY_A = Buffer.alloc(32, 'a');
export const KEY_B = Buffer.alloc(32, 'b');
export const RING = keyRing(KEY_A);

/** 2026-01-01T00:00:00Z, in seconds: the tests' "now". */
export const T0 = 1_767_225_600;
export const ISO_T0 = '2026-01-01T00:00:00Z';

export function marker(ring: KeyRing | undefined = RING, now = T0): Marker {
  return { ring: () => ring, now: () => now };
}

export function markFor(namespace: string, issued = T0, ring: KeyRing = RING): string {
  return issueMark(ring, namespace, issued);
}

/** A directory holding key files as the kubelet mounts a Secret; `cleanup` removes it. */
export function keyDir(files: Record<string, Buffer | string> = { key: KEY_A }): {
  dir: string;
  write(name: string, bytes: Buffer | string): void;
  cleanup(): void;
} {
  const dir = mkdtempSync(join(tmpdir(), 'meshgate-mark-'));
  const write = (name: string, bytes: Buffer | string) => writeFileSync(join(dir, name), bytes);
  for (const [name, bytes] of Object.entries(files)) write(name, bytes);
  return { dir, write, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}
