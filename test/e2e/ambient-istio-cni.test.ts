/**
 * Istio ambient end to end without kubelet and containerd: the REAL istio-cni node agent (install-cni of Istio
 * 1.27.0, --ambient-enabled) against a real kube-apiserver, the REAL ztunnel connected to it, and the REAL istio-cni
 * plugin run for a pod's CNI ADD the way a runtime runs it (env + stdin with the prevResult). The agent installs
 * Istio's in-pod rules in the pod's netns and hands it to ztunnel; meshgate's ambient validator then runs in that
 * netns. The agent's compiled-in /host paths are given in a chroot of bind mounts inside a private mount namespace
 * (docs/mesh-binaries.md). Everything runs in this test run's isolated network namespace.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CoreV1Api } from '@kubernetes/client-node';
import { findMeshBuild } from '../meshbin/binaries.ts';
import {
  agentCommand,
  agentEnv,
  agentReady,
  agentServiceAccount,
  ambientPluginConf,
  ISTIO_CNI_READYZ,
  ztunnelEnv,
} from '../meshbin/istio-ambient.ts';
import { expectFailure, usePod } from '../netns/pod-fixture.ts';
import { NOBODY } from '../netns/run-validator.ts';
import { startControlPlane, type ControlPlane } from './harness/index.ts';
import { findIstioBinaries } from './harness/istio.ts';
import { readAmbientFacts } from '../../src/agent/ambient-facts.ts';

const istio = findIstioBinaries();
const zt = findMeshBuild('ztunnel');
const pod = usePod();
const tmp = mkdtempSync(join(tmpdir(), 'meshgate-istio-cni-'));
const RUN = join(tmp, 'agent-run');
const ZDS = join(tmp, 'ztunnel.sock');
let cp: ControlPlane;
const procs: ChildProcess[] = [];
const logs: Record<string, string> = { agent: '', ztunnel: '' };
let podUid = '';

function track(name: string, child: ChildProcess): ChildProcess {
  procs.push(child);
  child.stdout?.on('data', (d) => (logs[name] += d));
  child.stderr?.on('data', (d) => (logs[name] += d));
  return child;
}

async function until(what: string, ok: () => boolean | Promise<boolean>, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await ok()) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(
    `${what} within ${ms} ms\nagent:\n${logs.agent.slice(-4000)}\nztunnel:\n${logs.ztunnel.slice(-2000)}`,
  );
}

beforeAll(async () => {
  cp = await startControlPlane({ nodes: [{ name: 'node-a', kubeletVersion: 'v1.34.2' }] });
  const core = cp.kc.makeApiClient(CoreV1Api);
  const sa = join(tmp, 'sa');
  await agentServiceAccount((argv) => cp.kubectl(argv), sa);
  await core.createNamespace({
    body: { metadata: { name: 'demo', labels: { 'istio.io/dataplane-mode': 'ambient' } } },
  });
  const created = await core.createNamespacedPod({
    namespace: 'demo',
    body: {
      metadata: { name: 'web' },
      spec: { nodeName: 'node-a', containers: [{ name: 'app', image: 'registry.example/app:1' }] },
    },
  });
  podUid = created.metadata?.uid ?? '';

  const hostConf = join(tmp, 'net.d');
  const hostBin = join(tmp, 'bin');
  for (const d of [hostConf, hostBin, RUN, join(tmp, 'root')]) mkdirSync(d, { recursive: true });
  writeFileSync(
    join(hostConf, '10-bridge.conflist'),
    JSON.stringify({ cniVersion: '1.0.0', name: 'k8s-pod-network', plugins: [{ type: 'bridge', bridge: 'cni0' }] }),
  );
  // The recipe shared with the real-node tier (test/meshbin/istio-ambient.ts); the pod netns are `ip netns` ones.
  const agent = agentCommand({
    root: join(tmp, 'root'),
    hostConf,
    hostBin,
    serviceAccount: sa,
    istioBinDir: istio.manifest.binDir,
    binds: [
      { from: '/run/netns', to: '/run/netns' },
      { from: '/run/netns', to: '/host/var/run/netns' },
    ],
  });
  track(
    'agent',
    spawn(agent.bin, agent.args, {
      env: agentEnv({
        server: cp.server,
        kubeconfig: cp.kubeconfigPath,
        nodeName: 'node-a',
        agentRunDir: RUN,
        zdsSocket: ZDS,
      }),
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  await until('istio-cni node agent ready (:8000/readyz)', () => agentReady(), 60_000);
}, 300_000);

afterAll(async () => {
  for (const p of procs) p.kill('SIGKILL');
  await cp?.stop();
  rmSync(tmp, { recursive: true, force: true });
});

/** istio-cni's plugin config as its installer renders it into the conflist, for the pod netns `netns`. */
function pluginConf(netns: string, selectors: boolean) {
  return {
    cniVersion: '1.0.0',
    name: 'k8s-pod-network',
    ...ambientPluginConf(RUN, selectors),
    prevResult: {
      cniVersion: '1.0.0',
      interfaces: [{ name: 'eth0', sandbox: netns }],
      ips: [{ address: `${pod.topo().podIp}/30`, interface: 0 }],
    },
  };
}

/** The real istio-cni plugin's CNI ADD for pod demo/web, as a runtime runs it. */
function cniAdd(selectors = true) {
  const netns = `/var/run/netns/${pod.topo().pod}`;
  return spawnSync(istio.bin('istio-cni'), [], {
    input: JSON.stringify(pluginConf(netns, selectors)),
    encoding: 'utf8',
    env: {
      CNI_COMMAND: 'ADD',
      CNI_CONTAINERID: 'sandbox-1',
      CNI_NETNS: netns,
      CNI_IFNAME: 'eth0',
      CNI_PATH: istio.manifest.binDir,
      CNI_ARGS: `IgnoreUnknown=1;K8S_POD_NAMESPACE=demo;K8S_POD_NAME=web;K8S_POD_INFRA_CONTAINER_ID=sandbox-1;K8S_POD_UID=${podUid}`,
    },
    timeout: 30_000,
  });
}

const FACTS = () => ({
  readyzUrl: ISTIO_CNI_READYZ,
  zdsSocket: ZDS,
  procNetUnix: '/proc/net/unix',
  pollMs: 1000,
});
const AS = { uid: NOBODY, gid: NOBODY };
let ztunnel: ChildProcess | undefined;

describe('the real istio-cni node agent, plugin and ztunnel', () => {
  it("meshgate's node agent facts: istio-cni ready, no ztunnel yet; then the real ztunnel connects", async () => {
    // Bound to istio-cni's node agent's own process (issue 33 §8): it holds the ZDS listener, whose file from its
    // root (a chroot in its own mount namespace here) is this one, and the readiness port.
    const facts = await readAmbientFacts(FACTS());
    console.info(`meshgate's node agent facts: ${JSON.stringify(facts)}`);
    expect(facts.agent.ready).toBe(true);
    expect(facts.agent.detail).toMatch(/^GET http:\/\/127\.0\.0\.1:8000\/readyz: 200 from process \d+, which serves /);
    expect(facts.ztunnel.connected).toBe(false);
    expect(facts.ztunnel.detail).toMatch(
      new RegExp(`^0 connection\\(s\\) on ${ZDS} accepted by its listener, process \\d+$`),
    );
    ztunnel = track(
      'ztunnel',
      spawn(zt.bin('ztunnel'), ['proxy'], {
        env: { PATH: process.env.PATH ?? '', ...ztunnelEnv(ZDS, 'node-a') },
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
    await until(
      'ztunnel connected (seen in /proc/net/unix)',
      async () => (await readAmbientFacts(FACTS())).ztunnel.connected,
    );
  });

  it('a plugin that does not see the pod as ambient (its selectors missing): ADD succeeds unredirected, the validator refuses', async () => {
    const add = cniAdd(false);
    expect(add.status, add.stderr).toBe(0);
    expect(add.stderr).toContain('excluded because it does not have istio-proxy container');
    const { run, podTx } = await pod.validate(['--ambient', '--timeout', '1s'], AS);
    expectFailure(run, 'ambient_not_captured', { probeAddress: '127.0.0.2:53', probeScope: 'ambient' });
    expect(podTx).toBe(0);
  });

  it('CNI ADD through the real plugin: Istio rules in the pod, ztunnel serving it, the validator passes; ztunnel killed: refused', async () => {
    const add = cniAdd();
    expect(add.status, `${add.stderr}\nagent:\n${logs.agent.slice(-3000)}`).toBe(0);
    const rules = spawnSync('ip', ['netns', 'exec', pod.topo().pod, 'iptables-save', '-t', 'nat'], {
      encoding: 'utf8',
    });
    expect(rules.stdout).toContain('-j REDIRECT --to-ports 15053');
    const core = cp.kc.makeApiClient(CoreV1Api);
    await until('istio-cni annotated the pod enrolled', async () => {
      const p = await core.readNamespacedPod({ namespace: 'demo', name: 'web' });
      return p.metadata?.annotations?.['ambient.istio.io/redirection'] === 'enabled';
    });
    const ok = await pod.validate(['--ambient', '--timeout', '5s'], AS);
    expect(ok.run.code, `${ok.run.stderr}\nztunnel:\n${logs.ztunnel.slice(-2000)}`).toBe(0);
    expect(ok.podTx).toBe(0);
    console.info(`real istio-cni + ztunnel: ${ok.run.stdout.trim()}; wall ${Math.round(ok.run.wallMs)}ms`);

    ztunnel?.kill('SIGKILL');
    await until(
      'no ztunnel on the ZDS socket',
      async () => !(await readAmbientFacts(FACTS())).ztunnel.connected,
      10_000,
    );
    const down = await pod.validate(['--ambient', '--timeout', '1s'], AS);
    expectFailure(down.run, 'ambient_not_captured', { probeAddress: '127.0.0.2:53', probeScope: 'ambient' });
    expect(down.podTx).toBe(0);
  });

  it("istio-cni's node agent down: not ready for meshgate's node agent, and the plugin's ADD fails (closed)", async () => {
    procs[0].kill('SIGKILL');
    await until('istio-cni not ready', async () => !(await readAmbientFacts(FACTS())).agent.ready, 10_000);
    const add = cniAdd();
    expect(add.status).not.toBe(0);
    console.info(`ADD with the agent down: exit ${add.status}: ${add.stdout.slice(0, 300)}`);
  });
});
