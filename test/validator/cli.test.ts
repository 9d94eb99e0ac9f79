/**
 * The `validate-redirect` subcommand in-process: flags, exit code, the one stderr line and the termination message.
 * Probes only go to loopback here; the success path needs a real REDIRECT and is in test/netns.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { memoryIO } from '../../src/cli/io.ts';
import { main } from '../../src/cli/main.ts';
import { run } from '../../src/cli/validate-redirect.ts';
import { freePort, startServer } from './loopback-servers.ts';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function termLog(): string {
  const dir = mkdtempSync(join(tmpdir(), 'mgv-cli-'));
  dirs.push(dir);
  const path = join(dir, 'termination-log');
  writeFileSync(path, '');
  return path;
}

async function loopbackArgs(probePort: number, log: string): Promise<string[]> {
  return ['--probe-address', `127.0.0.1:${probePort}`, '--outbound-port', String(await freePort()), '--timeout', '1s', '--termination-log', log];
}

describe('meshgate validate-redirect', () => {
  it('refused probe: exit 42, one stderr line, the termination message with node from NODE_NAME', async () => {
    const io = memoryIO('', { NODE_NAME: 'worker-7' });
    const log = termLog();
    const probePort = await freePort();
    const args = await loopbackArgs(probePort, log);
    expect(await run(args, io)).toBe(42);
    expect(io.out).toBe('');
    expect(io.err.split('\n')).toHaveLength(2);
    expect(io.err).toMatch(/^meshgate validate-redirect: FAILED redirect_missing \(exit 42\): outbound TCP is not redirected.*ECONNREFUSED/);
    const msg = JSON.parse(readFileSync(log, 'utf8'));
    expect(Object.keys(msg)).toEqual(['reason', 'node', 'probeAddress', 'outboundPort', 'elapsedMs', 'detail']);
    expect(msg).toMatchObject({ reason: 'redirect_missing', node: 'worker-7', probeAddress: `127.0.0.1:${probePort}`, outboundPort: Number(args[3]) });
    expect(msg.elapsedMs).toBeGreaterThanOrEqual(0);
  });

  it('--node-name wins over NODE_NAME; no node at all is null', async () => {
    const log = termLog();
    expect(await run([...(await loopbackArgs(await freePort(), log)), '--node-name', 'flag-node'], memoryIO('', { NODE_NAME: 'env-node' }))).toBe(42);
    expect(JSON.parse(readFileSync(log, 'utf8')).node).toBe('flag-node');
    expect(await run(await loopbackArgs(await freePort(), log), memoryIO())).toBe(42);
    expect(JSON.parse(readFileSync(log, 'utf8')).node).toBeNull();
  });

  it('a server that is not the listener: wrong_listener', async () => {
    const server = await startServer('http');
    try {
      const log = termLog();
      expect(await run(await loopbackArgs(server.port, log), memoryIO())).toBe(42);
      expect(JSON.parse(readFileSync(log, 'utf8')).reason).toBe('wrong_listener');
    } finally {
      await server.close();
    }
  });

  it('an unwritable termination log does not change the exit code', async () => {
    const io = memoryIO();
    const args = await loopbackArgs(await freePort(), join(tmpdir(), 'mgv-missing-dir', 'nested', 'log'));
    expect(await run(args, io)).toBe(42);
    expect(io.err).toMatch(/could not write the termination message: .*ENOENT/);
  });

  it.each([
    [['--timeout', '5'], /--timeout: "5" is not a duration/],
    [['--probe-address', 'example.com:80'], /--probe-address: "example.com" is not an IP address/],
    [['--outbound-port', '99999'], /--outbound-port: 99999 is not a port/],
    [['--probe-address', '10.0.0.1:15001'], /equals --outbound-port/],
    [['--bogus'], /Unknown option '--bogus'/],
    [['--listen-address', 'localhost'], /--listen-address: "localhost" is not an IP address/],
  ])('bad arguments %j: exit 42, internal_error, defaults in the message, nothing sent', async (bad, detail) => {
    const io = memoryIO('', { NODE_NAME: 'n' });
    const log = termLog();
    expect(await run([...bad, '--termination-log', log], io)).toBe(42);
    const msg = JSON.parse(readFileSync(log, 'utf8'));
    expect(msg.reason).toBe('internal_error');
    expect(msg.detail).toMatch(/^invalid arguments: /);
    expect(msg.detail).toMatch(detail);
    expect(msg.elapsedMs).toBe(0);
    expect(msg.node).toBe('n');
    if (!bad.includes('--probe-address')) expect(msg.probeAddress).toBe('192.0.2.1:80');
    if (!bad.includes('--outbound-port')) expect(msg.outboundPort).toBe(15001);
  });

  it('anything that throws still ends in exit 42 with internal_error', async () => {
    const io = memoryIO();
    io.stdout = () => {
      throw new Error('stdout closed');
    };
    const log = termLog();
    expect(await run(['--help', '--termination-log', log], io)).toBe(42);
    expect(JSON.parse(readFileSync(log, 'utf8'))).toMatchObject({ reason: 'internal_error', detail: expect.stringMatching(/stdout closed/) });
  });

  it('--help lists every flag the webhook may pass and exits 0', async () => {
    const io = memoryIO();
    expect(await run(['--help'], io)).toBe(0);
    for (const flag of ['--outbound-port', '--probe-address', '--listen-address', '--timeout', '--termination-log', '--node-name']) {
      expect(io.out).toContain(flag);
    }
  });

  it('is registered in the dispatcher', async () => {
    const io = memoryIO();
    expect(await main(['--help'], io)).toBe(0);
    expect(io.out).toMatch(/validate-redirect\s+init container/);
    const sub = memoryIO();
    expect(await main(['validate-redirect', '--help'], sub)).toBe(0);
    expect(sub.out).toMatch(/^usage: meshgate validate-redirect/);
  });
});
