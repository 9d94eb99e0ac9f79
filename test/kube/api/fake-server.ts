/**
 * A scripted HTTPS server on loopback for the client's unit tests: a real TLS listener with a certificate from a
 * throwaway CA, whose every request (method, URL, headers, body) is recorded and answered by the test's handler.
 * The real apiserver's behaviour is tested in test/e2e/kube-client.test.ts; this one plays what it cannot be made to
 * do on demand (a page boundary, a reset, an oversized answer, a bad certificate).
 */
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CertificateAuthority } from '../../e2e/harness/pki.ts';
import type { ClusterAccess } from '../../../src/kube/api/access.ts';

export interface Seen {
  method: string;
  url: URL;
  headers: IncomingMessage['headers'];
  body: string;
}

export type Handler = (seen: Seen, res: ServerResponse, req: IncomingMessage) => void;

export interface FakeServer {
  ca: string;
  /** Access with the server's CA and a token. */
  access: ClusterAccess;
  seen: Seen[];
  handle(h: Handler): void;
  close(): Promise<void>;
}

let authority: CertificateAuthority | undefined;
const ca = () => (authority ??= new CertificateAuthority('meshgate-unit-ca'));

export async function fakeServer(): Promise<FakeServer> {
  const pair = ca().issue({ commonName: '127.0.0.1', ipAddresses: ['127.0.0.1'] });
  let handler: Handler = (_s, res) => res.writeHead(404).end();
  const seen: Seen[] = [];
  const server: Server = createServer({ cert: pair.certPem, key: pair.keyPem }, (req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      const s = { method: req.method ?? '', url: new URL(req.url ?? '/', 'https://x'), headers: req.headers, body };
      seen.push(s);
      handler(s, res, req);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    ca: ca().certPem,
    access: { server: `https://127.0.0.1:${port}`, ca: ca().certPem, token: 't0', source: 'test' },
    seen,
    handle(h) {
      handler = h;
    },
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

export function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
}

export const statusBody = (code: number, reason: string, message: string) => ({
  kind: 'Status',
  apiVersion: 'v1',
  status: 'Failure',
  code,
  reason,
  message,
});
