/**
 * The ambient probe's pure parts: where it goes (127.0.0.2:53, or an IPv6-only pod's own address), which explicit
 * addresses are refused, and the retry loop with hand-written attempts (the real handshakes are in
 * test/netns/ambient-probe.test.ts).
 */
import type { NetworkInterfaceInfo } from 'node:os';
import { describe, expect, it } from 'vitest';
import {
  AMBIENT_PROBE_ADDRESS,
  ambientProbeFor,
  ambientProbeProblem,
  DEFAULT_AMBIENT_TIMEOUT_MS,
  validateAmbient,
} from '../../src/validator/ambient.ts';

function nic(address: string, family: 'IPv4' | 'IPv6', internal = false): NetworkInterfaceInfo {
  return {
    address,
    family,
    internal,
    netmask: '',
    mac: '',
    cidr: null,
    ...(family === 'IPv6' ? { scopeid: 0 } : {}),
  } as NetworkInterfaceInfo;
}

describe('ambientProbeFor', () => {
  it.each([
    [
      'dual-stack pod',
      {
        lo: [nic('127.0.0.1', 'IPv4', true), nic('::1', 'IPv6', true)],
        eth0: [nic('10.244.1.5', 'IPv4'), nic('fd00::5', 'IPv6')],
      },
      '127.0.0.2',
      4,
    ],
    ['IPv4 pod', { eth0: [nic('10.244.1.5', 'IPv4')] }, '127.0.0.2', 4],
    [
      'IPv6-only pod: its own global address',
      { lo: [nic('127.0.0.1', 'IPv4', true)], eth0: [nic('fe80::1', 'IPv6'), nic('fd00::5', 'IPv6')] },
      'fd00::5',
      6,
    ],
    ['no interfaces at all', {}, '127.0.0.2', 4],
  ])('%s', (_, interfaces, host, family) => {
    expect(ambientProbeFor(interfaces)).toEqual({ host, port: 53, family });
  });

  it('pins the defaults the webhook relies on', () => {
    expect({ AMBIENT_PROBE_ADDRESS, DEFAULT_AMBIENT_TIMEOUT_MS }).toEqual({
      AMBIENT_PROBE_ADDRESS: '127.0.0.2:53',
      DEFAULT_AMBIENT_TIMEOUT_MS: 10_000,
    });
  });
});

describe('ambientProbeProblem', () => {
  const local = ['127.0.0.1', '10.244.1.5', 'fd00::5'];
  it.each([
    [{ host: '127.0.0.2', port: 53, family: 4 }, undefined],
    [{ host: 'fd00::5', port: 53, family: 6 }, undefined],
    [{ host: '127.0.0.2', port: 80, family: 4 }, /must be 53/],
    [{ host: '127.0.0.1', port: 53, family: 4 }, /exempt it/],
    [{ host: '::1', port: 53, family: 6 }, /exempt it/],
    [{ host: '192.0.2.1', port: 53, family: 4 }, /not an address of this pod/],
  ] as const)('%o', (probe, want) => {
    const got = ambientProbeProblem(probe, local);
    if (want === undefined) expect(got).toBeUndefined();
    else expect(got).toMatch(want);
  });
});

describe('validateAmbient', () => {
  const probe = { host: '127.0.0.2', port: 53, family: 4 } as const;
  function clock() {
    let t = 0;
    return {
      now: () => t,
      sleep: async (ms: number) => {
        t += ms;
      },
    };
  }

  it('retries refused attempts until one connects', async () => {
    const c = clock();
    let n = 0;
    const r = await validateAmbient(
      { probe, timeoutMs: 1000, retryIntervalMs: 100 },
      {
        ...c,
        attempt: async () =>
          ++n < 4 ? { kind: 'failed', code: 'ECONNREFUSED' } : { kind: 'connected', client: '127.0.0.1:40000' },
      },
    );
    expect(r).toEqual({ ok: true, elapsedMs: 300, attempts: 4, client: '127.0.0.1:40000' });
  });

  it('gives up at the deadline with the codes it saw', async () => {
    const c = clock();
    let n = 0;
    const r = await validateAmbient(
      { probe, timeoutMs: 500, retryIntervalMs: 100 },
      { ...c, attempt: async () => (++n % 2 ? { kind: 'failed', code: 'ECONNREFUSED' } : { kind: 'silent' }) },
    );
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.reason).toBe('ambient_not_captured');
    expect(r.attempts).toBe(5);
    expect(r.detail).toMatch(
      /^5 connects to 127\.0\.0\.2:53 over 400ms got no handshake \(ECONNREFUSED ×3, no answer ×2\)/,
    );
  });

  it('an attempt that throws is internal_error, never an exception', async () => {
    const r = await validateAmbient(
      { probe, timeoutMs: 500, retryIntervalMs: 100 },
      {
        ...clock(),
        attempt: async () => {
          throw new Error('boom');
        },
      },
    );
    expect(r).toMatchObject({ ok: false, reason: 'internal_error' });
  });
});
