/**
 * `meshgate serve` as the tests' helper starts it (test/tls/helpers.ts: self-signed TLS on 127.0.0.1, one
 * verified node), in a process of its own so its memory can be read apart from the clients'. Transport limits
 * arrive as JSON in argv[2]. Over IPC it reports `ready` with its port and CA, and answers `stats` with its
 * memory and how many sockets it holds open (from /proc, the kernel's count, not the server's).
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { serve } from '../tls/helpers.ts';

export interface ChildStats {
  /** Resident set now and its peak (VmHWM), bytes. */
  rss: number;
  peakRss: number;
  heapUsed: number;
  /** Open sockets other than the listener and the IPC channel. */
  sockets: number;
  /** CPU time used so far (user + system), µs: per-request cost that a loaded machine does not distort. */
  cpuUs: number;
}

function statusField(name: string): number {
  const m = new RegExp(`^${name}:\\s+(\\d+) kB$`, 'm').exec(readFileSync('/proc/self/status', 'utf8'));
  return m ? Number(m[1]) * 1024 : NaN;
}

function openSockets(): number {
  let n = 0;
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      if (readlinkSync(`/proc/self/fd/${fd}`).startsWith('socket:')) n++;
    } catch {
      // The fd closed while being listed (readdir's own, or a socket going away).
    }
  }
  return n;
}

const server = await serve({ limits: JSON.parse(process.argv[2] ?? '{}') });
// The listener and the IPC channel are sockets too.
const baseline = openSockets();
process.on('message', (m: string) => {
  if (m === 'stats') {
    const stats: ChildStats = {
      rss: process.memoryUsage().rss,
      peakRss: statusField('VmHWM'),
      heapUsed: process.memoryUsage().heapUsed,
      sockets: openSockets() - baseline,
      cpuUs: process.cpuUsage().user + process.cpuUsage().system,
    };
    process.send!({ type: 'stats', stats });
  }
});
process.on('disconnect', () => process.exit(0));
process.send!({ type: 'ready', port: server.port, ca: server.ca });
