/**
 * Slow clients against the real server (its own process, default limits), on loopback: 1,000 plain TCP
 * connections that never finish a TLS handshake, then 1,000 TLS connections that never send a request, trickle
 * their headers or trickle their body, a byte every few seconds (1,000: under maxConnections, so a normal
 * client still finds a slot). Each must be closed by the server (the client never closes), a normal client must
 * be served while the flood is on, and the server's memory must stay bounded; and of 2,000 connections at once
 * only maxConnections stay open, each beyond taking the slot of the oldest silent one. The flood comes from eight
 * addresses: one client may hold only a quarter of the connections (test/tls/connection-guard.test.ts). Times and memory are printed, not asserted (the machine is
 * shared); the bounds they should sit near are in src/server/limits.ts.
 */
import { describe, it, expect, afterEach } from 'vitest';
import net from 'node:net';
import tls from 'node:tls';
import { DEFAULT_LIMITS } from '../../src/server/limits.ts';
import { podReview } from '../http/helpers.ts';
import { startServerChild, type ServerChild } from '../http/child.ts';
import { request } from './helpers.ts';

/** Flood size: under maxConnections (1024), leaving the normal client a slot. */
const FLOOD = 1000;
/** Connections opened at once against the cap. */
const OVER_CAP = 2000;
const TRICKLE_EVERY_MS = 3000;
const MiB = 1024 * 1024;
const children: ServerChild[] = [];
afterEach(async () => {
  await Promise.all(children.splice(0).map((c) => c.stop()));
});

type Kind = 'tcp-silent' | 'tcp-hello-trickle' | 'tls-silent' | 'tls-header-trickle' | 'tls-body-trickle';

interface Flooder {
  kind: Kind;
  socket: net.Socket;
  /** When the server's clock for this socket started (connect, handshake or first request byte). */
  since: number;
  closedAfter?: number;
  received: string;
  /** What to write every TRICKLE_EVERY_MS, if anything. */
  trickle?: () => string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function track(f: Flooder, all: Flooder[]): void {
  f.socket.on('error', () => {});
  f.socket.on('data', (d: Buffer) => (f.received += d.toString('latin1')));
  f.socket.once('close', () => (f.closedAfter = Date.now() - f.since));
  all.push(f);
}

/** A ClientHello record's first bytes: handshake(22), TLS 1.0 record version, length 512, ClientHello(1). */
const HELLO_START = [0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03];

/**
 * The flood's source addresses: eight clients (127.0.2.1-8), as one client may hold only a quarter of the
 * connections (maxConnectionsPerClient; test/tls/connection-guard.test.ts); the normal client is 127.0.0.1.
 */
const floodFrom = (i: number) => `127.0.2.${(i % 8) + 1}`;

function tlsConnect(port: number, ca: string, i: number): Promise<tls.TLSSocket> {
  return new Promise((resolve, reject) => {
    const s = tls.connect({ host: '127.0.0.1', port, ca, ...({ localAddress: floodFrom(i) } as object) });
    s.once('secureConnect', () => resolve(s));
    s.once('error', reject);
  });
}

/** Opens `n` connections `open(i)` at most `parallel` at a time. */
async function openAll(n: number, parallel: number, open: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < n) await open(next++);
    }),
  );
}

function summary(all: Flooder[]): string {
  const lines: string[] = [];
  for (const kind of new Set(all.map((f) => f.kind))) {
    const times = all
      .filter((f) => f.kind === kind && f.closedAfter !== undefined)
      .map((f) => f.closedAfter!)
      .sort((a, b) => a - b);
    const n = all.filter((f) => f.kind === kind).length;
    const q = (p: number) =>
      times.length ? (times[Math.min(times.length - 1, Math.floor(p * times.length))] / 1000).toFixed(1) : '-';
    lines.push(
      `  ${kind.padEnd(20)} ${String(times.length).padStart(4)}/${n} closed by the server after min ${q(0)} s, median ${q(0.5)} s, max ${q(1)} s`,
    );
  }
  return lines.join('\n');
}

/** Runs the trickles, samples the server, serves one normal review mid-flood; resolves when all are closed. */
async function ride(
  child: ServerChild,
  all: Flooder[],
  label: string,
  waitMs: number,
): Promise<{ servedWhileHeld: number; peakHeld: number; peakRss: number }> {
  const trickle = setInterval(() => {
    for (const f of all) if (f.trickle && f.closedAfter === undefined) f.socket.write(f.trickle());
  }, TRICKLE_EVERY_MS);
  let peakHeld = 0;
  let servedWhileHeld = -1;
  try {
    const t0 = Date.now();
    const normal = await request(child.port, {
      ca: child.ca,
      method: 'POST',
      path: '/mutate',
      body: JSON.stringify(podReview('normal', { nodeName: 'n1' })),
    });
    const tookMs = Date.now() - t0;
    // Counted on this side, when the answer arrived: flood connections the server had not closed yet.
    servedWhileHeld = all.filter((f) => f.closedAfter === undefined).length;
    console.log(`[slow-clients] ${label}: the normal review took ${tookMs} ms`);
    expect(normal.status).toBe(200);
    expect(JSON.parse(normal.body)).toMatchObject({ response: { uid: 'normal', allowed: true } });
    const deadline = Date.now() + waitMs;
    while (all.some((f) => f.closedAfter === undefined) && Date.now() < deadline) {
      peakHeld = Math.max(peakHeld, (await child.stats()).sockets);
      await sleep(500);
    }
  } finally {
    clearInterval(trickle);
  }
  const stats = await child.stats();
  console.log(
    `[slow-clients] ${label}: a normal review was served while ${servedWhileHeld} flood connections were open (server peak sampled ${peakHeld})\n${summary(all)}\n  server RSS now ${(stats.rss / MiB).toFixed(0)} MiB, peak ${(stats.peakRss / MiB).toFixed(0)} MiB; sockets still open ${stats.sockets}`,
  );
  return { servedWhileHeld, peakHeld, peakRss: stats.peakRss };
}

describe('slow clients are closed within the transport bounds', () => {
  it(`${FLOOD} TCP connections that never finish a TLS handshake are closed (handshake timeout ${DEFAULT_LIMITS.tlsHandshakeTimeoutMs} ms)`, async () => {
    const child = await startServerChild();
    children.push(child);
    const before = await child.stats();
    const all: Flooder[] = [];
    const t0 = Date.now();
    await openAll(FLOOD, 50, async (i) => {
      const socket = net.connect({ port: child.port, host: '127.0.0.1', localAddress: floodFrom(i) });
      await new Promise<void>((resolve) => socket.once('connect', () => resolve()).once('error', () => resolve()));
      let sent = 0;
      const trickle = i % 2 === 1 ? () => String.fromCharCode(HELLO_START[sent++ % HELLO_START.length]) : undefined;
      track(
        { kind: trickle ? 'tcp-hello-trickle' : 'tcp-silent', socket, since: Date.now(), received: '', trickle },
        all,
      );
    });
    console.log(
      `[slow-clients] opened ${FLOOD} TCP connections in ${Date.now() - t0} ms; server RSS before ${(before.rss / MiB).toFixed(0)} MiB`,
    );
    const r = await ride(child, all, 'TCP flood', DEFAULT_LIMITS.tlsHandshakeTimeoutMs + 30_000);

    expect(all.filter((f) => f.closedAfter === undefined)).toHaveLength(0);
    expect(r.servedWhileHeld).toBeGreaterThan(FLOOD / 2);
    expect(r.peakRss).toBeLessThan(512 * MiB);
    expect((await child.stats()).sockets).toBe(0);
  }, 120_000);

  it(`${FLOOD} TLS connections that are silent or trickle headers or body are closed (headers ${DEFAULT_LIMITS.headersTimeoutMs} ms, request ${DEFAULT_LIMITS.requestTimeoutMs} ms)`, async () => {
    const child = await startServerChild();
    children.push(child);
    const before = await child.stats();
    const all: Flooder[] = [];
    const t0 = Date.now();
    const head = 'POST /mutate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nX-Pad: ';
    await openAll(FLOOD, 16, async (i) => {
      const socket = await tlsConnect(child.port, child.ca, i);
      const kind: Kind = (['tls-silent', 'tls-header-trickle', 'tls-body-trickle'] as const)[i % 3];
      if (kind === 'tls-header-trickle') socket.write(head);
      if (kind === 'tls-body-trickle')
        socket.write(
          `POST /mutate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${MiB}\r\n\r\n{`,
        );
      track(
        { kind, socket, since: Date.now(), received: '', trickle: kind === 'tls-silent' ? undefined : () => 'x' },
        all,
      );
    });
    const opened = await child.stats();
    console.log(
      `[slow-clients] opened ${FLOOD} TLS connections in ${Date.now() - t0} ms; server RSS before ${(before.rss / MiB).toFixed(0)} MiB, with them ${(opened.rss / MiB).toFixed(0)} MiB`,
    );
    const r = await ride(child, all, 'TLS flood', DEFAULT_LIMITS.requestTimeoutMs + 30_000);

    expect(all.filter((f) => f.closedAfter === undefined)).toHaveLength(0);
    // The trickles were answered 408 before the close; the silent ones had nothing to answer.
    for (const f of all.filter((x) => x.kind !== 'tls-silent'))
      expect(f.received, f.kind).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
    expect(r.servedWhileHeld).toBeGreaterThan(FLOOD / 2);
    expect(r.peakRss).toBeLessThan(512 * MiB);
    expect((await child.stats()).sockets).toBe(0);
  }, 180_000);

  it(`of ${OVER_CAP} silent connections at once, ${DEFAULT_LIMITS.maxConnections} stay open: each beyond takes the slot of the oldest silent one, and a normal client is still served`, async () => {
    const child = await startServerChild();
    children.push(child);
    const extra = OVER_CAP - DEFAULT_LIMITS.maxConnections;
    const all: Flooder[] = [];
    let i = 0;
    await openAll(OVER_CAP, 50, async () => {
      const socket = net.connect({ port: child.port, host: '127.0.0.1', localAddress: floodFrom(i++) });
      await new Promise<void>((resolve) => socket.once('connect', () => resolve()).once('error', () => resolve()));
      track({ kind: 'tcp-silent', socket, since: Date.now(), received: '' }, all);
    });
    // Until the server has closed what it closes (at once, but a loaded machine delivers the closes late), at most 60 s.
    for (let n = 0; n < 600 && all.filter((f) => f.closedAfter !== undefined).length < extra; n++) await sleep(100);
    await sleep(1000);
    const stats = await child.stats();
    const held = stats.sockets;
    const closed = all.filter((f) => f.closedAfter !== undefined).length;
    const normal = await request(child.port, {
      ca: child.ca,
      method: 'POST',
      path: '/mutate',
      body: JSON.stringify(podReview('normal', { nodeName: 'n1' })),
    });
    console.log(
      `[slow-clients] ${all.length} connections: server holds ${held}, ${closed} closed at once (their slots taken by newer ones); a normal review was answered ${normal.status}; server RSS ${(stats.rss / MiB).toFixed(0)} MiB`,
    );
    expect(held).toBe(DEFAULT_LIMITS.maxConnections);
    expect(closed).toBe(extra);
    expect(normal.status).toBe(200);
    for (const f of all) f.socket.destroy();
    for (let n = 0; n < 100 && (await child.stats()).sockets > 0; n++) await sleep(100);
    const metrics = await request(child.port, { ca: child.ca, path: '/metrics' });
    // The normal client's connection took a slot too.
    expect(metrics.body).toMatch(
      new RegExp(`^meshgate_overload_refusals_total\\{limit="evicted"\\} ${extra + 1}$`, 'm'),
    );
  }, 150_000);
});
