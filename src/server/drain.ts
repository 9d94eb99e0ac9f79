/**
 * Graceful close for a webhook server: stop listening, let every in-flight review finish, and close every
 * other connection at once. node's own close() only ends sockets idle at that instant; the apiserver's Go
 * client keeps idle connections for 90 s and may hold freshly dialled ones that have not sent a request yet,
 * either of which would keep close() pending. Sockets are therefore counted per in-flight request here, and a
 * sweep destroys every socket with none. After MAX_DRAIN_MS (the apiserver's longest webhook timeout) the
 * rest are cut too.
 *
 * Before that, from the moment draining starts (readiness off: `endKeepAlive`), every answer carries
 * `Connection: close`, so the client stops reusing each connection after its next answer. The apiserver's client
 * does not retry a webhook POST that fails on a reused connection (client-go retries only GETs): a connection cut
 * just as it was being reused would refuse a pod (EOF). Closing only connections the client has already been told
 * to drop, or that sat idle through the whole drain, leaves that race no room.
 */
import type { Server as HttpsServer } from 'node:https';
import type { Socket } from 'node:net';
import { MAX_WEBHOOK_TIMEOUT_SECONDS } from './limits.ts';

const MAX_DRAIN_MS = MAX_WEBHOOK_TIMEOUT_SECONDS * 1000;
const SWEEP_MS = 50;

export interface Drainer {
  /** From now on every answer asks the client to close its connection (draining has begun). */
  endKeepAlive(): void;
  close(closeServer: () => Promise<void>): Promise<void>;
}

export function trackConnections(server: HttpsServer): Drainer {
  const inflight = new Map<Socket, number>();
  server.on('secureConnection', (socket: Socket) => {
    inflight.set(socket, inflight.get(socket) ?? 0);
    socket.once('close', () => inflight.delete(socket));
  });
  let keepAlive = true;
  server.on('request', (req, res) => {
    if (!keepAlive) res.shouldKeepAlive = false;
    const socket = req.socket;
    inflight.set(socket, (inflight.get(socket) ?? 0) + 1);
    res.once('close', () => {
      const n = inflight.get(socket);
      if (n !== undefined) inflight.set(socket, Math.max(0, n - 1));
    });
  });
  return {
    endKeepAlive() {
      keepAlive = false;
    },
    async close(closeServer) {
      keepAlive = false;
      const sweep = () => {
        for (const [socket, n] of inflight) if (n === 0) socket.destroy();
      };
      const timer = setInterval(sweep, SWEEP_MS);
      const cut = setTimeout(() => server.closeAllConnections(), MAX_DRAIN_MS);
      try {
        const closing = closeServer();
        sweep();
        await closing;
      } finally {
        clearInterval(timer);
        clearTimeout(cut);
      }
    },
  };
}
