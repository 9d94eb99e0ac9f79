/**
 * What the node agent reads of Istio ambient's node components, locally and cheaply (no pod IPs, nothing off the
 * node): istio-cni's node agent's readiness (`/readyz` on :8000 of the node: both agents run in the host network;
 * it is ready when its installer and its node agent are, istio cni/pkg/cmd/root.go), and whether a ztunnel holds a
 * connection on the ZDS socket that agent serves (`unixpacket`, default /var/run/ztunnel/ztunnel.sock). The latter is
 * read from /proc/net/unix of the host network namespace, where the accepted end of each connection is listed with
 * the listener's path in state 03 (connected): no connection of our own is opened on that socket, which would take
 * ztunnel's place (istio-cni hands pods to the latest connection).
 */
import { readFile } from 'node:fs/promises';
import type { AmbientFacts } from '../cni/ambient.ts';

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

export async function readAmbientFacts(c: AmbientCheckConfig): Promise<AmbientFacts> {
  const [agent, unix] = await Promise.all([
    readyz(c.readyzUrl),
    readFile(c.procNetUnix, 'utf8').then(
      (text) => ({ text }),
      (err: Error) => ({ error: err.message }),
    ),
  ]);
  if ('error' in unix)
    return { agent, ztunnel: { connected: false, detail: `cannot read ${c.procNetUnix}: ${unix.error}` } };
  const n = connectionsOn(unix.text, c.zdsSocket);
  return { agent, ztunnel: { connected: n > 0, detail: `${n} connection(s) on ${c.zdsSocket}` } };
}
