/**
 * Expiry exposed: the gauges read from whatever pair a source serves (self-managed bundles of one or two CAs,
 * a file pair with or without a CA file), and readiness turning false on an expired serving certificate — on
 * the real listener, as the kubelet's probe would see it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Registry } from 'prom-client';
import { registerCertificateMetrics } from '../../src/server/metrics.ts';
import { issueCA, issueLeaf } from '../../src/tls/authority.ts';
import { SelfSignedSource } from '../../src/tls/self-signed.ts';
import type { CertPair } from '../../src/tls/source.ts';
import { request, serve } from './helpers.ts';

const HOUR = 3600_000;
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function scrape(pair: CertPair): Promise<Record<string, number>> {
  const registry = new Registry();
  registerCertificateMetrics(registry, { current: () => pair });
  const text = await registry.metrics();
  return Object.fromEntries(
    text
      .split('\n')
      .filter((l) => l && !l.startsWith('#'))
      .map((l) => {
        const at = l.lastIndexOf(' ');
        return [l.slice(0, at), Number(l.slice(at + 1))];
      }),
  );
}

describe('certificate expiry gauges', () => {
  const now = Date.now();
  const [a, b] = [issueCA(10 * HOUR, now), issueCA(20 * HOUR, now + 1000)];
  const leaf = issueLeaf(b, ['x'], HOUR, now);
  const seconds = (d: Date) => d.getTime() / 1000;

  it('reports the serving certificate and the CA that issued it, and the bundle size (2 during an overlap)', async () => {
    expect(await scrape({ ...leaf, ca: a.cert + b.cert })).toEqual({
      'meshgate_certificate_expiration_timestamp_seconds{certificate="serving"}': seconds(leaf.notAfter),
      'meshgate_certificate_expiration_timestamp_seconds{certificate="ca"}': seconds(b.x509.validToDate),
      meshgate_ca_bundle_certificates: 2,
    });
  });

  it('without a CA bundle (--cert-file without a CA) reports the serving certificate only', async () => {
    expect(await scrape({ cert: leaf.cert, key: leaf.key, notAfter: leaf.notAfter })).toEqual({
      'meshgate_certificate_expiration_timestamp_seconds{certificate="serving"}': seconds(leaf.notAfter),
      meshgate_ca_bundle_certificates: 0,
    });
  });
});

describe('readiness', () => {
  it('turns false once the serving certificate has expired, and true again after a renewal', async () => {
    let now = Math.floor(Date.now() / 1000) * 1000;
    // A 2 min life: the renewed certificate (backdated 5 min) is already valid on the client's real clock.
    const certs = new SelfSignedSource({ sans: ['127.0.0.1'], validityMs: 2 * 60_000, now: () => now });
    const server = await serve({ certSource: certs });
    certs.stop(); // the test moves the clock and renews by hand
    cleanups.push(() => server.shutdown());
    const ca = certs.current().ca!;
    expect((await request(server.port, { ca, path: '/readyz' })).status).toBe(200);
    now += 2 * 60_000 + 1000; // no renewal happened (the source's timer is stopped): expired
    const expired = await request(server.port, { ca, path: '/readyz' });
    expect(expired.status).toBe(503);
    expect(JSON.parse(expired.body)).toEqual({ status: 'not ready', why: 'no valid serving certificate' });
    await certs.sync();
    expect((await request(server.port, { ca, path: '/readyz' })).status).toBe(200);
  });
});
