/**
 * A TLS-terminating proxy on loopback in front of the real apiserver, for the daemons' client's failure paths: every
 * request is forwarded (streaming both ways, so watches work) as the admin (the proxy's own client certificate),
 * except those a queued fault matches, which get a 429 with Retry-After, a 500, or a reset connection instead. An
 * optional rewrite changes one answer's JSON on its way back (e.g. an old resourceVersion, so that the real apiserver
 * answers the watch that follows with 410 Gone). The apiserver's own priority and fairness cannot be made to throttle
 * one client on demand; this can, while every other byte comes from the real apiserver.
 */
import { request as httpsRequest, createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ControlPlane } from './harness/index.ts';

export type Fault =
  | { kind: '429'; retryAfter?: string }
  | { kind: '500' }
  | { kind: 'reset' }
  | { kind: 'rewrite'; edit: (body: Record<string, unknown>) => void };

interface Queued {
  match: (method: string, url: URL) => boolean;
  fault: Fault;
}

export interface FaultProxy {
  server: string;
  ca: string;
  /** Requests seen, as "METHOD path?query". */
  seen: string[];
  /** The next request `match` accepts gets `fault` (each queued fault is used once, in order). */
  inject(match: (method: string, url: URL) => boolean, fault: Fault): void;
  /** Faults still waiting for their request. */
  pending(): number;
  close(): Promise<void>;
}

const status = (code: number, reason: string) =>
  JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason, message: `injected ${code}` });

export async function startFaultProxy(cp: ControlPlane): Promise<FaultProxy> {
  const serving = cp.ca.issue({ commonName: 'fault-proxy', ipAddresses: ['127.0.0.1'] });
  const admin = cp.ca.issue({ commonName: 'fault-proxy-admin', organizations: ['system:masters'], usage: 'client' });
  const upstream = new URL(cp.server);
  const queue: Queued[] = [];
  const seen: string[] = [];

  const forward = (req: IncomingMessage, res: ServerResponse, rewrite?: (b: Record<string, unknown>) => void) => {
    const headers = { ...req.headers, host: upstream.host };
    delete headers.authorization;
    if (rewrite) delete headers['accept-encoding'];
    const up = httpsRequest(
      {
        host: upstream.hostname,
        port: upstream.port,
        path: req.url,
        method: req.method,
        headers,
        ca: cp.ca.certPem,
        cert: admin.certPem,
        key: admin.keyPem,
      },
      (answer) => {
        if (!rewrite) {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
          return;
        }
        let text = '';
        answer.setEncoding('utf8');
        answer.on('data', (c: string) => (text += c));
        answer.on('end', () => {
          const body = JSON.parse(text) as Record<string, unknown>;
          rewrite(body);
          const out = JSON.stringify(body);
          const { 'content-length': _, ...rest } = answer.headers;
          res.writeHead(answer.statusCode ?? 502, { ...rest, 'content-length': Buffer.byteLength(out) }).end(out);
        });
      },
    );
    up.on('error', () => res.destroy());
    res.on('close', () => up.destroy());
    req.pipe(up);
  };

  const server: Server = createServer({ cert: serving.certPem, key: serving.keyPem }, (req, res) => {
    const url = new URL(req.url ?? '/', 'https://proxy');
    seen.push(`${req.method} ${url.pathname}${url.search}`);
    const i = queue.findIndex((q) => q.match(req.method ?? '', url));
    const fault = i === -1 ? undefined : queue.splice(i, 1)[0].fault;
    if (!fault) return forward(req, res);
    req.resume();
    if (fault.kind === 'reset') return req.socket.destroy();
    if (fault.kind === 'rewrite') return forward(req, res, fault.edit);
    const code = fault.kind === '429' ? 429 : 500;
    const extra: Record<string, string> = fault.kind === '429' ? { 'retry-after': fault.retryAfter ?? '1' } : {};
    res
      .writeHead(code, { 'content-type': 'application/json', ...extra })
      .end(status(code, code === 429 ? 'TooManyRequests' : 'InternalError'));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    server: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
    ca: cp.ca.certPem,
    seen,
    inject: (match, fault) => void queue.push({ match, fault }),
    pending: () => queue.length,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
