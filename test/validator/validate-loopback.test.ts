/**
 * validateRedirect in-process on loopback, no namespaces: a probe addressed straight at the listener stands in for a
 * working redirect; every other server stands in for what an unredirected probe can reach. Each case checks the
 * reason, so a validator that accepted anything (or refused everything) fails here.
 */
import { createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { ValidateOptions } from '../../src/validator/options.ts';
import { validateRedirect } from '../../src/validator/validate.ts';
import { freePort, listen, startBlackhole, startServer, type Behaviour } from './loopback-servers.ts';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

async function options(probePort: number, overrides: Partial<ValidateOptions> = {}): Promise<ValidateOptions> {
  return { outboundPort: await freePort(), probe: { host: '127.0.0.1', port: probePort, family: 4 }, listenAddress: '127.0.0.1', timeoutMs: 2000, ...overrides };
}

describe('validateRedirect on loopback', () => {
  it('succeeds when the probe reaches the listener (what a working REDIRECT does)', async () => {
    const port = await freePort();
    const result = await validateRedirect(await options(port, { outboundPort: port }));
    expect(result).toMatchObject({ ok: true, listener: `127.0.0.1:${port}` });
    expect(result.elapsedMs).toBeLessThan(2000);
  });

  it('releases the outbound port afterwards, so the proxy can bind it', async () => {
    const port = await freePort();
    await validateRedirect(await options(port, { outboundPort: port }));
    const server = createServer();
    await listen(server, port);
    await new Promise((r) => server.close(r));
  });

  it('a closed port: redirect_missing with the errno', async () => {
    const result = await validateRedirect(await options(await freePort()));
    expect(result).toMatchObject({ ok: false, reason: 'redirect_missing' });
    expect(!result.ok && result.detail).toMatch(/ECONNREFUSED/);
  });

  it.each<[Behaviour, RegExp]>([
    ['http', /not the proof.*HTTP\/1\.1 400|closed.*HTTP\/1\.1 400/],
    ['forge', /not the proof for our token/],
    ['reset', /failed after it was established: ECONNRESET/],
    ['silent', /no proof within 500ms/],
  ])('a %s server at the probe address: wrong_listener', async (behaviour, detail) => {
    const server = await startServer(behaviour);
    cleanups.push(() => server.close());
    const result = await validateRedirect(await options(server.port, { timeoutMs: 500 }));
    expect(result).toMatchObject({ ok: false, reason: 'wrong_listener' });
    expect(!result.ok && result.detail).toMatch(detail);
    expect(server.connections()).toBe(1);
  });

  it('a SYN that is dropped: timeout, close to the deadline', async () => {
    const hole = await startBlackhole();
    cleanups.push(() => hole.close());
    const result = await validateRedirect(await options(hole.port, { timeoutMs: 400 }));
    expect(result).toMatchObject({ ok: false, reason: 'timeout' });
    expect(result.elapsedMs).toBeGreaterThanOrEqual(400);
    expect(result.elapsedMs).toBeLessThan(1000);
  });

  it('the outbound port is taken (the proxy already runs): listen_failed', async () => {
    const squatter = createServer();
    const port = await listen(squatter, 0);
    cleanups.push(() => new Promise((r) => squatter.close(r)));
    const result = await validateRedirect(await options(port, { outboundPort: port }));
    expect(result).toMatchObject({ ok: false, reason: 'listen_failed' });
    expect(!result.ok && result.detail).toMatch(/EADDRINUSE.*before the proxy/);
  });

  it('an unexpected error is a value, not an exception: internal_error', async () => {
    const result = await validateRedirect(await options(1), {
      randomBytes: () => {
        throw new Error('entropy exhausted');
      },
    });
    expect(result).toMatchObject({ ok: false, reason: 'internal_error' });
    expect(!result.ok && result.detail).toMatch(/entropy exhausted/);
  });

  it('measures elapsed time with the injected clock', async () => {
    let t = 1000;
    const port = await freePort();
    const result = await validateRedirect(await options(port, { outboundPort: port }), { now: () => (t += 7) });
    expect(result.ok).toBe(true);
    expect(result.elapsedMs % 7).toBe(0);
    expect(result.elapsedMs).toBeGreaterThan(0);
  });
});
