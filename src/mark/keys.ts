/**
 * The keys of the admission mark (src/mark/mark.ts): random secret bytes only meshgate's webhook and repair
 * controller read, from a mounted Secret (the chart's `<fullname>-admission-mark`, one file per Secret key):
 *   key       signs new marks and verifies them;
 *   next      verifies only: a key on its way in, so that every replica accepts it before any signs with it;
 *   previous  verifies only: the key before, so marks already on running pods stay valid after a rotation.
 * docs/security.md ("The admission mark") gives the rotation steps. A key is its file's bytes as they are (the
 * webhook writes 32 random bytes; `openssl rand -base64 32` text works as well): at least MIN_KEY_BYTES of them.
 */
import { createHash, createSecretKey, type KeyObject, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** 256 bits, HMAC-SHA256's own size (RFC 2104: a shorter key weakens it). */
export const MIN_KEY_BYTES = 32;
/** A key file is read whole; anything longer is a wrong file, not a key (bounds what a reload costs). */
export const MAX_KEY_BYTES = 4096;

/** The Secret's (and the directory's) key names. */
export const KEY_FILES = { sign: 'key', next: 'next', previous: 'previous' } as const;

export interface MarkKey {
  /** First 8 hex digits of the key's SHA-256: names the key in marks and messages, reveals nothing of it. */
  readonly id: string;
  /**
   * A KeyObject, made once: createHmac given the raw bytes imports them on every call, which cost ~28 µs per mark
   * against ~3 µs with the KeyObject (200,000 marks in a loop, Node 24, this 2-core host).
   */
  readonly secret: KeyObject;
}

/** The signing key and every key a mark may be verified with (the signing key first). */
export interface KeyRing {
  readonly signer: MarkKey;
  readonly verifiers: readonly MarkKey[];
}

export function markKey(secret: Buffer): MarkKey {
  return { id: createHash('sha256').update(secret).digest('hex').slice(0, 8), secret: createSecretKey(secret) };
}

/** A fresh signing key: what the webhook puts in the Secret when it creates it. */
export function generateKey(): Buffer {
  return randomBytes(MIN_KEY_BYTES);
}

export function keyRing(sign: Buffer, others: readonly Buffer[] = []): KeyRing {
  const signer = markKey(sign);
  const verifiers = [signer];
  for (const b of others) {
    const k = markKey(b);
    if (!verifiers.some((v) => v.id === k.id)) verifiers.push(k);
  }
  return { signer, verifiers };
}

export type RingRead = { ok: true; ring: KeyRing } | { ok: false; error: string; absent: boolean };

/**
 * Reads the ring from a directory of key files (a mounted Secret). `absent`: no `key` file yet — the Secret does
 * not exist, or the kubelet has not yet put it in the volume — as opposed to a file that is there but wrong.
 */
export function readKeyRing(dir: string): RingRead {
  const files: Partial<Record<keyof typeof KEY_FILES, Buffer>> = {};
  for (const [role, name] of Object.entries(KEY_FILES) as Array<[keyof typeof KEY_FILES, string]>) {
    const path = join(dir, name);
    let bytes: Buffer;
    try {
      bytes = readFileSync(path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue;
      return { ok: false, absent: false, error: `cannot read ${path}: ${(err as Error).message}` };
    }
    const problem = keyProblem(bytes);
    if (problem) return { ok: false, absent: false, error: `${path} ${problem}` };
    files[role] = bytes;
  }
  if (!files.sign)
    return {
      ok: false,
      absent: true,
      error: `${join(dir, KEY_FILES.sign)} does not exist (the admission mark Secret is missing or not mounted yet)`,
    };
  return {
    ok: true,
    ring: keyRing(
      files.sign,
      [files.next, files.previous].filter((b): b is Buffer => b !== undefined),
    ),
  };
}

function keyProblem(bytes: Buffer): string | undefined {
  if (bytes.length > MAX_KEY_BYTES) return `holds ${bytes.length} bytes; a mark key is at most ${MAX_KEY_BYTES}`;
  if (bytes.length < MIN_KEY_BYTES)
    return (
      `holds ${bytes.length} bytes; a mark key needs at least ${MIN_KEY_BYTES} random bytes ` +
      '(e.g. openssl rand -base64 32)'
    );
  return undefined;
}
