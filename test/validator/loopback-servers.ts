/**
 * Loopback stand-ins for what a probe can meet when redirection is missing: a closed port, a server that speaks
 * another protocol, one that knows ours and tries to forge the proof, one that stays silent, one that resets, one
 * that relays the probe to the validator's own listener on a second connection, and a listener whose accept queue is
 * full (SYNs dropped, like a firewall). All on 127.0.0.1 only.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { HELLO_BYTES, TOKEN_BYTES } from '../../src/validator/proof.ts';

export type Behaviour = 'http' | 'forge' | 'silent' | 'reset' | 'relay';

export interface Running {
  readonly port: number;
  readonly connections: () => number;
  close(): Promise<void>;
}

/** `relayTo`: for 'relay', the loopback port the server forwards each connection to. */
export async function startServer(behaviour: Behaviour, relayTo?: number): Promise<Running> {
  const sockets = new Set<Socket>();
  let connections = 0;
  const server = createServer((s) => {
    connections++;
    sockets.add(s);
    s.on('error', () => {});
    s.on('close', () => sockets.delete(s));
    // Reset only after the hello, so the probe has certainly seen the connection established.
    if (behaviour === 'reset') s.once('data', () => s.resetAndDestroy());
    if (behaviour === 'http') s.once('data', () => s.end('HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n'));
    if (behaviour === 'forge') onHello(s, (token) => s.end(createHash('sha256').update(token).digest()));
    if (behaviour === 'relay') {
      const upstream = connect(relayTo!, '127.0.0.1').on('error', () => s.destroy());
      s.pipe(upstream).pipe(s);
    }
  });
  const port = await listen(server, 0);
  return {
    port,
    connections: () => connections,
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise((r) => server.close(() => r()));
    },
  };
}

function onHello(s: Socket, answer: (token: Buffer) => void): void {
  let got = Buffer.alloc(0);
  s.on('data', (d: Buffer) => {
    got = Buffer.concat([got, d]);
    if (got.length >= HELLO_BYTES) answer(got.subarray(HELLO_BYTES - TOKEN_BYTES, HELLO_BYTES));
  });
}

export function listen(server: Server, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve((server.address() as { port: number }).port));
  });
}

/** A loopback port nothing listens on: the e2e harness's, which never hands out the same port twice. */
export { freePort } from '../e2e/harness/net.ts';

/**
 * A listener that never accepts: a child process binds with backlog 1 and then blocks its event loop. Once the
 * accept queue holds its filler connections, the kernel drops further SYNs, so a probe's connect hangs until its timeout.
 */
export async function startBlackhole(): Promise<{ port: number; close(): void }> {
  const script = `
    const s = require('node:net').createServer();
    s.listen({ port: 0, host: '127.0.0.1', backlog: 1 }, () => {
      process.stdout.write(s.address().port + '\\n');
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
    });`;
  const child: ChildProcess = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`blackhole exited with ${code}`)));
    child.stdout!.once('data', (d: Buffer) => resolve(Number(d.toString().trim())));
  });
  // Fill the accept queue; the fillers stay connected (or pending) until close.
  const fillers = [0, 1, 2].map(() => connect(port, '127.0.0.1').on('error', () => {}));
  await new Promise((r) => setTimeout(r, 200));
  return {
    port,
    close: () => {
      for (const f of fillers) f.destroy();
      child.kill('SIGKILL');
    },
  };
}
