/**
 * The ambient probe against the REAL ztunnel (scripts/build-ztunnel.sh, `--features testing`) serving a real pod
 * netns in in-pod mode (PROXY_MODE=shared, INPOD_UDS), with Istio 1.27's in-pod nat rules (default.golden) in that
 * netns. The node agent is a stand-in (test/netns/fixtures/zds-agent.py: ZDS over SOCK_SEQPACKET, the pod's netns
 * handed over as SCM_RIGHTS, as ztunnel's own examples/inpodserver.rs does); istio-cni's real node agent, which also
 * installs the rules, is the real-node scenarios' part. ztunnel itself runs in this test run's isolated network
 * namespace (lo only), no istiod (XDS_ADDRESS empty, fake CA, a local XDS file with the pod). Needs root.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { findMeshBuild } from '../meshbin/binaries.ts';
import { AMBIENT_NAT } from './ambient-rules.ts';
import { expectFailure, usePod } from './pod-fixture.ts';
import { NOBODY } from './run-validator.ts';

const zt = findMeshBuild('ztunnel');
const pod = usePod();
const tmp = mkdtempSync(join(tmpdir(), 'meshgate-ambient-zt-'));
const AS = { uid: NOBODY, gid: NOBODY };
let procs: ChildProcess[] = [];

afterEach(() => {
  for (const p of procs) p.kill('SIGKILL');
  procs = [];
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function started(child: ChildProcess, line: RegExp, what: string, log: { text: string }): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what}: no ${line} within 20 s:\n${log.text}`)), 20_000);
    const seen = (d: Buffer) => {
      log.text += d.toString();
      if (line.test(log.text)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on('data', seen);
    child.stderr?.on('data', seen);
    child.on('exit', (code) => reject(new Error(`${what} exited with ${code}:\n${log.text}`)));
  });
}

/** The stand-in node agent and the real ztunnel, until ztunnel acked the pod. */
async function serve(): Promise<{ ztunnel: ChildProcess; log: { text: string } }> {
  const socket = join(tmp, 'ztunnel.sock');
  const xds = join(tmp, 'local.yaml');
  writeFileSync(
    xds,
    [
      'workloads:',
      '- uid: cluster1//v1/Pod/demo/web',
      '  name: web',
      '  namespace: demo',
      '  serviceAccount: default',
      `  workloadIps: ["${pod.topo().podIp}"]`,
      '  protocol: HBONE',
      '  node: node-under-test',
      '  services: {}',
      'policies: []',
      'services: []',
      '',
    ].join('\n'),
  );
  const agentLog = { text: '' };
  const script = fileURLToPath(new URL('./fixtures/zds-agent.py', import.meta.url));
  const agent = spawn(
    'python3',
    [script, socket, `/var/run/netns/${pod.topo().pod}`, 'uid-web', 'web', 'demo', 'default'],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  procs.push(agent);
  await started(agent, /listening/, 'stand-in node agent', agentLog);
  const log = { text: '' };
  const ztunnel = spawn(zt.bin('ztunnel'), ['proxy'], {
    env: {
      PATH: process.env.PATH ?? '',
      FAKE_CA: 'true',
      XDS_ADDRESS: '',
      LOCAL_XDS_PATH: xds,
      PROXY_MODE: 'shared',
      INPOD_UDS: socket,
      IPV6_ENABLED: 'false',
      NODE_NAME: 'node-under-test',
      RUST_LOG: 'info',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  procs.push(ztunnel);
  ztunnel.stdout.on('data', (d) => (log.text += d));
  ztunnel.stderr.on('data', (d) => (log.text += d));
  const died = new Promise<never>((_, reject) =>
    ztunnel.on('exit', (code) => reject(new Error(`ztunnel exited with ${code}: ${log.text.slice(-1500)}`))),
  );
  died.catch(() => undefined);
  await Promise.race([started(agent, /add ack /, 'ZDS add', agentLog), died]).catch((err: Error) => {
    throw new Error(`${err.message}\nztunnel:\n${log.text.slice(log.text.indexOf('\tinfo\thyper_util'))}`);
  });
  expect(agentLog.text, `${agentLog.text}\nztunnel:\n${log.text}`).toContain('add ack 0a00');
  return { ztunnel, log };
}

describe('the ambient probe with the real ztunnel', () => {
  it('rules present and the real ztunnel serving the pod: captured; nothing leaves the pod', async () => {
    pod.install(AMBIENT_NAT);
    const { log } = await serve();
    const { run, podTx, remoteTcp } = await pod.validate(['--ambient', '--timeout', '5s'], AS);
    expect(run.code, `${run.stderr}\nztunnel:\n${log.text.slice(-3000)}`).toBe(0);
    expect(run.stdout).toMatch(/was captured by ztunnel/);
    expect(podTx, 'packets transmitted by the pod').toBe(0);
    expect(remoteTcp).toBe(0);
    console.info(`real ztunnel: ${run.stdout.trim()}; wall ${Math.round(run.wallMs)}ms including Node start-up`);
  });

  it('the real ztunnel serving the pod but no rules (istio#56652): ambient_not_captured', async () => {
    await serve();
    const { run, podTx } = await pod.validate(['--ambient', '--timeout', '1s'], AS);
    expectFailure(run, 'ambient_not_captured', { probeAddress: '127.0.0.2:53', probeScope: 'ambient' });
    expect(podTx).toBe(0);
  });

  it('ztunnel killed after it served the pod (A4 in miniature): its in-pod listeners are gone, refused', async () => {
    pod.install(AMBIENT_NAT);
    const { ztunnel } = await serve();
    const exited = new Promise((r) => ztunnel.on('exit', r));
    ztunnel.kill('SIGKILL');
    await exited;
    const { run, podTx } = await pod.validate(['--ambient', '--timeout', '1s'], AS);
    expectFailure(run, 'ambient_not_captured', { probeAddress: '127.0.0.2:53', probeScope: 'ambient' });
    expect(podTx).toBe(0);
  });
});
