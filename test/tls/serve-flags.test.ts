/**
 * The transport-limit flags of `meshgate serve`, through the real CLI in its own process: a bad value is a
 * usage error (exit 2) naming the flag, and the values given reach the listener (a connection beyond
 * --max-connections-per-client is closed at accept; a body slower than --webhook-timeout-seconds is cut with 408).
 */
import { describe, it, expect, afterEach } from 'vitest';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import net from 'node:net';
import tls from 'node:tls';
import { fileURLToPath } from 'node:url';
import { LOOPBACK_SERVE } from '../support/serve.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const NODE = join(ROOT, 'node_modules/.bin/node');
const CLI = join(ROOT, 'bin/meshgate.js');
const BASE = [...LOOPBACK_SERVE, '--node-state', join(ROOT, 'examples/node-state.yaml')];

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const c of cleanups.splice(0).reverse()) c();
});

describe('serve: transport flags', () => {
  it.each<[string[], RegExp]>([
    [['--max-connections', '0'], /--max-connections: "0" is not a whole number of at least 1/],
    [
      ['--max-connections', '8', '--max-connections-per-client', '9'],
      /maxConnectionsPerClient \(9\) exceeds maxConnections \(8\)/,
    ],
    [['--max-inflight-reviews', 'lots'], /--max-inflight-reviews: "lots" is not a whole number of at least 1/],
    [['--webhook-timeout-seconds', '31'], /--webhook-timeout-seconds: "31" is not a whole number from 1 to 30/],
    [['--max-inflight-body-mib', '3'], /--max-inflight-body-mib: "3" is not a whole number of at least 7/],
  ])('%j is a usage error naming the flag', (flags, message) => {
    const r = spawnSync(NODE, [CLI, ...BASE, ...flags], { encoding: 'utf8', timeout: 30_000 });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(message);
  });

  it('--max-connections and --webhook-timeout-seconds reach the listener', async () => {
    const certs = mkdtempSync(join(tmpdir(), 'meshgate-flags-'));
    cleanups.push(() => rmSync(certs, { recursive: true, force: true }));
    const child: ChildProcess = spawn(
      NODE,
      [
        CLI,
        ...BASE,
        '--write-certs',
        certs,
        '--max-connections',
        '3',
        '--max-connections-per-client',
        '3',
        '--webhook-timeout-seconds',
        '2',
        '--log-level',
        'info',
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    cleanups.push(() => child.kill('SIGKILL'));
    const port = await new Promise<number>((resolve, reject) => {
      let out = '';
      child.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        const m = /"url":"https:\/\/127\.0\.0\.1:(\d+)"/.exec(out);
        if (m) resolve(Number(m[1]));
      });
      child.once('exit', (code) => reject(new Error(`serve exited (${code}): ${out}`)));
    });
    const ca = readFileSync(join(certs, 'ca.crt'), 'utf8');

    // A body that stops arriving: cut after the 2 s the flag set (the default would be 30 s).
    const t0 = Date.now();
    const slow = tls.connect({ host: '127.0.0.1', port, ca });
    let answer = '';
    slow.on('data', (d: Buffer) => (answer += d.toString()));
    slow.on('error', () => {});
    slow.write('POST /mutate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{');
    await new Promise((r) => slow.once('close', r));
    console.log(`[serve-flags] slow body cut after ${Date.now() - t0} ms: ${JSON.stringify(answer.split('\r\n')[0])}`);
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);

    // Three connections are held; a fourth from the same client is closed at accept (--max-connections-per-client;
    // a fourth from another client would take the slot of the oldest silent one: test/tls/connection-guard.test.ts).
    const open = (): Promise<net.Socket> =>
      new Promise((resolve) => {
        const s = net.connect(port, '127.0.0.1', () => resolve(s));
        s.on('error', () => {});
        s.resume();
        cleanups.push(() => s.destroy());
      });
    const held = [await open(), await open(), await open()];
    const fourth = await open();
    await new Promise((r) => fourth.once('close', r));
    expect(held.every((s) => !s.destroyed)).toBe(true);
  }, 60_000);
});
