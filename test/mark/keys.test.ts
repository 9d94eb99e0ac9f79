import { afterEach, describe, expect, it } from 'vitest';
import { MarkKeySource } from '../../src/mark/key-source.ts';
import { keyRing, markKey, readKeyRing } from '../../src/mark/keys.ts';
import { KEY_A, KEY_B, keyDir } from '../support/mark.ts';

const dirs: Array<ReturnType<typeof keyDir>> = [];
function dir(files?: Record<string, Buffer | string>) {
  const d = keyDir(files);
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) d.cleanup();
});

const A = markKey(KEY_A).id;
const B = markKey(KEY_B).id;
const C = Buffer.alloc(32, 'c');

describe('readKeyRing', () => {
  it.each([
    ['key only', { key: KEY_A }, A, [A]],
    ['key and previous', { key: KEY_B, previous: KEY_A }, B, [B, A]],
    ['key, next and previous', { key: KEY_A, next: KEY_B, previous: C }, A, [A, B, markKey(C).id]],
    ['the same key twice counts once', { key: KEY_A, previous: KEY_A }, A, [A]],
    [
      'openssl rand -base64 32 text is a key as it is',
      { key: 'q2Vz1q3v2gkH8u4e0N2dWQmC1s9Yb0f3o7vX6nR1tLw=\n' },
      expect.any(String),
      [expect.any(String)],
    ],
  ] as const)('%s', (_n, files, signer, verifiers) => {
    const r = readKeyRing(dir(files as Record<string, Buffer | string>).dir);
    expect(r.ok && { signer: r.ring.signer.id, verifiers: r.ring.verifiers.map((k) => k.id) }).toEqual({
      signer,
      verifiers,
    });
  });

  it.each([
    ['no key file: absent', {}, true, /key does not exist \(the admission mark Secret is missing or not mounted yet\)/],
    ['previous alone is no signing key', { previous: KEY_A }, true, /key does not exist/],
    ['a short key', { key: 'secret' }, false, /key holds 6 bytes; a mark key needs at least 32 random bytes/],
    ['a short previous key', { key: KEY_A, previous: 'x' }, false, /previous holds 1 bytes/],
    ['a huge file', { key: Buffer.alloc(5000, 1) }, false, /key holds 5000 bytes; a mark key is at most 4096/],
  ] as const)('%s', (_n, files, absent, error) => {
    const r = readKeyRing(dir(files as Record<string, Buffer | string>).dir);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.absent).toBe(absent);
      expect(r.error).toMatch(error);
    }
  });
});

describe('MarkKeySource', () => {
  function logs() {
    const lines: string[] = [];
    return {
      lines,
      log: {
        info: (_f: object, m: string) => void lines.push(`info ${m}`),
        warn: (_f: object, m: string) => void lines.push(`warn ${m}`),
      },
    };
  }

  it('is unhealthy without a key, healthy once the kubelet puts it in the volume', () => {
    const d = dir({});
    const { lines, log } = logs();
    const s = new MarkKeySource({ dir: d.dir, log });
    s.reload();
    expect(s.ring()).toBeUndefined();
    expect(s.healthy()).toEqual({
      ok: false,
      why: expect.stringMatching(/^no admission mark key: .*key does not exist/),
    });
    d.write('key', KEY_A);
    s.reload();
    expect(s.ring()?.signer.id).toBe(A);
    expect(s.healthy()).toEqual({ ok: true });
    expect(lines).toEqual(['warn no admission mark key yet', 'info admission mark keys loaded']);
  });

  it('follows a rotation: next accepted, then promoted, the old one kept as previous', () => {
    const d = dir({ key: KEY_A });
    const s = new MarkKeySource({ dir: d.dir });
    s.reload();
    d.write('next', KEY_B);
    s.reload();
    expect(s.ring()?.verifiers.map((k) => k.id)).toEqual([A, B]);
    expect(s.ring()?.signer.id).toBe(A);
    d.write('key', KEY_B);
    d.write('next', KEY_B);
    d.write('previous', KEY_A);
    s.reload();
    expect(s.ring()?.signer.id).toBe(B);
    expect(s.ring()?.verifiers.map((k) => k.id)).toEqual([B, A]);
  });

  it('keeps the last good keys when the files turn bad, and says so once', () => {
    const d = dir({ key: KEY_A });
    const { lines, log } = logs();
    const s = new MarkKeySource({ dir: d.dir, log });
    s.reload();
    d.write('key', 'short');
    s.reload();
    s.reload();
    expect(s.ring()?.signer.id).toBe(A);
    expect(lines).toEqual([
      'info admission mark keys loaded',
      'warn admission mark keys unreadable; keeping the last good ones',
    ]);
  });

  it('uses a seeded key until the directory holds one, then the directory’s', () => {
    const d = dir({});
    const s = new MarkKeySource({ dir: d.dir });
    s.reload();
    s.seed(keyRing(KEY_B));
    expect(s.ring()?.signer.id).toBe(B);
    expect(s.healthy()).toEqual({ ok: true });
    d.write('key', KEY_A);
    s.reload();
    expect(s.ring()?.signer.id).toBe(A);
  });

  it('tells time in seconds', () => {
    expect(new MarkKeySource({ dir: '/nonexistent', now: () => 1_500_999 }).now()).toBe(1500);
  });
});
