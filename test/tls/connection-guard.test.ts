/**
 * Issue 33 §7: one client cannot take the webhook's connections. With small limits on loopback (clients told apart by
 * their source address, 127.0.0.x): a client gets at most maxConnectionsPerClient; at the global cap a new client's
 * connection takes the slot of the oldest one that never sent a request, from the client holding the most; when every
 * held connection has served a request a new one is dropped; and a connection silent after its handshake is closed
 * after firstRequestTimeoutMs. Counted in meshgate_overload_refusals_total by limit.
 */
import { afterEach, describe, expect, it } from 'vitest';
import tls from 'node:tls';
import { listening, type Listening } from '../http/listening.ts';
import { podReview } from '../http/helpers.ts';

const servers: Listening[] = [];
const sockets: tls.TLSSocket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A TLS connection from `from`; `closed` resolves when the server closes it. */
function connect(s: Listening, from: string): Promise<{ socket: tls.TLSSocket; closed: Promise<void> } | 'refused'> {
  return new Promise((resolve) => {
    const socket = tls.connect({ host: '127.0.0.1', port: s.port, ca: s.ca, ...({ localAddress: from } as object) });
    sockets.push(socket);
    const closed = new Promise<void>((r) => socket.once('close', () => r()));
    socket.once('secureConnect', () => resolve({ socket, closed }));
    socket.once('error', () => resolve('refused'));
  });
}

/** One review written on `socket` as raw HTTP/1.1 keep-alive (the connection stays open); its status, 0 if none. */
function review(_s: Listening, socket: tls.TLSSocket, uid: string): Promise<number> {
  const body = JSON.stringify(podReview(uid));
  return new Promise((resolve) => {
    let got = '';
    const onData = (d: Buffer) => {
      got += d.toString('latin1');
      const m = /^HTTP\/1\.1 (\d{3})[\s\S]*?\r\n\r\n/.exec(got);
      const length = /content-length: (\d+)/i.exec(got);
      if (m && length && got.length >= m[0].length + Number(length[1])) {
        socket.off('data', onData);
        resolve(Number(m[1]));
      }
    };
    socket.on('data', onData);
    socket.once('close', () => resolve(0));
    socket.write(
      `POST /mutate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
  });
}

const refusals = async (s: Listening) =>
  (await s.app.inject({ method: 'GET', url: '/metrics' })).body
    .split('\n')
    .filter((l) => l.startsWith('meshgate_overload_refusals_total{'))
    .join('\n');

const allow = { '/mutate': () => ({ kind: 'allow', reason: 'ok' }) as const };

describe('connections are shared fairly between clients', () => {
  it('one client gets at most maxConnectionsPerClient; another still connects and is served', async () => {
    const s = await listening(allow, {
      maxConnections: 40,
      maxConnectionsPerClient: 10,
      firstRequestTimeoutMs: 60_000,
    });
    servers.push(s);
    const greedy = await Promise.all(Array.from({ length: 20 }, () => connect(s, '127.0.0.9')));
    await sleep(200);
    const open = greedy.filter((c) => c !== 'refused' && !c.socket.destroyed && c.socket.readyState === 'open');
    console.info(`[connection-guard] greedy client: ${open.length} of 20 connections kept open`);
    expect(open.length).toBe(10);
    const other = await connect(s, '127.0.0.10');
    expect(other).not.toBe('refused');
    if (other !== 'refused') expect(await review(s, other.socket, 'other')).toBe(200);
    expect(await refusals(s)).toMatch(/limit="maxConnectionsPerClient"} 10/);
  });

  it('at the cap a new client takes the slot of an idle connection of the client holding the most', async () => {
    const s = await listening(allow, {
      maxConnections: 30,
      maxConnectionsPerClient: 10,
      firstRequestTimeoutMs: 60_000,
    });
    servers.push(s);
    // Three clients fill the server: 10 idle connections each.
    const held: Array<Awaited<ReturnType<typeof connect>>> = [];
    for (const from of ['127.0.0.21', '127.0.0.22', '127.0.0.23'])
      for (let i = 0; i < 10; i++) held.push(await connect(s, from));
    expect(held.every((c) => c !== 'refused')).toBe(true);
    const newcomer = await connect(s, '127.0.0.30');
    expect(newcomer).not.toBe('refused');
    if (newcomer === 'refused') return;
    expect(await review(s, newcomer.socket, 'newcomer')).toBe(200);
    await sleep(100);
    const closed = held.filter((c) => typeof c !== 'string' && c.socket.destroyed).length;
    console.info(`[connection-guard] at the cap: the newcomer was served; ${closed} idle connection(s) gave way`);
    expect(closed).toBe(1);
    expect(await refusals(s)).toMatch(/limit="evicted"} 1/);
  });

  it('when every connection has served a request, a new one is dropped at the cap', async () => {
    const s = await listening(allow, { maxConnections: 6, maxConnectionsPerClient: 6, firstRequestTimeoutMs: 60_000 });
    servers.push(s);
    const busy = [];
    for (let i = 0; i < 6; i++) {
      const c = await connect(s, '127.0.0.41');
      if (c === 'refused') throw new Error('refused below the cap');
      expect(await review(s, c.socket, `busy-${i}`)).toBe(200);
      busy.push(c);
    }
    const late = await connect(s, '127.0.0.42');
    const dropped =
      late === 'refused' || (await Promise.race([late.closed.then(() => true), sleep(500).then(() => false)]));
    expect(dropped).toBe(true);
    expect(busy.every((c) => !c.socket.destroyed)).toBe(true);
    expect(await refusals(s)).toMatch(/limit="maxConnections"} 1/);
  });

  it('a connection silent after its handshake is closed after firstRequestTimeoutMs; one that asks is not', async () => {
    const s = await listening(allow, { firstRequestTimeoutMs: 500 });
    servers.push(s);
    const silent = await connect(s, '127.0.0.51');
    const asking = await connect(s, '127.0.0.52');
    if (silent === 'refused' || asking === 'refused') throw new Error('refused');
    const t0 = Date.now();
    expect(await review(s, asking.socket, 'asking')).toBe(200);
    await silent.closed;
    console.info(`[connection-guard] the silent connection was closed ${Date.now() - t0} ms after it was opened`);
    await sleep(700);
    expect(asking.socket.destroyed).toBe(false);
    expect(await refusals(s)).toMatch(/limit="firstRequestTimeout"} 1/);
  });

  it("a connection whose first request came late still is not closed at firstRequestTimeoutMs: a trickle is the headers timeout's", async () => {
    const s = await listening(allow, { firstRequestTimeoutMs: 400 });
    servers.push(s);
    const c = await connect(s, '127.0.0.53');
    if (c === 'refused') throw new Error('refused');
    await sleep(200);
    c.socket.write('POST /mutate HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    await sleep(600);
    expect(c.socket.destroyed).toBe(false);
    expect(await refusals(s)).not.toMatch(/firstRequestTimeout/);
  });

  it("the guard leaves node's HTTP parser reading each socket natively (a 'data' listener would move every byte through JavaScript)", async () => {
    const s = await listening(allow, { firstRequestTimeoutMs: 60_000 });
    servers.push(s);
    // node's http server marks a parser that reads its socket in C++; adding a 'data' listener to the socket clears
    // it for the connection's life (node's unconsume), at about a quarter of the CPU of a review (docs/benchmarks.md
    // §1, fifth pass).
    const parsers: Array<{ _consumed?: boolean } | undefined> = [];
    s.app.server.on('request', (req: { socket: { parser?: { _consumed?: boolean } } }) =>
      parsers.push(req.socket.parser),
    );
    const c = await connect(s, '127.0.0.54');
    if (c === 'refused') throw new Error('refused');
    expect(await review(s, c.socket, 'one')).toBe(200);
    expect(await review(s, c.socket, 'two')).toBe(200);
    expect(parsers).toHaveLength(2);
    for (const p of parsers) expect(p?._consumed).toBe(true);
  });
});
