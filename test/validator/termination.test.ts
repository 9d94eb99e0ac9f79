/** The termination message: exact fields, one JSON document within the kubelet's 4096-byte limit, best-effort write. */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  formatTerminationMessage,
  TERMINATION_MESSAGE_MAX_BYTES,
  writeTerminationLog,
} from '../../src/validator/termination.ts';
import { TERMINATION_FIELDS } from './termination-fields.ts';

const base = {
  reason: 'not_redirected' as const,
  node: 'n1',
  probeAddress: '127.0.0.6:15002',
  probeScope: 'pod' as const,
  sourceAddress: '127.0.0.1',
  outboundPort: 15001,
  inboundPort: 15006,
  elapsedMs: 3,
  detail: 'no rule rewrote the destination',
};

describe('formatTerminationMessage', () => {
  it('is the message as JSON, fields in a fixed order', () => {
    expect(JSON.parse(formatTerminationMessage(base))).toEqual(base);
    expect(Object.keys(JSON.parse(formatTerminationMessage(base)))).toEqual(TERMINATION_FIELDS);
  });

  it.each([
    ['ascii', 'x'.repeat(10_000)],
    ['escaped', '"\n'.repeat(5_000)],
    ['multi-byte', 'é☃'.repeat(4_000)],
  ])('shortens a huge %s detail to fit the kubelet limit', (_, detail) => {
    const text = formatTerminationMessage({ ...base, detail });
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(TERMINATION_MESSAGE_MAX_BYTES);
    const msg = JSON.parse(text);
    expect(msg.detail).toMatch(/…\[truncated\]$/);
    expect(msg.reason).toBe('not_redirected');
  });
});

describe('writeTerminationLog', () => {
  it('writes the text', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mgv-tl-'));
    const path = join(dir, 'log');
    expect(await writeTerminationLog(path, '{"a":1}')).toBeUndefined();
    expect(readFileSync(path, 'utf8')).toBe('{"a":1}');
    rmSync(dir, { recursive: true });
  });

  it('returns the error instead of throwing', async () => {
    expect(await writeTerminationLog(join(tmpdir(), 'mgv-no-such-dir', 'x', 'log'), '{}')).toMatch(/ENOENT/);
  });
});
