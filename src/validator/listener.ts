/**
 * The stand-in for the proxy: listens on the outbound port while the probe runs and answers each probe hello with
 * its proof. It lives only for the validation window and is closed (with every accepted socket) before the
 * validator exits, so the port is free for the real proxy.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { HELLO_BYTES, proofFor } from './proof.ts';

export interface ProofListener {
  /** "host:port" actually bound, for messages. */
  readonly address: string;
  /** Hellos answered with a proof; lets a result say whether anything arrived at all. */
  readonly answered: () => number;
  close(): Promise<void>;
}

/** Binds host:port and answers hellos. Rejects with the listen error (EADDRINUSE, EACCES, …) if binding fails. */
export function startProofListener(host: string, port: number, key: Buffer): Promise<ProofListener> {
  const sockets = new Set<Socket>();
  let answered = 0;
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    answerHello(socket, key, () => answered++);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host, port, exclusive: true }, () => {
      server.off('error', reject);
      // A failing accept after listen must not crash the process: the probe simply gets no proof.
      server.on('error', () => {});
      resolve({ address: formatAddress(server), answered: () => answered, close: () => closeAll(server, sockets) });
    });
  });
}

/** Reads exactly one hello; anything else (wrong magic, extra bytes) gets the connection dropped, not an answer. */
function answerHello(socket: Socket, key: Buffer, onAnswer: () => void): void {
  let buffered = Buffer.alloc(0);
  socket.on('data', (chunk: Buffer) => {
    buffered = Buffer.concat([buffered, chunk]);
    if (buffered.length < HELLO_BYTES) return;
    const proof = buffered.length === HELLO_BYTES ? proofFor(key, buffered) : undefined;
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

function formatAddress(server: Server): string {
  const a = server.address();
  if (a === null || typeof a === 'string') return String(a);
  return a.family === 'IPv6' ? `[${a.address}]:${a.port}` : `${a.address}:${a.port}`;
}
