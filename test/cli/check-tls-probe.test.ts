/**
 * The TLS handshake `meshgate check` makes with a webhook endpoint, against real servers on loopback: it returns the
 * certificate served, and a one-line reason when the port is closed or the server never completes a handshake.
 */
import { X509Certificate } from 'node:crypto';
import { createServer as createTcpServer, type Server, type Socket } from 'node:net';
import { createServer as createTlsServer } from 'node:tls';
import { afterAll, describe, expect, it } from 'vitest';
import { probeTls } from '../../src/check/tls-probe.ts';
import { issueSelfSigned } from '../../src/tls/authority.ts';
import { freePort } from '../e2e/harness/net.ts';

const servers: Server[] = [];
const sockets = new Set<Socket>();
afterAll(async () => {
  for (const s of sockets) s.destroy();
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
});

function listen<T extends Server>(server: T): Promise<number> {
  servers.push(server);
  server.on('connection', (s: Socket) => sockets.add(s));
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)),
  );
}

describe('probeTls', () => {
  it('returns the certificate the server serves', async () => {
    const pair = issueSelfSigned(['127.0.0.1'], 86_400_000, Date.now());
    const port = await listen(createTlsServer({ cert: pair.cert, key: pair.key }, (s) => s.end()));
    const probe = await probeTls('127.0.0.1', port, '127.0.0.1');
    expect(probe).toMatchObject({ target: `127.0.0.1:${port}`, host: '127.0.0.1' });
    expect(probe.error).toBeUndefined();
    expect(new X509Certificate(probe.chain![0]).fingerprint256).toBe(new X509Certificate(pair.cert).fingerprint256);
  });

  it('says why there was no handshake: a closed port, or a server that never answers', async () => {
    const closed = await probeTls('127.0.0.1', await freePort(), '127.0.0.1');
    expect(closed.chain).toBeUndefined();
    expect(closed.error).toMatch(/^ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:\d+$/);
    const silent = await listen(createTcpServer(() => undefined));
    const mute = await probeTls('127.0.0.1', silent, '127.0.0.1', 300);
    expect(mute).toMatchObject({ error: 'no TLS handshake within 300 ms' });
  });
});
