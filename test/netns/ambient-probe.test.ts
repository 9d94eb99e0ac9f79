/**
 * `validate-redirect --ambient` against Istio 1.27's own ambient in-pod nat rules in a real pod netns, the validator
 * running as nobody with no capabilities. The stand-in for ztunnel is a root process listening on 127.0.0.1:15053 in
 * the pod netns (where ztunnel's DNS listener is, ztunnel src/config.rs); the real ztunnel serves the real-node
 * scenarios A1–A4. What each state of the pod gives, and the pod's transmit counter: never one packet out.
 * Needs root, iproute2, iptables (with the mark match).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { expectFailure, usePod } from './pod-fixture.ts';
import { NODE, NOBODY } from './run-validator.ts';
import { AMBIENT_NAT, AMBIENT_NAT_NO_DNS } from './ambient-rules.ts';

const pod = usePod();
const AS = { uid: NOBODY, gid: NOBODY };
const FIELDS = { probeAddress: '127.0.0.2:53', probeScope: 'ambient', outboundPort: 15053, inboundPort: null };
let ztunnel: ChildProcess | undefined;

afterEach(() => {
  ztunnel?.kill('SIGKILL');
  ztunnel = undefined;
});

/** A root listener on 127.0.0.1:15053 in the pod netns: ztunnel's DNS listener's stand-in. */
function startZtunnel(): Promise<void> {
  const script =
    "require('node:net').createServer((s) => s.destroy()).listen(15053, '127.0.0.1', () => console.log('listening'))";
  ztunnel = spawn('ip', ['netns', 'exec', pod.topo().pod, NODE, '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
  const child = ztunnel;
  return new Promise((resolve, reject) => {
    child.on('exit', (code) => reject(new Error(`stand-in ztunnel exited with ${code}`)));
    child.stdout!.on('data', (d: Buffer) => d.toString().includes('listening') && resolve());
  });
}

/** Resolves once ambient's DNS capture rule has redirected a TCP connection: the probe's first attempt. */
async function firstAttempt(): Promise<void> {
  for (let waited = 0; waited < 20_000; waited += 20) {
    const rules = pod.ipt().exec(pod.topo().pod, ['-t', 'nat', '-L', 'ISTIO_OUTPUT', '-v', '-x', '-n']);
    const line = rules.split('\n').find((l) => /tcp dpt:53 .*redir ports 15053/.test(l));
    if (line && Number(line.trim().split(/\s+/)[0]) > 0) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error("the probe's first connection was not redirected within 20 s");
}

describe('the ambient probe under Istio ambient in-pod rules', () => {
  it('rules present and ztunnel serving the pod: captured, nothing leaves the pod', async () => {
    pod.install(AMBIENT_NAT);
    await startZtunnel();
    const { run, podTx, remoteTcp } = await pod.validate(['--ambient', '--timeout', '2s'], AS);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(
      /^meshgate validate-redirect: ok: TCP from 127\.0\.0\.1:\d+ to 127\.0\.0\.2:53 was captured by ztunnel .* on node node-under-test \(attempt 1, \d+ms\)\n$/,
    );
    expect(podTx, 'packets transmitted by the pod').toBe(0);
    expect(remoteTcp).toBe(0);
    console.info(`ambient probe ok: ${run.stdout.trim()}; wall ${Math.round(run.wallMs)}ms including Node start-up`);
  });

  it('ztunnel listening but no rules (istio#56652): ambient_not_captured, nothing leaves the pod', async () => {
    await startZtunnel();
    const { run, podTx } = await pod.validate(['--ambient', '--timeout', '1s'], AS);
    const msg = expectFailure(run, 'ambient_not_captured', FIELDS);
    expect(msg.detail).toMatch(/^\d+ connects to 127\.0\.0\.2:53 over \d+ms got no handshake \(ECONNREFUSED ×\d+\)/);
    expect(podTx).toBe(0);
    console.info(`no rules: verdict after ${msg.elapsedMs}ms (timeout 1000ms): ${msg.detail}`);
  });

  it('rules present but ztunnel not serving the pod (pending): ambient_not_captured', async () => {
    pod.install(AMBIENT_NAT);
    const { run, podTx } = await pod.validate(['--ambient', '--timeout', '500ms'], AS);
    expectFailure(run, 'ambient_not_captured', FIELDS);
    expect(podTx).toBe(0);
  });

  it('no rules and no ztunnel: ambient_not_captured, nothing leaves the pod', async () => {
    const { run, podTx, remoteTcp } = await pod.validate(['--ambient', '--timeout', '500ms'], AS);
    expectFailure(run, 'ambient_not_captured', FIELDS);
    expect(podTx).toBe(0);
    expect(remoteTcp).toBe(0);
  });

  it('DNS capture off for the pod: the rules that remain do not redirect the probe, so it is refused', async () => {
    pod.install(AMBIENT_NAT_NO_DNS);
    await startZtunnel();
    const { run, podTx } = await pod.validate(['--ambient', '--timeout', '500ms'], AS);
    expectFailure(run, 'ambient_not_captured', FIELDS);
    expect(podTx).toBe(0);
  });

  it('enrolled while the probe retries (istio-cni late enrolment): captured on a later attempt', async () => {
    pod.install(AMBIENT_NAT);
    // ztunnel starts once the probe's first connection has been redirected to nothing (not after a fixed time,
    // which a loaded machine can spend starting the probe alone).
    const probing = pod.validate(['--ambient', '--timeout', '10s'], AS);
    await firstAttempt();
    await startZtunnel();
    const { run, podTx } = await probing;
    expect(run.code, run.stderr).toBe(0);
    const attempt = Number(/\(attempt (\d+),/.exec(run.stdout)?.[1]);
    expect(attempt).toBeGreaterThan(1);
    expect(podTx).toBe(0);
    console.info(`late enrolment: ${run.stdout.trim()}`);
  });

  it('a probe address off the pod or on another port is refused before anything is sent', async () => {
    pod.install(AMBIENT_NAT);
    const off = await pod.validate(['--ambient', '--probe-address', '192.0.2.1:53'], AS);
    expect(terminationDetail(off.run)).toMatch(/192\.0\.2\.1 is not an address of this pod/);
    const port = await pod.validate(['--ambient', '--probe-address', '127.0.0.2:80'], AS);
    expect(terminationDetail(port.run)).toMatch(/port 80: with --ambient it must be 53/);
    expect(off.podTx + port.podTx).toBe(0);
  });
});

function terminationDetail(run: { code: number | null; termination: string }): string {
  expect(run.code).toBe(42);
  return String((JSON.parse(run.termination) as { detail: string }).detail);
}
