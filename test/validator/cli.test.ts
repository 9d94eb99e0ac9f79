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
import { validateRedirectCommand } from '../../src/cli/validate-redirect.ts';
import { freePort, startServer } from './loopback-servers.ts';
import { TERMINATION_FIELDS } from './termination-fields.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function termLog(): string {
  const dir = mkdtempSync(join(tmpdir(), 'mgv-cli-'));
  dirs.push(dir);
  const path = join(dir, 'termination-log');
  writeFileSync(path, '');
  return path;
}

/** Istio-style pod-scope probe on free loopback ports: no rule on this host, so the stand-in at 127.0.0.6 answers. */
async function loopbackArgs(log: string): Promise<string[]> {
  return [
    '--probe-address',
    `127.0.0.6:${await freePort()}`,
    '--outbound-port',
    String(await freePort()),
    '--inbound-port',
    String(await freePort()),
    '--timeout',
    '1s',
    '--termination-log',
    log,
  ];
}

/** An external probe at `probePort` on 127.0.0.1 (for servers that stand in for a remote peer). */
async function externalArgs(probePort: number, log: string): Promise<string[]> {
  return [
    '--external-probe',
    '--probe-address',
    `127.0.0.1:${probePort}`,
    '--outbound-port',
    String(await freePort()),
    '--inbound-port',
    'none',
    '--timeout',
    '1s',
    '--termination-log',
    log,
  ];
}

describe('meshgate validate-redirect', () => {
  it('unredirected pod-scope probe: exit 42, one stderr line, the termination message with node from NODE_NAME', async () => {
    const io = memoryIO('', { NODE_NAME: 'worker-7' });
    const log = termLog();
    const args = await loopbackArgs(log);
    expect(await validateRedirectCommand(args, io)).toBe(42);
    expect(io.out).toBe('');
    expect(io.err.split('\n')).toHaveLength(2);
    expect(io.err).toMatch(
      /^meshgate validate-redirect: FAILED not_redirected \(exit 42\): TCP is not redirected: the probe reached its own destination/,
    );
    const msg = JSON.parse(readFileSync(log, 'utf8'));
    expect(Object.keys(msg)).toEqual(TERMINATION_FIELDS);
    expect(msg).toMatchObject({
      reason: 'not_redirected',
      node: 'worker-7',
      probeAddress: args[1],
      probeScope: 'pod',
      sourceAddress: '127.0.0.1',
      outboundPort: Number(args[3]),
      inboundPort: Number(args[5]),
    });
    expect(msg.elapsedMs).toBeGreaterThanOrEqual(0);
  });

  it('a probe aimed straight at a listen port would "succeed" without any redirect: refused, nothing sent', async () => {
    const io = memoryIO();
    const port = await freePort();
    const args = [
      '--external-probe',
      '--probe-address',
      `127.0.0.1:${port}`,
      '--outbound-port',
      String(await freePort()),
      '--inbound-port',
      String(port),
    ];
    // validateRedirect itself would connect and verify the proof (the in-process tests use that as a stand-in for a
    // working redirect); the CLI refuses the combination before listening. The success line is checked in test/netns.
    const log = termLog();
    expect(await validateRedirectCommand([...args, '--termination-log', log], io)).toBe(42);
    expect(io.out).toBe('');
    expect(JSON.parse(readFileSync(log, 'utf8'))).toMatchObject({
      reason: 'internal_error',
      detail: expect.stringMatching(/one of the listen ports/),
      elapsedMs: 0,
    });
  });

  it('--node-name wins over NODE_NAME; no node at all is null', async () => {
    const log = termLog();
    expect(
      await validateRedirectCommand(
        [...(await loopbackArgs(log)), '--node-name', 'flag-node'],
        memoryIO('', { NODE_NAME: 'env-node' }),
      ),
    ).toBe(42);
    expect(JSON.parse(readFileSync(log, 'utf8')).node).toBe('flag-node');
    expect(await validateRedirectCommand(await loopbackArgs(log), memoryIO())).toBe(42);
    expect(JSON.parse(readFileSync(log, 'utf8')).node).toBeNull();
  });

  it('a server that is not the listener: wrong_listener', async () => {
    const server = await startServer('http');
    try {
      const log = termLog();
      expect(await validateRedirectCommand(await externalArgs(server.port, log), memoryIO())).toBe(42);
      expect(JSON.parse(readFileSync(log, 'utf8'))).toMatchObject({
        reason: 'wrong_listener',
        probeScope: 'external',
        sourceAddress: null,
        inboundPort: null,
      });
    } finally {
      await server.close();
    }
  });

  it('an unwritable termination log does not change the exit code', async () => {
    const io = memoryIO();
    const args = await loopbackArgs(join(tmpdir(), 'mgv-missing-dir', 'nested', 'log'));
    expect(await validateRedirectCommand(args, io)).toBe(42);
    expect(io.err).toMatch(/could not write the termination message: .*ENOENT/);
  });

  it.each([
    [['--timeout', '5'], /--timeout: "5" is not a duration/],
    [['--probe-address', 'example.com:80'], /--probe-address: "example.com" is not an IP address/],
    [['--outbound-port', '99999'], /--outbound-port: 99999 is not a port/],
    [['--probe-address', '127.0.0.6:15001'], /port 15001 is one of the listen ports/],
    [['--probe-address', '127.0.0.6:15006'], /port 15006 is one of the listen ports/],
    [['--inbound-port', '15001'], /--inbound-port 15001 equals --outbound-port/],
    [['--inbound-port', '0'], /--inbound-port: must not be 0 \(use "none"/],
    [['--inbound-port', 'eighty'], /--inbound-port: "eighty" is not a port/],
    [['--source-address', 'pod'], /--source-address: "pod" is not an IP address/],
    [['--source-address', '::1'], /--source-address ::1 is IPv6 but the probe is IPv4/],
    [['--external-probe', '--source-address', '127.0.0.1'], /a loopback source cannot be routed off the pod/],
    [
      ['--probe-address', '[::6]:15002', '--listen-address', '127.0.0.1'],
      /--listen-address 127\.0\.0\.1 is IPv4 but the probe is IPv6/,
    ],
    [['--probe-address', '0.0.0.0:15002'], /unspecified address/],
    [['--bogus'], /Unknown option '--bogus'/],
    [['--listen-address', 'localhost'], /--listen-address: "localhost" is not an IP address/],
  ])('bad arguments %j: exit 42, internal_error, defaults in the message, nothing sent', async (bad, detail) => {
    const io = memoryIO('', { NODE_NAME: 'n' });
    const log = termLog();
    expect(await validateRedirectCommand([...bad, '--termination-log', log], io)).toBe(42);
    const msg = JSON.parse(readFileSync(log, 'utf8'));
    expect(msg.reason).toBe('internal_error');
    expect(msg.detail).toMatch(/^invalid arguments: /);
    expect(msg.detail).toMatch(detail);
    expect(msg.elapsedMs).toBe(0);
    expect(msg.node).toBe('n');
    if (!bad.includes('--probe-address'))
      expect(msg.probeAddress).toBe(bad.includes('--external-probe') ? '192.0.2.1:80' : '127.0.0.6:15002');
    expect(msg.probeScope).toBe(bad.includes('--external-probe') ? 'external' : 'pod');
    if (!bad.includes('--outbound-port')) expect(msg.outboundPort).toBe(15001);
    if (!bad.includes('--inbound-port')) expect(msg.inboundPort).toBe(15006);
    // The source default follows the probe's family; with an unparsable probe there is none to report.
    const source =
      bad.includes('--external-probe') || bad.includes('example.com:80')
        ? null
        : bad.includes('[::6]:15002')
          ? '::1'
          : '127.0.0.1';
    if (!bad.includes('--source-address')) expect(msg.sourceAddress).toBe(source);
  });

  it('anything that throws still ends in exit 42 with internal_error', async () => {
    const io = memoryIO();
    io.stdout = () => {
      throw new Error('stdout closed');
    };
    const log = termLog();
    expect(await validateRedirectCommand(['--help', '--termination-log', log], io)).toBe(42);
    expect(JSON.parse(readFileSync(log, 'utf8'))).toMatchObject({
      reason: 'internal_error',
      detail: expect.stringMatching(/stdout closed/),
    });
  });

  it('--help lists every flag the webhook may pass and exits 0', async () => {
    const io = memoryIO();
    expect(await validateRedirectCommand(['--help'], io)).toBe(0);
    for (const flag of [
      '--outbound-port',
      '--inbound-port',
      '--probe-address',
      '--external-probe',
      '--source-address',
      '--listen-address',
      '--timeout',
      '--termination-log',
      '--node-name',
    ]) {
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
