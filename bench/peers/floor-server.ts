/**
 * The floor under every peer of `npm run bench -- --peers` written in Node (issue 35): a bare node:https server,
 * meshgate's TLS policy (src/server/tls-policy.ts) over a self-signed certificate, HTTP/1.1, keep-alive, no
 * framework, no metrics, no log. It reads each body whole and answers an allowed AdmissionReview for its uid:
 *   parse   JSON.parse of the body (what any webhook must do before it can decide anything), the uid from it
 *   raw     no parse: the uid cut out of the text (its first "uid" member, the request's as the bench sends it)
 * What it costs per review on this host is what no admission webhook in Node can go below: the companion's
 * throughput target (30× Istio's injector per CPU-second) is only reachable if this floor is well under 1/30 of
 * Istio's CPU per review. Forked like bench/server.ts (its IPC: ready, cpu, exit), compiled with the tree and run under
 * the image's Node flags.
 */
import { createServer } from 'node:https';
import { issueSelfSigned } from '../../src/tls/authority.ts';
import { TLS_POLICY } from '../../src/server/tls-policy.ts';
import type { ParentMessage, ServerMessage } from '../server.ts';
import { cpuMessage } from '../server-cpu.ts';

export type FloorMode = 'parse' | 'raw';

const mode: FloorMode = (JSON.parse(process.argv[2] ?? '{}') as { floor?: FloorMode }).floor ?? 'parse';
const pair = issueSelfSigned(['localhost', '127.0.0.1'], 3_600_000, Date.now());

function uidOf(text: string): string {
  if (mode === 'parse') return String((JSON.parse(text) as { request?: { uid?: unknown } }).request?.uid ?? '');
  const at = text.indexOf('"uid":"');
  return at < 0 ? '' : text.slice(at + 7, text.indexOf('"', at + 7));
}

const server = createServer(
  { cert: pair.cert, key: pair.key, ...TLS_POLICY, ALPNProtocols: ['http/1.1'] },
  (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const answer = `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":${JSON.stringify(uidOf(Buffer.concat(chunks).toString('utf8')))},"allowed":true}}`;
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(answer) });
      res.end(answer);
    });
  },
);

const send = (m: ServerMessage) => process.send!(m);
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as { port: number };
  send({ type: 'ready', url: `https://127.0.0.1:${port}`, port, ca: pair.ca ?? '' });
});
process.on('message', (m: ParentMessage) => {
  if (m.type === 'cpu') send(cpuMessage());
  else if (m.type === 'exit') {
    server.close(() => process.exit(0));
    server.closeAllConnections();
  }
});
process.on('disconnect', () => process.exit(0));
