/**
 * Fair use of the webhook's connections (issue 33 §7). One client in the cluster that holds 1,024 idle TLS connections
 * (re-opening each as the server closes it) used to take every slot of maxConnections: node then dropped every new
 * connection at accept, the apiserver's among them, and pods were refused (failurePolicy Fail) while the webhook sat
 * idle. Three bounds, enforced at accept and after the handshake, never on the admission path:
 * - connections per client address (maxConnectionsPerClient): one client gets at most a quarter of the slots;
 * - at the global cap, a new connection takes the slot of the oldest connection that has not sent a request yet,
 *   from the client holding the most connections — a connection that only holds a slot never keeps out one that
 *   will be used — and is dropped only when every held connection has served a request;
 * - a connection must begin its first request within firstRequestTimeoutMs of its handshake (the handshake itself is
 *   bounded by tlsHandshakeTimeoutMs, node's handshakeTimeout; a request that trickles, by the headers and request
 *   timeouts).
 * The apiserver writes its request right after dialling; a connection its transport dialled and then parked unused
 * is closed after firstRequestTimeoutMs, which Go's transport notices (its read loop sees the close) before reuse.
 */
import type { Server as HttpsServer } from 'node:https';
import type { Socket } from 'node:net';
import type { TransportLimits } from './limits.ts';

export type ConnectionLimit = 'maxConnectionsPerClient' | 'maxConnections' | 'evicted' | 'firstRequestTimeout';

interface Entry {
  readonly client: string;
  /** remote address and port, taken at accept (a destroyed socket no longer says them). */
  readonly key: string;
  readonly socket: Socket;
  served: boolean;
  gone: boolean;
  timer?: NodeJS.Timeout;
}

/** IPv4 clients of a dual-stack listener arrive as ::ffff:a.b.c.d; the same client either way. */
const clientOf = (s: Socket) => (s.remoteAddress ?? '').replace(/^::ffff:/, '');
const keyOf = (s: { remoteAddress?: string; remotePort?: number }) =>
  `${(s.remoteAddress ?? '').replace(/^::ffff:/, '')}|${s.remotePort ?? ''}`;

export interface ConnectionGuard {
  /** Open connections, and those per client, for tests and metrics. */
  stats(): { open: number; clients: number; largest: number };
}

export function guardConnections(
  server: HttpsServer,
  limits: Pick<TransportLimits, 'maxConnections' | 'maxConnectionsPerClient' | 'firstRequestTimeoutMs'>,
  onRefused: (limit: ConnectionLimit) => void,
): ConnectionGuard {
  const byClient = new Map<string, Set<Entry>>();
  const byKey = new Map<string, Entry>();
  /**
   * The same entries by socket (the TCP one, and the TLS one over it): a request finds its own without asking the
   * socket for its peer's address.
   */
  const bySocket = new WeakMap<Socket, Entry>();
  /** Connections without a request yet, oldest first (a Set keeps insertion order). */
  const waiting = new Set<Entry>();
  let open = 0;

  const forget = (e: Entry) => {
    if (e.gone) return;
    e.gone = true;
    if (byKey.get(e.key) === e) byKey.delete(e.key);
    clearTimeout(e.timer);
    waiting.delete(e);
    const set = byClient.get(e.client);
    set?.delete(e);
    if (set?.size === 0) byClient.delete(e.client);
    open--;
  };

  /** The oldest waiting connection of the client holding the most connections; undefined when none waits. */
  const victim = (): Entry | undefined => {
    let best: Entry | undefined;
    for (const e of waiting) {
      if (!best || (byClient.get(e.client)?.size ?? 0) > (byClient.get(best.client)?.size ?? 0)) best = e;
    }
    return best;
  };

  server.on('connection', (socket: Socket) => {
    const client = clientOf(socket);
    const mine = byClient.get(client);
    if ((mine?.size ?? 0) >= limits.maxConnectionsPerClient) {
      onRefused('maxConnectionsPerClient');
      socket.destroy();
      return;
    }
    if (open >= limits.maxConnections) {
      const v = victim();
      if (!v) {
        onRefused('maxConnections');
        socket.destroy();
        return;
      }
      onRefused('evicted');
      forget(v);
      v.socket.destroy();
    }
    const e: Entry = { client, key: keyOf(socket), socket, served: false, gone: false };
    byKey.set(e.key, e);
    bySocket.set(socket, e);
    const set = mine ?? new Set<Entry>();
    set.add(e);
    byClient.set(client, set);
    waiting.add(e);
    open++;
    socket.once('close', () => forget(e));
  });

  server.on('secureConnection', (tlsSocket: Socket) => {
    const e = byKey.get(keyOf(tlsSocket));
    if (!e || e.served) return;
    bySocket.set(tlsSocket, e);
    // Until the first byte of a request: a request that trickles is the headers and request timeouts' (408). That
    // byte is seen in the socket's count of bytes read, not by a 'data' listener: node's HTTP server reads a socket
    // in C++ until someone listens for its data, and one listener moves every later request's bytes through
    // JavaScript for the connection's life (a quarter of the CPU of a review: docs/benchmarks.md §1, fifth pass).
    e.timer = setTimeout(() => {
      if (e.served || tlsSocket.bytesRead > 0) return;
      onRefused('firstRequestTimeout');
      forget(e);
      e.socket.destroy();
    }, limits.firstRequestTimeoutMs);
    e.timer.unref();
  });

  server.on('request', (req: { socket: Socket }) => {
    const e = bySocket.get(req.socket);
    if (!e || e.served) return;
    e.served = true;
    clearTimeout(e.timer);
    waiting.delete(e);
  });

  return {
    stats: () => ({
      open,
      clients: byClient.size,
      largest: Math.max(0, ...[...byClient.values()].map((s) => s.size)),
    }),
  };
}
