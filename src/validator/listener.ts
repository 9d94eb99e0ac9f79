/**
 * The validator's listeners: stand-ins for the proxy on its capture ports, and one at the probe's own destination.
 * Each answers every probe hello with the proof for its own role and the connection's client address. They live only
 * for the validation window and are closed (with every accepted socket) before the validator exits, so the ports are
 * free for the real proxy.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { HELLO_BYTES, proofFor, type Answerer, type ListenerRole } from './proof.ts';

export interface ProofListener extends Answerer {
  /** Hellos answered with a proof; lets a result say whether anything arrived at all. */
  readonly answered: () => number;
  close(): Promise<void>;
}

/** Binds host:port and answers hellos as `role`. Rejects with the listen error (EADDRINUSE, EADDRNOTAVAIL, …). */
export function startProofListener(
  role: ListenerRole,
  host: string,
  port: number,
  key: Buffer,
): Promise<ProofListener> {
  const sockets = new Set<Socket>();
  let answered = 0;
  const address = formatHostPort(host, port);
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    answerHello(socket, key, { role, address }, () => answered++);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host, port, exclusive: true }, () => {
      server.off('error', reject);
      // A failing accept after listen must not crash the process: the probe simply gets no proof.
      server.on('error', () => {});
      resolve({ role, address, answered: () => answered, close: () => closeAll(server, sockets) });
    });
  });
}

/** Reads exactly one hello; anything else (wrong magic, extra bytes) gets the connection dropped, not an answer. */
function answerHello(socket: Socket, key: Buffer, by: Answerer, onAnswer: () => void): void {
  let buffered = Buffer.alloc(0);
  socket.on('data', (chunk: Buffer) => {
    buffered = Buffer.concat([buffered, chunk]);
    if (buffered.length < HELLO_BYTES) return;
    const client = formatHostPort(socket.remoteAddress ?? '', socket.remotePort ?? 0);
    const proof = buffered.length === HELLO_BYTES ? proofFor(key, buffered, by, client) : undefined;
    if (!proof) {
      socket.destroy();
      return;
    }
    onAnswer();
    socket.end(proof);
  });
}

function closeAll(server: Server, sockets: Set<Socket>): Promise<void> {
  for (const s of sockets) s.destroy();
  return new Promise((resolve) => server.close(() => resolve()));
}

/**
 * "host:port", "[v6]:port". One spelling for both ends of a connection, which is what the proof binds: an IPv4 peer
 * on a dual-stack socket shows up as ::ffff:a.b.c.d, so the mapped prefix is dropped.
 */
export function formatHostPort(host: string, port: number): string {
  const plain = host.startsWith('::ffff:') && host.includes('.') ? host.slice('::ffff:'.length) : host;
  return plain.includes(':') ? `[${plain}]:${port}` : `${plain}:${port}`;
}
