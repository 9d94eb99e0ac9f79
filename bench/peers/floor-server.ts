/**
 * The floor under every peer of `npm run bench -- --peers` written in Node (issue 35): a bare node:https server,
 * meshgate's TLS policy (src/server/tls-policy.ts) over a self-signed certificate, HTTP/1.1, keep-alive, no
 * framework, no metrics, no log. It reads each body whole and answers it:
 *   parse   JSON.parse of the body (what any webhook must do before it can decide anything), allowed for its uid
 *   raw     no parse: allowed for the uid cut out of the text (its first "uid" member, the request's as the bench
 *           sends it)
 *   decide  JSON.parse, then meshgate's own handler for the request's path (src/admission/handlers.ts, the decision
 *           and the answer the webhook gives, same configuration and node facts as bench/server.ts): what meshgate's
 *           reviews would cost with no transport of its own around them
 * What it costs per review on this host is what no admission webhook in Node can go below: the companion's
 * throughput target (30× Istio's injector per CPU-second) is only reachable if this floor is well under 1/30 of
 * Istio's CPU per review. Forked like bench/server.ts (its IPC: ready, cpu, exit), compiled with the tree and run under
 * the image's Node flags.
 */
import { createServer } from 'node:https';
import { issueSelfSigned } from '../../src/tls/authority.ts';
import { TLS_POLICY } from '../../src/server/tls-policy.ts';
import type { ParentMessage, ServerMessage, ServerSettings } from '../server.ts';
import { cpuMessage } from '../server-cpu.ts';

export type FloorMode = 'parse' | 'raw' | 'decide';

export type FloorSettings = { floor: FloorMode } & Partial<Pick<ServerSettings, 'mesh' | 'verifiedNodes'>>;

type Answer = (path: string, text: string) => string | Promise<string>;

const settings = JSON.parse(process.argv[2] ?? '{}') as FloorSettings;
const pair = issueSelfSigned(['localhost', '127.0.0.1'], 3_600_000, Date.now());

const allowed = (uid: unknown) =>
  `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":${JSON.stringify(String(uid ?? ''))},"allowed":true}}`;

/** meshgate's handlers, loaded only in this mode: the other two carry none of meshgate's code. */
async function decider(): Promise<Answer> {
  const [{ admissionRoutes }, { decodeReview, encodeResponse, serializeResponse }, { testConfig }, { benchNodeFacts }] =
    await Promise.all([
      import('../../src/admission/handlers.ts'),
      import('../../src/admission/review.ts'),
      import('../../test/support/config.ts'),
      import('../server-facts.ts'),
    ]);
  const routes = admissionRoutes({
    config: testConfig(settings.mesh ?? 'custom'),
    nodes: benchNodeFacts(settings.verifiedNodes ?? []),
  });
  return async (path, text) => {
    const decoded = decodeReview(JSON.parse(text));
    const handler = routes[path];
    if (!decoded.ok || !handler) throw new Error(decoded.ok ? `no route ${path}` : decoded.error);
    const { apiVersion, request } = decoded.review;
    return serializeResponse(encodeResponse(apiVersion, request.uid, await handler(request)));
  };
}

const answers: Record<FloorMode, () => Answer | Promise<Answer>> = {
  parse: () => (_, text) => allowed((JSON.parse(text) as { request?: { uid?: unknown } }).request?.uid),
  raw: () => (_, text) => {
    const at = text.indexOf('"uid":"');
    return allowed(at < 0 ? '' : text.slice(at + 7, text.indexOf('"', at + 7)));
  },
  decide: decider,
};
const answer = await answers[settings.floor ?? 'parse']();

const server = createServer(
  { cert: pair.cert, key: pair.key, ...TLS_POLICY, ALPNProtocols: ['http/1.1'] },
  (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      try {
        const text = await answer(req.url ?? '/', Buffer.concat(chunks).toString('utf8'));
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
        res.end(text);
      } catch (err) {
        res.writeHead(400, { 'content-type': 'text/plain' });
        res.end((err as Error).message);
      }
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
