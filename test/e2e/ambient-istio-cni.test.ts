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
const SELECTORS = `- podSelector:
    matchLabels: {istio.io/dataplane-mode: ambient}
- podSelector:
    matchExpressions:
    - {key: istio.io/dataplane-mode, operator: NotIn, values: [none]}
  namespaceSelector:
    matchLabels: {istio.io/dataplane-mode: ambient}
`;
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

/** The chroot: the host's /usr, /etc, /dev, /proc, /sys, /tmp, /var, plus the agent's /host paths. */
function agentScript(root: string, hostConf: string, hostBin: string, sa: string): string {
  return [
    'set -e',
    `R=${root}`,
    'for d in usr etc dev proc sys tmp var; do mkdir -p $R/$d; mount --rbind /$d $R/$d; done',
    'for l in bin sbin lib lib64; do ln -s usr/$l $R/$l; done',
    'mkdir -p $R/run/netns $R/run/secrets/kubernetes.io/serviceaccount $R/host/proc $R/host/var/run/netns',
    'mkdir -p $R/host/etc/cni/net.d $R/host/opt/cni/bin $R/opt/cni/bin',
    'mount --rbind /run/netns $R/run/netns',
    'mount --rbind /run/netns $R/host/var/run/netns',
    'mount --rbind /proc $R/host/proc',
    `mount --bind ${sa} $R/run/secrets/kubernetes.io/serviceaccount`,
    `mount --bind ${hostConf} $R/host/etc/cni/net.d`,
    `mount --bind ${hostBin} $R/host/opt/cni/bin`,
    `mount --bind ${istio.manifest.binDir} $R/opt/cni/bin`,
    'exec chroot $R /opt/cni/bin/install-cni',
  ].join('\n');
}

beforeAll(async () => {
  cp = await startControlPlane({ nodes: [{ name: 'node-a', kubeletVersion: 'v1.34.2' }] });
  const core = cp.kc.makeApiClient(CoreV1Api);
  await cp.kubectl(['create', 'namespace', 'istio-system']);
  await cp.kubectl(['create', 'serviceaccount', 'istio-cni', '-n', 'istio-system']);
  await cp.kubectl([
    'create',
    'clusterrolebinding',
    'istio-cni',
    '--clusterrole=cluster-admin',
    '--serviceaccount=istio-system:istio-cni',
  ]);
  const token = (await cp.kubectl(['create', 'token', 'istio-cni', '-n', 'istio-system'])).stdout.trim();
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

  const sa = join(tmp, 'sa');
  const hostConf = join(tmp, 'net.d');
  const hostBin = join(tmp, 'bin');
  for (const d of [sa, hostConf, hostBin, RUN, join(tmp, 'root')]) mkdirSync(d, { recursive: true });
  writeFileSync(join(sa, 'token'), token);
  writeFileSync(join(sa, 'namespace'), 'istio-system');
  writeFileSync(
    join(hostConf, '10-bridge.conflist'),
    JSON.stringify({ cniVersion: '1.0.0', name: 'k8s-pod-network', plugins: [{ type: 'bridge', bridge: 'cni0' }] }),
  );
  const url = new URL(cp.server);
  track(
    'agent',
    spawn(
      'unshare',
      [
        '--mount',
        '--propagation',
        'private',
        '--pid',
        '--fork',
        // The agent (pid 1 of its own pid namespace, where /proc/1/ns/net is its own) dies with unshare.
        '--kill-child',
        '--mount-proc',
        'sh',
        '-c',
        agentScript(join(tmp, 'root'), hostConf, hostBin, sa),
      ],
      {
        env: {
          PATH: '/usr/sbin:/usr/bin:/sbin:/bin',
          KUBECONFIG: cp.kubeconfigPath,
          KUBERNETES_SERVICE_HOST: url.hostname,
          KUBERNETES_SERVICE_PORT: url.port,
          SKIP_TLS_VERIFY: 'true',
          NODE_NAME: 'node-a',
          POD_NAME: 'istio-cni-node-test',
          POD_NAMESPACE: 'istio-system',
          AMBIENT_ENABLED: 'true',
          AMBIENT_ENABLEMENT_SELECTOR: SELECTORS,
          AMBIENT_DNS_CAPTURE: 'true',
          CNI_AGENT_RUN_DIR: RUN,
          ZTUNNEL_UDS_ADDRESS: ZDS,
          MOUNTED_CNI_NET_DIR: '/host/etc/cni/net.d',
          CHAINED_CNI_PLUGIN: 'true',
          REPAIR_ENABLED: 'false',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    ),
  );
  await until(
    'istio-cni node agent ready (:8000/readyz)',
    async () => {
      try {
        return (await fetch('http://127.0.0.1:8000/readyz')).status === 200;
      } catch {
        return false;
      }
    },
    60_000,
  );
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
    type: 'istio-cni',
    ambient_enabled: true,
    cni_agent_run_dir: RUN,
    plugin_log_level: 'debug',
    exclude_namespaces: ['kube-system'],
    pod_namespace: 'istio-system',
    enablement_selectors: selectors
      ? [
          { podSelector: { matchLabels: { 'istio.io/dataplane-mode': 'ambient' } } },
          {
            podSelector: {
              matchExpressions: [{ key: 'istio.io/dataplane-mode', operator: 'NotIn', values: ['none'] }],
            },
            namespaceSelector: { matchLabels: { 'istio.io/dataplane-mode': 'ambient' } },
          },
        ]
      : [],
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
  readyzUrl: 'http://127.0.0.1:8000/readyz',
  zdsSocket: ZDS,
  procNetUnix: '/proc/net/unix',
  pollMs: 1000,
});
const AS = { uid: NOBODY, gid: NOBODY };
let ztunnel: ChildProcess | undefined;

describe('the real istio-cni node agent, plugin and ztunnel', () => {
  it("meshgate's node agent facts: istio-cni ready, no ztunnel yet; then the real ztunnel connects", async () => {
    expect(await readAmbientFacts(FACTS())).toEqual({
      agent: { ready: true, detail: 'GET http://127.0.0.1:8000/readyz: 200' },
      ztunnel: { connected: false, detail: `0 connection(s) on ${ZDS}` },
    });
    ztunnel = track(
      'ztunnel',
      spawn(zt.bin('ztunnel'), ['proxy'], {
        env: {
          PATH: process.env.PATH ?? '',
          FAKE_CA: 'true',
          XDS_ADDRESS: '',
          LOCAL_XDS: 'workloads: []\npolicies: []\nservices: []\n',
          PROXY_MODE: 'shared',
          INPOD_UDS: ZDS,
          IPV6_ENABLED: 'false',
          NODE_NAME: 'node-a',
        },
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
