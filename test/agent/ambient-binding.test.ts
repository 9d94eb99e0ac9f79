/**
 * Issue 33 §8 on the real kernel: the node agent's ambient evidence is bound to the process that serves the ZDS
 * socket. Here this test process plays istio-cni's node agent (a unix listener on the socket path and the readiness
 * port), a child plays ztunnel (it connects). A forger — another process in the same network namespace, in a mount
 * namespace of its own where the socket path is its own file — listens under the same name, connects to itself and
 * answers readiness: the evidence as read before (/proc/net/unix entries by path, a 200 on the port) counts it; now it
 * does not, and readiness served by any process but the socket's owner does not count either. Needs root (unshare,
 * mount) and /proc.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer as httpServer, type Server } from 'node:http';
import { createServer, type Server as NetServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { connectionsOn, readAmbientFacts } from '../../src/agent/ambient-facts.ts';

const NODE = fileURLToPath(new URL('../../node_modules/.bin/node', import.meta.url));
const FORGER = fileURLToPath(new URL('./fixtures/zds-forger.ts', import.meta.url));

const children: ChildProcess[] = [];
const servers: Array<Server | NetServer> = [];
const sockets: Socket[] = [];
afterEach(() => {
  for (const c of children.splice(0)) c.kill('SIGKILL');
  for (const s of sockets.splice(0)) s.destroy();
  for (const s of servers.splice(0)) s.close();
});

const listen = <S extends Server | NetServer>(s: S, ...args: unknown[]) =>
  new Promise<S>((r) => (s.listen as (...a: unknown[]) => void)(...args, () => r(s)));

/** A child that prints "ready" once it is set up. */
function start(cmd: string, args: string[]): Promise<ChildProcess> {
  const c = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(c);
  let err = '';
  c.stderr!.on('data', (d) => (err += d));
  return new Promise((resolve, reject) => {
    c.stdout!.on('data', (d: Buffer) => d.toString().includes('ready') && resolve(c));
    c.once('exit', (code) => reject(new Error(`${cmd} exited ${code}: ${err}`)));
  });
}

/** ztunnel: a child connected to the ZDS socket, holding the connection. */
const ztunnel = (path: string) =>
  start(NODE, [
    '-e',
    `const c = require('node:net').connect(${JSON.stringify(path)}, () => console.log('ready')); setInterval(() => {}, 1e6);`,
  ]);

/** The forger, in a mount namespace of its own where the socket's directory is a fresh tmpfs. */
const forger = (dir: string, path: string, port?: number) =>
  start('unshare', [
    '--mount',
    '--propagation',
    'private',
    'sh',
    '-c',
    `mount -t tmpfs tmpfs "$1" && shift && exec "$@"`,
    'sh',
    dir,
    NODE,
    FORGER,
    path,
    ...(port ? [String(port)] : []),
  ]);

async function setup() {
  const dir = mkdtempSync(join(tmpdir(), 'mg-zds-'));
  const path = join(dir, 'ztunnel.sock');
  const http = await listen(
    httpServer((_, res) => res.writeHead(200).end()),
    0,
    '127.0.0.1',
  );
  servers.push(http);
  const port = (http.address() as { port: number }).port;
  const config = {
    readyzUrl: `http://127.0.0.1:${port}/readyz`,
    zdsSocket: path,
    procNetUnix: '/proc/net/unix',
    pollMs: 1000,
  };
  return { dir, path, http, port, config };
}

/** This process as istio-cni's node agent: the ZDS listener (accepting into `sockets`). */
async function istioCni(path: string): Promise<NetServer> {
  const s = await listen(
    createServer((c) => void sockets.push(c)),
    path,
  );
  servers.push(s);
  return s;
}

describe("the ambient evidence is istio-cni's node agent's own", () => {
  it('the real listener, a connected ztunnel and its readiness: ready and connected, naming the process', async () => {
    const { path, config } = await setup();
    await istioCni(path);
    expect((await readAmbientFacts(config)).ztunnel.connected).toBe(false);
    await ztunnel(path);
    const facts = await readAmbientFacts(config);
    console.info(`[ambient-binding] real: ${JSON.stringify(facts)}`);
    expect(facts.agent).toMatchObject({ ready: true });
    expect(facts.agent.detail).toContain(`process ${process.pid}`);
    expect(facts.ztunnel).toMatchObject({ connected: true });
    expect(facts.ztunnel.detail).toMatch(new RegExp(`^1 connection\\(s\\) .* process ${process.pid}$`));
  });

  it('a forger alone (socket under the same name, connected to itself, answering readiness) is not counted', async () => {
    const { dir, path, http, port, config } = await setup();
    http.close(); // the port is the forger's now
    await new Promise((r) => setTimeout(r, 100));
    await forger(dir, path, port);
    // What the evidence was: an entry under the socket's path in state connected, and a 200 on the port.
    const before = connectionsOn(readFileSync('/proc/net/unix', 'utf8'), path);
    const facts = await readAmbientFacts(config);
    console.info(`[ambient-binding] forger alone: entries by path ${before}; now ${JSON.stringify(facts)}`);
    expect(before).toBeGreaterThan(0);
    expect(facts.ztunnel.connected).toBe(false);
    expect(facts.ztunnel.detail).toMatch(/is not the node's file/);
    expect(facts.agent.ready).toBe(false);
    rmSync(dir, { recursive: true, force: true });
  });

  it('a forger beside the real agent: only the real listener’s connections count', async () => {
    const { dir, path, config } = await setup();
    await istioCni(path);
    await forger(dir, path);
    let facts = await readAmbientFacts(config);
    expect(facts.ztunnel).toMatchObject({ connected: false });
    expect(facts.ztunnel.detail).toContain(`process ${process.pid}`);
    await ztunnel(path);
    facts = await readAmbientFacts(config);
    expect(facts.ztunnel).toMatchObject({ connected: true });
    expect(facts.ztunnel.detail).toMatch(/^1 connection\(s\)/);
  });

  it('readiness answered by another process than the socket’s owner is not its readiness', async () => {
    const { dir, path, http, port, config } = await setup();
    http.close();
    await new Promise((r) => setTimeout(r, 100));
    await istioCni(path);
    await ztunnel(path);
    // Another process answers on the readiness port (the forger's socket path is elsewhere: only its HTTP matters).
    await forger(dir, join(dir, 'other.sock'), port);
    const facts = await readAmbientFacts(config);
    console.info(`[ambient-binding] readiness by another process: ${JSON.stringify(facts.agent)}`);
    expect(facts.agent.ready).toBe(false);
    expect(facts.agent.detail).toMatch(new RegExp(`port ${port} is not held by process ${process.pid}`));
    expect(facts.ztunnel.connected).toBe(true);
  });
});
