/**
 * What the node agent reads of Istio ambient's node components, locally and cheaply (no pod IPs, nothing off the
 * node): istio-cni's node agent's readiness (`/readyz` on :8000 of the node: both agents run in the host network;
 * it is ready when its installer and its node agent are, istio cni/pkg/cmd/root.go), and whether a ztunnel holds a
 * connection on the ZDS socket that agent serves (`unixpacket`, default /var/run/ztunnel/ztunnel.sock). The latter is
 * read from /proc/net/unix of the host network namespace, where the accepted end of each connection is listed with
 * the listener's path in state 03 (connected): no connection of our own is opened on that socket, which would take
 * ztunnel's place (istio-cni hands pods to the latest connection). Both are bound to istio-cni's own process
 * (readAmbientFacts): what any other process in the node's network namespace says is not counted.
 */
import { readFile } from 'node:fs/promises';
import type { AmbientFacts } from '../cni/ambient.ts';
import { findOwners, isListening, parseProcNetUnix, sameFile, tcpListeners, UNIX_CONNECTED } from './socket-owner.ts';

// Not an ESM import, which loads Node's bundled undici (src/agent/http.ts says why).
const { request } = process.getBuiltinModule('node:http');

export interface AmbientCheckConfig {
  /** istio-cni's readiness URL: loopback only (parseReadyzUrl). */
  readonly readyzUrl: string;
  /** The ZDS socket istio-cni's node agent listens on and ztunnel dials. */
  readonly zdsSocket: string;
  /** /proc/net/unix, or a copy (tests). */
  readonly procNetUnix: string;
  /** How often the components are polled: their failure sends no file event. */
  readonly pollMs: number;
  /** The host's /proc (hostPID), where the sockets' owners are found; default /proc. */
  readonly procRoot?: string;
}

export const DEFAULT_AMBIENT_READYZ = 'http://127.0.0.1:8000/readyz';
export const DEFAULT_ZDS_SOCKET = '/var/run/ztunnel/ztunnel.sock';
/** 5 s: a component that died is published within 5 s plus the debounce; each poll is one local GET and one read. */
export const DEFAULT_AMBIENT_POLL_MS = 5_000;
/** A readiness endpoint on the node answers within milliseconds; 1 s bounds a hung one. */
const READYZ_TIMEOUT_MS = 1_000;

/** SS_CONNECTED in /proc/net/unix's St column (net/unix/af_unix.c unix_seq_show). */
const CONNECTED = '03';

/** Connections on `path` listed in a /proc/net/unix text: lines `Num RefCount Protocol Flags Type St Inode Path`. */
export function connectionsOn(procNetUnix: string, path: string): number {
  let n = 0;
  for (const line of procNetUnix.split('\n').slice(1)) {
    const f = line.trim().split(/\s+/);
    if (f.length >= 8 && f[5] === CONNECTED && f.slice(7).join(' ') === path) n++;
  }
  return n;
}

function readyz(url: string): Promise<{ ready: boolean; detail: string }> {
  return new Promise((resolve) => {
    const req = request(url, { timeout: READYZ_TIMEOUT_MS, agent: false }, (res) => {
      res.resume();
      const ready = res.statusCode === 200;
      resolve({ ready, detail: `GET ${url}: ${res.statusCode}` });
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${READYZ_TIMEOUT_MS}ms`)));
    req.on('error', (err: NodeJS.ErrnoException) =>
      resolve({ ready: false, detail: `GET ${url}: ${err.code ?? err.message}` }),
    );
    req.end();
  });
}

/** The owner found by the last poll, per proc root and socket: usually still it (one fd directory read, not all). */
const lastOwner = new Map<string, string>();

/**
 * The ambient facts, bound to the processes that can show them (issue 33 §8): any process in the node's network
 * namespace can answer on :8000 or list a socket under the ZDS socket's name (bound in a mount namespace of its own,
 * connected to itself), so neither counts unless it is istio-cni's node agent's. That agent is the process holding
 * the listener on the ZDS path whose file (seen from its root) is the node's own (device and inode, through the
 * agent's hostPath mount of its directory); a ztunnel is connected when that process holds an accepted connection
 * on it; and its readiness counts only when the TCP listener on the readiness port is that same process's (istio-cni's
 * node agent serves both, cni/pkg/cmd/root.go).
 */
export async function readAmbientFacts(c: AmbientCheckConfig): Promise<AmbientFacts> {
  const proc = c.procRoot ?? '/proc';
  const [agent, unix] = await Promise.all([
    readyz(c.readyzUrl),
    readFile(c.procNetUnix, 'utf8').then(
      (text) => ({ text }),
      (err: Error) => ({ error: err.message }),
    ),
  ]);
  const notReady = (why: string) => ({ ready: false, detail: `${agent.detail}; ${why}` });
  if ('error' in unix) {
    const detail = `cannot read ${c.procNetUnix}: ${unix.error}`;
    return { agent: notReady(detail), ztunnel: { connected: false, detail } };
  }
  const sockets = parseProcNetUnix(unix.text).filter((s) => s.path === c.zdsSocket);
  const listeners = new Set(sockets.filter(isListening).map((s) => s.inode));
  if (listeners.size === 0) {
    const detail = `no process listens on ${c.zdsSocket}`;
    return { agent: notReady(detail), ztunnel: { connected: false, detail } };
  }
  const key = `${proc}|${c.zdsSocket}`;
  const found = await findOwners(proc, listeners, lastOwner.get(key));
  if (found.owners.size === 0) {
    const detail =
      `cannot tell which process listens on ${c.zdsSocket} (${found.unreadable} processes' sockets unreadable` +
      `${found.firstError ? `, e.g. ${found.firstError}` : ''}): the node agent needs hostPID and the UID of ` +
      "istio-cni's node agent";
    return { agent: notReady(detail), ztunnel: { connected: false, detail } };
  }
  // The one whose socket file, seen from its own root, is the node's.
  let owner: { pid: string; sockets: Set<string> } | undefined;
  const others: string[] = [];
  for (const [pid, held] of found.owners) {
    const same = await sameFile(`${proc}/${pid}/root${c.zdsSocket}`, c.zdsSocket);
    if (same === true) {
      owner = { pid, sockets: held };
      break;
    }
    others.push(`process ${pid}${same === false ? '' : ` (${same.error})`}`);
  }
  if (!owner) {
    const detail =
      `the listeners on ${c.zdsSocket} are held by ${others.join(', ')}, where ${c.zdsSocket} is not the node's ` +
      "file (a look-alike in another mount namespace): not istio-cni's node agent";
    return { agent: notReady(detail), ztunnel: { connected: false, detail } };
  }
  lastOwner.set(key, owner.pid);
  const mine = owner.sockets;
  const n = sockets.filter((s) => s.state === UNIX_CONNECTED && mine.has(s.inode)).length;
  const ztunnel = {
    connected: n > 0,
    detail: `${n} connection(s) on ${c.zdsSocket} accepted by its listener, process ${owner.pid}`,
  };
  if (!agent.ready) return { agent, ztunnel };
  const port = Number(new URL(c.readyzUrl).port || 80);
  const tcp = await Promise.all(
    ['tcp', 'tcp6'].map((t) =>
      readFile(`${proc}/net/${t}`, 'utf8').then(
        (text) => tcpListeners(text, port),
        () => [],
      ),
    ),
  );
  const readyBy = tcp.flat().filter((i) => mine.has(i));
  return {
    agent: readyBy.length
      ? { ready: true, detail: `${agent.detail} from process ${owner.pid}, which serves ${c.zdsSocket}` }
      : notReady(`port ${port} is not held by process ${owner.pid}, which serves ${c.zdsSocket}: not its readiness`),
    ztunnel,
  };
}
