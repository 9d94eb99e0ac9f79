/**
 * validateRedirect in-process on this host's loopback, no namespaces and no NAT. A probe addressed straight at a
 * listener stands in for a working redirect; a pod-scope probe to 127.0.0.6 shows what happens when no rule applies
 * (the host has none); every other server stands in for what an unredirected external probe can reach. Each case
 * checks the reason, so a validator that accepted anything (or refused everything) fails here. Every address used is
 * loopback (127.0.0.0/8); the real-rule cases are in test/netns.
 */
import { createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { ValidateOptions } from '../../src/validator/options.ts';
import { validateRedirect, type ValidateResult } from '../../src/validator/validate.ts';
import { freePort, listen, startBlackhole, startServer, type Behaviour } from './loopback-servers.ts';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

/** Capture listeners on free ports; an external-scope probe (no stand-in at the destination) unless overridden. */
async function options(probePort: number, overrides: Partial<ValidateOptions> = {}): Promise<ValidateOptions> {
  return {
    outboundPort: await freePort(),
    inboundPort: await freePort(),
    probe: { host: '127.0.0.1', port: probePort, family: 4 },
    scope: 'external',
    sourceAddress: null,
    listenAddress: '127.0.0.1',
    timeoutMs: 2000,
    ...overrides,
  };
}

/** The Istio-style pod-scope probe, on free ports so parallel runs do not collide. */
async function podProbe(overrides: Partial<ValidateOptions> = {}): Promise<ValidateOptions> {
  return options(0, {
    probe: { host: '127.0.0.6', port: await freePort(), family: 4 },
    scope: 'pod',
    sourceAddress: '127.0.0.1',
    ...overrides,
  });
}

function detail(r: ValidateResult): string {
  return r.ok ? '' : r.detail;
}

describe('validateRedirect on loopback', () => {
  it("succeeds when the probe reaches the outbound listener, and names it and the probe's own end", async () => {
    const port = await freePort();
    const result = await validateRedirect(await options(port, { outboundPort: port }));
    expect(result).toMatchObject({
      ok: true,
      listener: `127.0.0.1:${port}`,
      role: 'outbound',
      client: expect.stringMatching(/^127\.0\.0\.1:\d+$/),
    });
    console.info(`proof on loopback in ${result.elapsedMs}ms`);
  });

  it("succeeds through the inbound listener too (where Istio sends the proxy UID's loopback traffic)", async () => {
    const port = await freePort();
    expect(await validateRedirect(await options(port, { inboundPort: port }))).toMatchObject({
      ok: true,
      listener: `127.0.0.1:${port}`,
      role: 'inbound',
    });
  });

  it('releases every port afterwards (capture ports and the probe address), so the proxy can bind them', async () => {
    const opts = await podProbe();
    await validateRedirect(opts);
    for (const [host, port] of [
      ['127.0.0.1', opts.outboundPort],
      ['127.0.0.1', opts.inboundPort!],
      ['127.0.0.6', opts.probe.port],
    ] as const) {
      const server = createServer();
      await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, host, () => resolve()));
      await new Promise((r) => server.close(r));
    }
  });

  it('pod scope with no rule: the stand-in at the destination answers, not_redirected, with the process identity', async () => {
    const result = await validateRedirect(await podProbe());
    expect(result).toMatchObject({ ok: false, reason: 'not_redirected' });
    expect(detail(result)).toMatch(
      /^connected from 127\.0\.0\.1:\d+ to 127\.0\.0\.6:\d+ .*no rule rewrote the destination.*\(uid \d+ gid \d+\)/,
    );
  });

  it('pod scope: something else already listens on the probe address: listen_failed, nothing sent', async () => {
    let accepted = 0;
    const squatter = createServer((s) => {
      accepted++;
      s.destroy();
    });
    const port = await freePort();
    await new Promise<void>((r) => squatter.listen(port, '127.0.0.6', () => r()));
    cleanups.push(() => new Promise((r) => squatter.close(r)));
    const result = await validateRedirect(await podProbe({ probe: { host: '127.0.0.6', port, family: 4 } }));
    expect(result).toMatchObject({ ok: false, reason: 'listen_failed' });
    expect(detail(result)).toMatch(/listen on 127\.0\.0\.6:\d+ failed with EADDRINUSE.*listens on the probe address/);
    expect(accepted, 'the probe was never sent').toBe(0);
  });

  it("a source address that is not the pod's: internal_error from bind, before any packet", async () => {
    const result = await validateRedirect(await podProbe({ sourceAddress: '203.0.113.7' }));
    expect(result).toMatchObject({ ok: false, reason: 'internal_error' });
    expect(detail(result)).toMatch(/could not bind the probe's source address 203\.0\.113\.7: EADDRNOTAVAIL/);
  });

  it('an external probe to a closed port: redirect_missing with the errno', async () => {
    const result = await validateRedirect(await options(await freePort()));
    expect(result).toMatchObject({ ok: false, reason: 'redirect_missing' });
    expect(detail(result)).toMatch(
      /failed with ECONNREFUSED.*would have reached 127\.0\.0\.1:\d+ \(outbound\), 127\.0\.0\.1:\d+ \(inbound\)/,
    );
  });

  it.each<[Behaviour, RegExp]>([
    ['http', /not a proof.*HTTP\/1\.1 400|closed.*HTTP\/1\.1 400/],
    ['forge', /not a proof for our token and connection/],
    ['reset', /failed after it was established: ECONNRESET/],
    // The probe gets what is left of the 500 ms after listening: up to 500, less by however long listening took
    // (a loaded machine may take more than the usual millisecond or two).
    ['silent', /no proof within ([1-9]\d?|[1-4]\d\d|500)ms/],
  ])('a %s server at the probe address: wrong_listener', async (behaviour, want) => {
    const server = await startServer(behaviour);
    cleanups.push(() => server.close());
    const result = await validateRedirect(await options(server.port, { timeoutMs: 500 }));
    expect(result).toMatchObject({ ok: false, reason: 'wrong_listener' });
    expect(detail(result)).toMatch(want);
    expect(server.connections()).toBe(1);
  });

  it("a relay that forwards the probe to the validator's own listener on a second connection: wrong_listener", async () => {
    const outboundPort = await freePort();
    const relay = await startServer('relay', outboundPort);
    cleanups.push(() => relay.close());
    const result = await validateRedirect(await options(relay.port, { outboundPort }));
    expect(result).toMatchObject({ ok: false, reason: 'wrong_listener' });
    // The listener did answer — the relayed connection — but that proof is bound to the relay's client port.
    expect(detail(result)).toMatch(/not a proof for our token and connection.*answered 1 probes/);
  });

  it('an external probe whose SYN is dropped gives up at the deadline when that is shorter than the SYN window', async () => {
    const hole = await startBlackhole();
    cleanups.push(() => hole.close());
    const result = await validateRedirect(await options(hole.port, { timeoutMs: 400 }));
    expect(result).toMatchObject({ ok: false, reason: 'timeout' });
    // What was left of the 400 ms after the listeners were up: 400, or 399 when setting them up took a millisecond.
    const waited = /no TCP handshake with 127\.0\.0\.1:\d+ within (\d+)ms.*at most one SYN left the pod/.exec(
      detail(result),
    );
    expect(waited, detail(result)).not.toBeNull();
    expect(Number(waited![1])).toBeGreaterThan(0);
    expect(Number(waited![1])).toBeLessThanOrEqual(400);
  });

  it('an external probe whose SYN is dropped gives up after the SYN window, before the retransmission', async () => {
    const hole = await startBlackhole();
    cleanups.push(() => hole.close());
    const result = await validateRedirect(await options(hole.port, { timeoutMs: 3000 }));
    expect(result).toMatchObject({ ok: false, reason: 'timeout' });
    expect(detail(result)).toMatch(/within 800ms/);
    console.info(`dropped SYN: verdict after ${result.elapsedMs}ms (window 800ms, whole timeout 3000ms)`);
  });

  it('the outbound port is taken (the proxy already runs): listen_failed', async () => {
    const squatter = createServer();
    const port = await listen(squatter, 0);
    cleanups.push(() => new Promise((r) => squatter.close(r)));
    const result = await validateRedirect(await options(port, { outboundPort: port }));
    expect(result).toMatchObject({ ok: false, reason: 'listen_failed' });
    expect(detail(result)).toMatch(/EADDRINUSE.*before the proxy/);
  });

  it('an unexpected error is a value, not an exception: internal_error', async () => {
    const result = await validateRedirect(await options(1), {
      randomBytes: () => {
        throw new Error('entropy exhausted');
      },
    });
    expect(result).toMatchObject({ ok: false, reason: 'internal_error' });
    expect(detail(result)).toMatch(/entropy exhausted/);
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
