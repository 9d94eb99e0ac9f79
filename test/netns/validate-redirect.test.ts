/**
 * The validator against real kernel redirection: a pod netns with (or without) istio-iptables-style REDIRECT rules,
 * a remote netns behind its default route that owns the probe addresses. Each case runs the real CLI as UID 1338
 * with no capabilities and checks the exit code, the termination message and what reached the remote netns.
 * Needs root, iproute2, iptables: without them every case fails with the reason (never skipped).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { VALIDATION_FAILED_EXIT_CODE } from '../../src/validator/reasons.ts';
import {
  flushNat,
  installNat,
  installRemoteFilter,
  meshOutboundRules,
  natRules,
  pickIptables,
  PROXY_UID,
  remoteTcpPackets,
  resetRemoteCounters,
  type Iptables,
} from './iptables.ts';
import { assertPrerequisites, createTopology, deleteLeftovers, destroyTopology, setDefaultRoute, TEST_NET_ADDRESS, type Topology } from './netns.ts';
import { NODE, runValidator, type ValidatorRun } from './run-validator.ts';

const FORGING_PORT = 8080;
const CLOSED_PORT = 8081;
const TIMEOUT = 1500;
/** Node start-up and namespace entry, on a loaded 2-core machine. */
const STARTUP_MARGIN_MS = 2500;

let topo: Topology | undefined;
let ipt: Iptables;
let server: ChildProcess | undefined;
let serverConnections = 0;

beforeAll(async () => {
  assertPrerequisites();
  const stale = deleteLeftovers();
  if (stale.length > 0) console.info(`deleted leftover namespaces: ${stale.join(', ')}`);
  topo = createTopology();
  ipt = pickIptables(topo.pod);
  console.info(`netns tests use ${ipt.bin}: ${ipt.version}`);
  installRemoteFilter(ipt, topo.remote, TEST_NET_ADDRESS);
  server = await startForgingServer(topo.remote, topo.remoteIp, FORGING_PORT);
});

afterAll(() => {
  server?.kill('SIGKILL');
  destroyTopology(topo);
});

beforeEach(() => {
  flushNat(ipt, topo!.pod);
  setDefaultRoute(topo!, true);
  resetRemoteCounters(ipt, topo!.remote);
  serverConnections = 0;
});

function t(): Topology {
  return topo!;
}

function redirectTo(port: number): void {
  const rules = meshOutboundRules(port);
  installNat(ipt, t().pod, rules);
  const installed = natRules(ipt, t().pod);
  for (const rule of rules) expect(installed, 'rule really installed in the pod netns').toContain(rule);
}

function termination(run: ValidatorRun): Record<string, unknown> {
  expect(run.termination, `termination log (stderr: ${run.stderr})`).not.toBe('');
  return JSON.parse(run.termination) as Record<string, unknown>;
}

function expectFailure(run: ValidatorRun, reason: string, probeAddress: string): Record<string, unknown> {
  expect(run.code, run.stderr).toBe(VALIDATION_FAILED_EXIT_CODE);
  const msg = termination(run);
  expect(Object.keys(msg).sort()).toEqual(['detail', 'elapsedMs', 'node', 'outboundPort', 'probeAddress', 'reason']);
  expect(msg).toMatchObject({ reason, node: 'node-under-test', probeAddress, outboundPort: 15001 });
  expect(run.stderr).toMatch(new RegExp(`^meshgate validate-redirect: FAILED ${reason} \\(exit 42\\)`));
  expect(run.stdout).toBe('');
  return msg;
}

describe('validate-redirect in a pod network namespace', () => {
  it('succeeds with mesh REDIRECT rules and the default probe address, and nothing leaves the pod', async () => {
    redirectTo(15001);
    const run = await runValidator(t().pod, ['--timeout', `${TIMEOUT}ms`]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^meshgate validate-redirect: ok: outbound TCP to 192\.0\.2\.1:80 was redirected to 127\.0\.0\.1:15001 on node node-under-test/);
    expect(run.termination).toBe('');
    expect(remoteTcpPackets(ipt, t().remote)).toBe(0);
  });

  it('succeeds against a probe address where a protocol-aware server listens, which never sees the probe', async () => {
    redirectTo(15001);
    const run = await runValidator(t().pod, ['--probe-address', `${t().remoteIp}:${FORGING_PORT}`, '--outbound-port', '15001']);
    expect(run.code, run.stderr).toBe(0);
    expect(remoteTcpPackets(ipt, t().remote)).toBe(0);
    expect(serverConnections).toBe(0);
  });

  it('without rules, a server at the probe address cannot forge the proof: wrong_listener', async () => {
    const probe = `${t().remoteIp}:${FORGING_PORT}`;
    const run = await runValidator(t().pod, ['--probe-address', probe, '--timeout', `${TIMEOUT}ms`]);
    const msg = expectFailure(run, 'wrong_listener', probe);
    expect(msg.detail).toMatch(/not the proof/);
    expect(serverConnections).toBe(1);
  });

  it('without rules, a closed port at the probe address: redirect_missing (refused)', async () => {
    const probe = `${t().remoteIp}:${CLOSED_PORT}`;
    const run = await runValidator(t().pod, ['--probe-address', probe, '--timeout', `${TIMEOUT}ms`]);
    expect(expectFailure(run, 'redirect_missing', probe).detail).toMatch(/ECONNREFUSED/);
    expect(remoteTcpPackets(ipt, t().remote)).toBeGreaterThan(0);
  });

  it('without rules, the default probe SYN is dropped on the way: timeout within the deadline', async () => {
    const run = await runValidator(t().pod, ['--timeout', `${TIMEOUT}ms`]);
    const msg = expectFailure(run, 'timeout', '192.0.2.1:80');
    expect(msg.elapsedMs).toBeGreaterThanOrEqual(TIMEOUT);
    expect(msg.elapsedMs, 'the deadline is kept').toBeLessThan(TIMEOUT + 1000);
    expect(run.wallMs).toBeLessThan(TIMEOUT + STARTUP_MARGIN_MS);
    expect(remoteTcpPackets(ipt, t().remote), 'the SYN reached the remote netns and was dropped').toBeGreaterThan(0);
  });

  it('a rule redirecting to the wrong port fails, and still nothing leaves the pod', async () => {
    redirectTo(15002);
    const run = await runValidator(t().pod, ['--timeout', `${TIMEOUT}ms`]);
    expect(expectFailure(run, 'redirect_missing', '192.0.2.1:80').detail).toMatch(/ECONNREFUSED/);
    expect(remoteTcpPackets(ipt, t().remote)).toBe(0);
  });

  it('run as the proxy UID, the probe is exempted from redirection and fails: the validator needs its own UID', async () => {
    redirectTo(15001);
    const probe = `${t().remoteIp}:${FORGING_PORT}`;
    const run = await runValidator(t().pod, ['--probe-address', probe, '--timeout', `${TIMEOUT}ms`], { uid: PROXY_UID });
    expectFailure(run, 'wrong_listener', probe);
    expect(serverConnections).toBe(1);
  });

  it('with rules but no route to the probe address, connect fails before the nat OUTPUT chain: redirect_missing', async () => {
    redirectTo(15001);
    setDefaultRoute(t(), false);
    const run = await runValidator(t().pod, ['--timeout', `${TIMEOUT}ms`]);
    expect(expectFailure(run, 'redirect_missing', '192.0.2.1:80').detail).toMatch(/ENETUNREACH/);
  });
});

/** Starts the forging server in the remote netns and counts the connections it accepts. */
function startForgingServer(ns: string, host: string, port: number): Promise<ChildProcess> {
  const script = fileURLToPath(new URL('./fixtures/forging-server.ts', import.meta.url));
  const child = spawn('ip', ['netns', 'exec', ns, NODE, script, host, String(port)], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  return new Promise((resolve, reject) => {
    child.on('exit', (code) => reject(new Error(`forging server exited with ${code}: ${stderr}`)));
    child.stdout!.on('data', (d: Buffer) => {
      for (const line of d.toString().split('\n')) {
        if (line === 'listening') resolve(child);
        if (line === 'connection') serverConnections++;
      }
    });
  });
}
