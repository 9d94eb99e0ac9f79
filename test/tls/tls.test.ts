/**
 * The real HTTPS listener on loopback, as `meshgate serve` runs it with self-signed certificates: a verified
 * POST /mutate, the TLS floor (1.2), ALPN (HTTP/1.1 only: no h2, and with it no Rapid-Reset), the certificate's
 * SANs and backdating, and graceful shutdown (readiness off while draining, in-flight requests complete).
 */
import { describe, it, expect, afterEach } from 'vitest';
import https from 'node:https';
import { X509Certificate } from 'node:crypto';
import type { RunningServer } from '../../src/server/start.ts';
import { podReview, type ReviewResponse } from '../http/helpers.ts';
import { HOST, handshake, request, serve, type HttpsResult } from './helpers.ts';

const servers: RunningServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.shutdown()));
});

async function started(drainSeconds = 0): Promise<RunningServer & { ca: string }> {
  const s = await serve({ drainSeconds });
  servers.push(s);
  expect(s.ca).toMatch(/^-----BEGIN CERTIFICATE-----/);
  return s as RunningServer & { ca: string };
}

describe('self-signed HTTPS listener', () => {
  it('answers POST /mutate to a client that trusts only the returned CA', async () => {
    const s = await started();
    expect(s.url).toBe(`https://${HOST}:${s.port}`);
    const res = await request(s.port, {
      ca: s.ca,
      method: 'POST',
      path: '/mutate',
      body: JSON.stringify(podReview('tls-1', { nodeName: 'n1' })),
    });
    expect(res.status).toBe(200);
    expect(res.socket.authorized).toBe(true);
    const body = JSON.parse(res.body) as ReviewResponse;
    expect(body.response).toMatchObject({ uid: 'tls-1', allowed: true, patchType: 'JSONPatch' });
    // The DNS SAN works too, and a client without the CA is refused.
    expect((await request(s.port, { ca: s.ca, path: '/healthz', servername: 'localhost' })).status).toBe(200);
    await expect(request(s.port, { path: '/healthz' })).rejects.toThrow(/self-signed|unable to verify|certificate/i);
  });

  it('refuses TLS 1.1 and accepts TLS 1.2 and 1.3', async () => {
    const s = await started();
    // SECLEVEL=0 lets this client offer TLS 1.1 at all, so the refusal is the server's, not the client's.
    const legacy = { ca: s.ca, ciphers: 'DEFAULT@SECLEVEL=0', minVersion: 'TLSv1' as const };
    const err = await handshake(s.port, { ...legacy, maxVersion: 'TLSv1.1' }).then(
      (h) => {
        h.socket.destroy();
        return new Error(`negotiated ${h.protocol}`);
      },
      (e: Error) => e,
    );
    expect((err as Error & { code?: string }).code ?? err.message).toMatch(/PROTOCOL_VERSION|UNSUPPORTED_PROTOCOL/);
    for (const [version, want] of [
      ['TLSv1.2', 'TLSv1.2'],
      ['TLSv1.3', 'TLSv1.3'],
    ] as const) {
      const h = await handshake(s.port, { ...legacy, maxVersion: version });
      expect(h.protocol).toBe(want);
      h.socket.destroy();
    }
  });

  it('never negotiates h2: an h2-only client is refused, an h2-or-http/1.1 client gets http/1.1', async () => {
    const s = await started();
    const h2only = await handshake(s.port, { ca: s.ca, ALPNProtocols: ['h2'] }).then(
      (h) => {
        h.socket.destroy();
        return h.alpn;
      },
      (e: Error & { code?: string }) => e.code ?? e.message,
    );
    expect(h2only).not.toBe('h2');
    const both = await handshake(s.port, { ca: s.ca, ALPNProtocols: ['h2', 'http/1.1'] });
    expect(both.alpn).toBe('http/1.1');
    both.socket.destroy();
  });

  it('serves a certificate for IP 127.0.0.1 and localhost, signed by the CA, backdated a few minutes', async () => {
    const before = Date.now();
    const s = await started();
    const h = await handshake(s.port, { ca: s.ca });
    const leaf = new X509Certificate(h.cert.raw);
    h.socket.destroy();
    const ca = new X509Certificate(s.ca);
    expect(leaf.subjectAltName?.split(', ')).toEqual(expect.arrayContaining(['IP Address:127.0.0.1', 'DNS:localhost']));
    expect(leaf.checkIP('127.0.0.1')).toBe('127.0.0.1');
    expect(leaf.checkHost('localhost')).toBe('localhost');
    expect(leaf.ca).toBe(false);
    expect(ca.ca).toBe(true);
    expect(leaf.verify(ca.publicKey)).toBe(true);
    expect(leaf.checkIssued(ca)).toBe(true);
    // Backdated so an apiserver whose clock runs a little behind still accepts it (X.509 has second precision).
    const backdate = before - new Date(leaf.validFrom).getTime();
    expect(backdate).toBeGreaterThanOrEqual(2 * 60_000);
    expect(backdate).toBeLessThanOrEqual(10 * 60_000);
    expect(before - new Date(ca.validFrom).getTime()).toBeGreaterThanOrEqual(2 * 60_000);
    expect(new Date(leaf.validTo).getTime()).toBeGreaterThan(before + 300 * 24 * 3600_000);
  });
});

describe('graceful shutdown', () => {
  /** A POST whose headers and first half of body are sent now; the rest when finish() is called. */
  function halfSent(
    port: number,
    ca: string,
    uid: string,
  ): { finish(): Promise<HttpsResult>; connected: Promise<void> } {
    const body = JSON.stringify(podReview(uid, { nodeName: 'n1' }));
    const half = Math.floor(body.length / 2);
    let settle!: { resolve: (r: HttpsResult) => void; reject: (e: Error) => void };
    const result = new Promise<HttpsResult>((resolve, reject) => (settle = { resolve, reject }));
    const req = https.request(
      {
        host: HOST,
        port,
        path: '/mutate',
        method: 'POST',
        ca,
        agent: false,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          settle.resolve({
            status: res.statusCode ?? 0,
            body: Buffer.concat(chunks).toString(),
            socket: res.socket as never,
            reusedSocket: false,
          }),
        );
      },
    );
    req.on('error', (e) => settle.reject(e));
    req.flushHeaders();
    req.write(body.slice(0, half));
    const connected = new Promise<void>((resolve) =>
      req.once('socket', (sock) => sock.once('secureConnect', () => setTimeout(resolve, 100))),
    );
    return {
      connected,
      finish: () => {
        req.end(body.slice(half));
        return result;
      },
    };
  }

  it('turns readiness off while draining, finishes the in-flight request, then stops listening', async () => {
    const s = await started(1);
    expect((await request(s.port, { ca: s.ca, path: '/readyz' })).status).toBe(200);
    const inflight = halfSent(s.port, s.ca, 'inflight-1');
    await inflight.connected;

    const t0 = Date.now();
    const done = s.shutdown();
    const ready = await request(s.port, { ca: s.ca, path: '/readyz' });
    expect(ready.status).toBe(503);
    expect(JSON.parse(ready.body)).toEqual({ status: 'not ready', why: 'shutting down' });
    // Liveness is not readiness: a draining server is not dead.
    expect((await request(s.port, { ca: s.ca, path: '/healthz' })).status).toBe(200);

    const res = await inflight.finish();
    expect(res.status).toBe(200);
    expect((JSON.parse(res.body) as ReviewResponse).response).toMatchObject({ uid: 'inflight-1', allowed: true });
    await done;
    expect(Date.now() - t0).toBeGreaterThanOrEqual(950);
    await expect(request(s.port, { ca: s.ca, path: '/readyz' })).rejects.toThrow(/ECONNREFUSED/);
  });

  it('from the moment draining starts every answer tells the client to close its connection', async () => {
    // A webhook POST that fails on a reused connection is not retried by the apiserver: a connection cut just as it
    // is reused would refuse a pod (EOF). Draining answers with Connection: close, so none is reused (drain.ts).
    const s = await started(1);
    const agent = new https.Agent({ keepAlive: true, maxSockets: 1 });
    const review = JSON.stringify(podReview('drain-1'));
    const first = await request(s.port, { ca: s.ca, path: '/validate', method: 'POST', body: review, agent });
    expect(first.connection).toBe('keep-alive');
    const done = s.shutdown();
    const during = await request(s.port, { ca: s.ca, path: '/validate', method: 'POST', body: review, agent });
    expect(during.status).toBe(200);
    expect(during.reusedSocket).toBe(true);
    expect(during.connection).toBe('close');
    agent.destroy();
    await done;
  });

  it('a request still uploading when the listener closes (after the drain) completes', async () => {
    const s = await started(1);
    const inflight = halfSent(s.port, s.ca, 'inflight-2');
    await inflight.connected;
    const done = s.shutdown();
    await new Promise((r) => setTimeout(r, 1300));
    const res = await inflight.finish();
    expect(res.status).toBe(200);
    expect((JSON.parse(res.body) as ReviewResponse).response.uid).toBe('inflight-2');
    await done;
  });
});
