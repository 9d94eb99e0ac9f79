/**
 * Loopback TLS helpers: start the real server (startServer) quietly, make HTTPS requests that verify the
 * server against a given CA, and complete bare TLS handshakes to inspect what the server offers.
 */
import https from 'node:https';
import tls from 'node:tls';
import pino, { type Logger } from 'pino';
import { startServer, type RunningServer, type ServeOptions } from '../../src/server/start.ts';
import { testConfig } from '../support/config.ts';
import { nodeFactsFromState } from '../../src/facts/node-state.ts';

export const HOST = '127.0.0.1';

/** A pino logger at `level` whose lines land in `lines` (parsed), for asserting on what the server logged. */
export function capturingLogger(level = 'silent'): { logger: Logger; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino({ level }, { write: (s: string) => void lines.push(JSON.parse(s) as Record<string, unknown>) });
  return { logger, lines };
}

export function serve(extra: Partial<ServeOptions> = {}): Promise<RunningServer> {
  return startServer({
    config: testConfig('custom'),
    port: 0,
    host: HOST,
    tlsSans: ['127.0.0.1', 'localhost'],
    drainSeconds: 0,
    nodeState: nodeFactsFromState({ nodes: { n1: { verified: true } } }, 't'),
    logger: pino({ level: 'silent' }),
    ...extra,
  });
}

export interface HttpsResult {
  status: number;
  body: string;
  /** The answer's Connection header (keep-alive or close). */
  connection?: string;
  socket: tls.TLSSocket;
  reusedSocket: boolean;
}

export interface RequestOptions {
  ca?: string | string[];
  method?: string;
  path: string;
  body?: string;
  agent?: https.Agent;
  servername?: string;
}

/** One HTTPS request to the loopback server, verifying its certificate against `ca` (or the agent's). */
export function request(port: number, o: RequestOptions): Promise<HttpsResult> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> =
      o.body === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(o.body) };
    const req = https.request(
      {
        host: HOST,
        port,
        path: o.path,
        method: o.method ?? 'GET',
        ca: o.ca,
        agent: o.agent ?? false,
        servername: o.servername,
        headers,
      },
      (res) => {
        // Taken now: a keep-alive socket is detached from the response once it goes back to the agent.
        const socket = res.socket as tls.TLSSocket;
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            body: Buffer.concat(chunks).toString('utf8'),
            connection: res.headers.connection,
            socket,
            reusedSocket: req.reusedSocket,
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(o.body);
  });
}

export interface Handshake {
  socket: tls.TLSSocket;
  cert: tls.PeerCertificate;
  alpn: string | false | null;
  protocol: string | null;
}

/** A bare TLS handshake with the server; rejects with the TLS error when the server refuses it. */
export function handshake(port: number, options: tls.ConnectionOptions): Promise<Handshake> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: HOST, port, ...options });
    socket.once('secureConnect', () => {
      resolve({
        socket,
        cert: socket.getPeerCertificate(),
        alpn: socket.alpnProtocol ?? null,
        protocol: socket.getProtocol(),
      });
    });
    socket.once('error', reject);
  });
}

/**
 * The serial number of the certificate a fresh connection is served, in upper-case hex. Without `ca` the
 * chain is not verified (callers verify the returned certificate themselves).
 */
export async function servedSerial(port: number, ca?: string): Promise<string> {
  const h = await handshake(port, ca === undefined ? { rejectUnauthorized: false } : { ca });
  h.socket.destroy();
  return h.cert.serialNumber.toUpperCase();
}

export async function waitFor(
  what: string,
  check: () => Promise<boolean>,
  timeoutMs: number,
  everyMs = 50,
): Promise<number> {
  const start = Date.now();
  for (;;) {
    if (await check()) return Date.now() - start;
    if (Date.now() - start > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
