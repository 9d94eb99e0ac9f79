/**
 * Certificate rotation without restarts. File-backed pairs (--cert-file/--key-file) are swapped the way the
 * kubelet updates a mounted Secret (new payload dir, atomic rename of the `..data` symlink) or by renaming
 * files over the old ones: new connections get the new pair, established keep-alive connections keep working,
 * and a broken update keeps the old pair. Self-signed pairs renew themselves at two thirds of their life.
 */
import { describe, it, expect, afterEach } from 'vitest';
import https from 'node:https';
import { mkdtempSync, mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { SelfSignedSource, issueSelfSigned, type IssuedPair } from '../../src/tls/self-signed.ts';
import { renewAt } from '../../src/tls/authority.ts';
import type { CertPair } from '../../src/tls/source.ts';
import type { RunningServer } from '../../src/server/start.ts';
import { capturingLogger, handshake, request, serve, servedSerial, waitFor } from './helpers.ts';

const SANS = ['127.0.0.1', 'localhost'];
const DAY = 24 * 3600_000;
const serialOf = (pem: string): string => new X509Certificate(pem).serialNumber.toUpperCase();

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A certificate directory, updated either like the kubelet's AtomicWriter or by renaming files over. */
class CertDir {
  readonly root = mkdtempSync(join(tmpdir(), 'meshgate-certs-'));
  readonly certFile = join(this.root, 'tls.crt');
  readonly keyFile = join(this.root, 'tls.key');
  readonly layout: 'kubelet' | 'rename';
  #generation = 0;
  #payload?: string;
  constructor(layout: 'kubelet' | 'rename') {
    this.layout = layout;
    cleanups.push(() => rmSync(this.root, { recursive: true, force: true }));
  }

  publish(files: { cert: string; key: string }): void {
    const gen = ++this.#generation;
    if (this.layout === 'rename') {
      writeFileSync(join(this.root, `.tls.crt.${gen}`), files.cert);
      writeFileSync(join(this.root, `.tls.key.${gen}`), files.key);
      renameSync(join(this.root, `.tls.crt.${gen}`), this.certFile);
      renameSync(join(this.root, `.tls.key.${gen}`), this.keyFile);
      return;
    }
    // tls.crt -> ..data/tls.crt, ..data -> ..<generation>; the swap is one rename of the ..data symlink.
    const payload = `..2026_01_01_00_00_0${gen}`;
    mkdirSync(join(this.root, payload));
    writeFileSync(join(this.root, payload, 'tls.crt'), files.cert);
    writeFileSync(join(this.root, payload, 'tls.key'), files.key);
    symlinkSync(payload, join(this.root, '..data_tmp'));
    renameSync(join(this.root, '..data_tmp'), join(this.root, '..data'));
    if (gen === 1) {
      symlinkSync('..data/tls.crt', this.certFile);
      symlinkSync('..data/tls.key', this.keyFile);
    }
    if (this.#payload) rmSync(join(this.root, this.#payload), { recursive: true });
    this.#payload = payload;
  }
}

async function fileServer(dir: CertDir): Promise<{ server: RunningServer; lines: Array<Record<string, unknown>> }> {
  const { logger, lines } = capturingLogger('info');
  const server = await serve({ certFile: dir.certFile, keyFile: dir.keyFile, logger });
  cleanups.push(() => server.shutdown());
  return { server, lines };
}

describe('file-backed certificates', () => {
  const [pair1, pair2] = [issueSelfSigned(SANS, DAY, Date.now()), issueSelfSigned(SANS, DAY, Date.now())];
  // Each test pair has its own CA: a connection trusts one of them, so it tells which pair was served.
  const [ca1, ca2] = [pair1.ca!, pair2.ca!];

  it.each(['kubelet', 'rename'] as const)(
    'a %s-style swap reaches new connections; an open keep-alive connection keeps working',
    async (layout) => {
      const dir = new CertDir(layout);
      dir.publish(pair1);
      const { server, lines } = await fileServer(dir);
      expect(await servedSerial(server.port, ca1)).toBe(serialOf(pair1.cert));

      const agent = new https.Agent({ keepAlive: true, maxSockets: 1, ca: ca1 });
      cleanups.push(() => agent.destroy());
      const first = await request(server.port, { agent, path: '/healthz' });
      expect(first.status).toBe(200);
      expect(first.reusedSocket).toBe(false);

      dir.publish(pair2);
      await waitFor(
        'a new connection to be served pair 2',
        async () => (await servedSerial(server.port)) === serialOf(pair2.cert),
        3000,
      );
      expect(await servedSerial(server.port, ca2)).toBe(serialOf(pair2.cert));
      expect(lines.some((l) => l.msg === 'serving certificate swapped')).toBe(true);

      const second = await request(server.port, { agent, method: 'POST', path: '/mutate', body: '{}' });
      expect(second.reusedSocket).toBe(true);
      expect(second.socket).toBe(first.socket);
      expect(second.socket.getPeerCertificate().serialNumber.toUpperCase()).toBe(serialOf(pair1.cert));
      expect(second.status).toBe(400);
      expect((await request(server.port, { ca: ca2, path: '/readyz' })).status).toBe(200);

      // The new context keeps the listener's TLS floor and ALPN list.
      const legacy = handshake(server.port, {
        ca: ca2,
        ciphers: 'DEFAULT@SECLEVEL=0',
        minVersion: 'TLSv1',
        maxVersion: 'TLSv1.1',
      });
      await expect(legacy).rejects.toMatchObject({ code: expect.stringMatching(/PROTOCOL_VERSION/) });
      await expect(handshake(server.port, { ca: ca2, ALPNProtocols: ['h2'] })).rejects.toMatchObject({
        code: expect.stringMatching(/NO_APPLICATION_PROTOCOL/),
      });
    },
  );

  it('a broken or mismatched key keeps serving the old pair, and a good pair afterwards is picked up', async () => {
    const dir = new CertDir('rename');
    dir.publish(pair1);
    const { server, lines } = await fileServer(dir);
    const failures = () => lines.filter((l) => l.msg === 'certificate reload failed; serving the previous pair').length;

    for (const broken of [
      { cert: pair1.cert, key: 'not a key\n' },
      { cert: pair1.cert, key: pair2.key },
      { cert: 'garbage', key: pair1.key },
    ]) {
      const before = failures();
      dir.publish(broken);
      await waitFor('the failed reload to be logged', async () => failures() > before, 3000);
      expect(await servedSerial(server.port, ca1)).toBe(serialOf(pair1.cert));
      expect((await request(server.port, { ca: ca1, path: '/readyz' })).status).toBe(200);
    }

    dir.publish(pair2);
    await waitFor(
      'pair 2 after the broken updates',
      async () => (await servedSerial(server.port)) === serialOf(pair2.cert),
      3000,
    );
    expect(await servedSerial(server.port, ca2)).toBe(serialOf(pair2.cert));
  });
});

describe('self-signed renewal', () => {
  it('renews by itself on real timers, with a new serial and a later expiry, chaining to the CA handed out at start', async () => {
    // A 3 s life: renewal is due two seconds in. No timing assertion (the machine may be busy); the figure is printed.
    const source = new SelfSignedSource({ sans: SANS, validityMs: 3000 });
    cleanups.push(() => source.stop());
    await source.start();
    const first = source.current();
    const startedAt = Date.now();
    const renewed = await new Promise<CertPair>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no renewal within 15 s')), 15_000);
      source.onChange((pair) => {
        clearTimeout(timer);
        resolve(pair);
      });
    });
    const due = renewAt(new X509Certificate(first.cert)) - startedAt;
    console.log(
      `[hot-reload] self-signed 3 s certificate renewed ${Date.now() - startedAt} ms after start; due at ${due} ms (two thirds of a life counted in whole seconds)`,
    );
    expect(serialOf(renewed.cert)).not.toBe(serialOf(first.cert));
    expect(renewed.notAfter.getTime()).toBeGreaterThan(first.notAfter.getTime());
    expect(new X509Certificate(renewed.cert).checkIP('127.0.0.1')).toBe('127.0.0.1');
    // The CA (RunningServer.ca, --write-certs) outlives serving certificates, so renewals keep it.
    expect(renewed.ca).toBe(first.ca);
    expect(new X509Certificate(renewed.cert).verify(new X509Certificate(first.ca!).publicKey)).toBe(true);
    expect(source.healthy()).toBe(true);
  });

  it('a lone process rotates its CA with an overlap too: [A], then [A, B] while A signs, then [B]', async () => {
    let now = Math.floor(Date.now() / 1000) * 1000;
    const source = new SelfSignedSource({
      sans: SANS,
      validityMs: 3600_000,
      caValidityMs: 3 * 3600_000,
      overlapMs: 600_000,
      now: () => now,
    });
    await source.start();
    source.stop(); // the test moves the clock and syncs by hand
    const bundles: number[] = [];
    const sizes = () => (source.current().ca!.match(/BEGIN CERTIFICATE/g) ?? []).length;
    for (let minute = 0; minute <= 3 * 60; minute++) {
      now += 60_000;
      await source.sync();
      if (bundles.at(-1) !== sizes()) bundles.push(sizes());
    }
    expect(bundles).toEqual([1, 2, 1]);
    expect(source.healthy()).toBe(true);
  });

  it('issueSelfSigned makes a P-256 CA and a leaf for every SAN, backdated, valid for validityMs', () => {
    const now = Date.now();
    const pair: IssuedPair = issueSelfSigned(['10.0.0.1', 'meshgate.meshgate.svc', '::1'], 60_000, now);
    const leaf = new X509Certificate(pair.cert);
    expect(leaf.subjectAltName).toBe('IP Address:10.0.0.1, DNS:meshgate.meshgate.svc, IP Address:0:0:0:0:0:0:0:1');
    expect(leaf.verify(new X509Certificate(pair.ca!).publicKey)).toBe(true);
    expect(leaf.publicKey.asymmetricKeyDetails?.namedCurve).toBe('prime256v1');
    expect(new Date(leaf.validFrom).getTime()).toBeLessThan(now - 60_000);
    expect(Math.abs(pair.notAfter.getTime() - (now + 60_000))).toBeLessThan(1000);
    expect(leaf.checkPrivateKey(createPrivateKey(pair.key))).toBe(true);
  });
});
