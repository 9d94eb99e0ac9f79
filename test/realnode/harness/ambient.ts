// Istio ambient's node components on ONE real node of the tier: the real istio-cni node agent (install-cni of Istio
// 1.27.0, ambient on) and the real ztunnel (in-pod mode, no istiod), started with the recipe the e2e test uses
// (test/meshbin/istio-ambient.ts), as host processes in the node's cgroup — so a reboot (harness/reboot.ts) kills
// them as it kills the DaemonSets' pods. One node only: istio-cni's readiness port (8000) is fixed in 1.27 and the
// tier's nodes share one network namespace; the other node has no ambient components ("not ready" for meshgate).
//
// The agent opens the pod netns paths containerd sends through the plugin under /host (its compiled-in prefix): the
// run dir (a tmpfs holding containerd's netns files) is made a shared mount and bound into the agent's chroot as a
// slave, so netns files containerd creates later appear there. The installer's own file writes go to a scratch conf
// dir: the node's real conf dir is written by the scenarios (as the mesh's installer), as on every other line.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { findIstioBinaries } from '../../e2e/harness/istio.ts';
import * as procs from '../../e2e/harness/procs.ts';
import { waitFor } from '../../e2e/harness/wait.ts';
import { findMeshBuild } from '../../meshbin/binaries.ts';
import {
  agentCommand,
  agentEnv,
  agentReady,
  agentServiceAccount,
  ISTIO_CNI_READYZ,
  ztunnelEnv,
} from '../../meshbin/istio-ambient.ts';
import { readAmbientFacts } from '../../../src/agent/ambient-facts.ts';
import type { RealCluster } from './cluster.ts';
import type { RealNode } from './node.ts';
import { plainPod } from './pods.ts';
import type { Case } from './runner.ts';

export interface AmbientNode {
  node: RealNode;
  /** The ZDS socket the agent serves and ztunnel connects to (meshgate's node agent: --ztunnel-socket). */
  zdsSocket: string;
  /** Kills istio-cni's node agent (SIGKILL), as a crashed or evicted DaemonSet pod. */
  killAgent(): Promise<void>;
  /** Kills ztunnel (SIGKILL). */
  killZtunnel(): Promise<void>;
  /** Starts whichever component is not running and waits until the agent is ready and ztunnel connected. */
  ensureUp(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Where the other nodes' meshgate agents look for istio-cni's readiness: a loopback port nothing in the tier listens
 * on (127.0.0.1:8000 is the ambient node's agent, in the same network namespace).
 */
const NO_AGENT_READYZ = 'http://127.0.0.1:7999/readyz';

/** meshgate's node agent flags for `node`: the ambient node's socket, or, elsewhere, components that are not there. */
export function ambientAgentArgs(node: RealNode, ambient: AmbientNode | undefined): string[] {
  if (ambient?.node.name === node.name) return [`--ztunnel-socket=${ambient.zdsSocket}`];
  return [`--ambient-readyz=${NO_AGENT_READYZ}`, `--ztunnel-socket=${join(node.dir, 'no-ztunnel.sock')}`];
}

export async function startAmbientNode(cluster: RealCluster, node: RealNode): Promise<AmbientNode> {
  const istio = findIstioBinaries();
  const ztunnelBin = findMeshBuild('ztunnel').bin('ztunnel');
  const dir = join(node.dir, 'ambient');
  const scratchConf = join(dir, 'installer-net.d');
  const scratchBin = join(dir, 'installer-bin');
  const sa = join(dir, 'serviceaccount');
  for (const d of [scratchConf, scratchBin]) mkdirSync(d, { recursive: true });
  // The installer waits for a primary network to chain into before it reports ready.
  writeFileSync(
    join(scratchConf, '10-bridge.conflist'),
    JSON.stringify({ cniVersion: '0.3.1', name: 'scratch', plugins: [{ type: 'bridge', bridge: 'unused0' }] }),
  );
  await agentServiceAccount((argv) => cluster.cp.kubectl(argv), sa);
  execFileSync('mount', ['--make-shared', cluster.runDir]);
  const zdsSocket = join(dir, 'ztunnel.sock');
  let agent: procs.Component | undefined;
  let ztunnel: procs.Component | undefined;
  let chroots = 0;

  const startAgent = () => {
    const root = join(dir, `root-${++chroots}`);
    mkdirSync(root, { recursive: true });
    const cmd = agentCommand({
      root,
      hostConf: scratchConf,
      hostBin: scratchBin,
      serviceAccount: sa,
      istioBinDir: istio.manifest.binDir,
      binds: [{ from: cluster.runDir, to: `/host${cluster.runDir}` }],
    });
    const env = agentEnv({
      server: cluster.cp.server,
      kubeconfig: cluster.cp.kubeconfigPath,
      nodeName: node.name,
      agentRunDir: node.cni.istioDir,
      zdsSocket,
    });
    agent = node.spawn('istio-cni-agent', cmd.bin, cmd.args, env);
  };
  const startZtunnel = () => {
    ztunnel = node.spawn('ztunnel', ztunnelBin, ['proxy'], ztunnelEnv(zdsSocket, node.name));
  };
  const facts = () =>
    readAmbientFacts({
      readyzUrl: ISTIO_CNI_READYZ,
      zdsSocket,
      procNetUnix: '/proc/net/unix',
      pollMs: 0,
    });
  const kill = async (c: procs.Component | undefined) => {
    if (!c || c.exit) return;
    try {
      process.kill(-c.pid, 'SIGKILL');
    } catch {
      // gone already
    }
    await c.exited;
  };
  const ensureUp = async () => {
    if (!agent || agent.exit) startAgent();
    await waitFor('istio-cni node agent ready (:8000/readyz)', () => agentReady(), {
      timeoutMs: 90_000,
      describe: () => (agent ? procs.tail(agent.logPath, 30) : ''),
    });
    if (!ztunnel || ztunnel.exit) startZtunnel();
    await waitFor('ztunnel connected to the ZDS socket', async () => (await facts()).ztunnel.connected, {
      timeoutMs: 60_000,
      describe: () => (ztunnel ? procs.tail(ztunnel.logPath, 30) : ''),
    });
  };
  await ensureUp();
  return {
    node,
    zdsSocket,
    killAgent: () => kill(agent),
    killZtunnel: () => kill(ztunnel),
    ensureUp,
    async stop() {
      await kill(ztunnel);
      await kill(agent);
    },
  };
}

/**
 * The ambient line's controls: a pod labelled istio.io/dataplane-mode=ambient (Istio enrols it; meshgate does not
 * see it: namespace not opted in) is redirected on rn-1, where istio-cni's agent and ztunnel run, and on rn-2, whose
 * chain has no istio-cni, it is not; plain pods are redirected nowhere.
 */
export function ambientControlCases(): Case[] {
  const enrolled = (name: string, node: string) => {
    const pod = plainPod(name, node);
    pod.metadata = { ...pod.metadata, labels: { ...pod.metadata?.labels, 'istio.io/dataplane-mode': 'ambient' } };
    return pod;
  };
  const yes = { rules: true, reachesProxy: true, running: true };
  const no = { rules: false, reachesProxy: false, running: true };
  return [
    { node: 'rn-1', pod: enrolled('ambient-rn-1', 'rn-1'), mesh: true, expect: yes },
    { node: 'rn-1', pod: plainPod('plain-rn-1', 'rn-1'), mesh: false, expect: no },
    { node: 'rn-2', pod: enrolled('ambient-rn-2', 'rn-2'), mesh: true, expect: no },
    { node: 'rn-2', pod: plainPod('plain-rn-2', 'rn-2'), mesh: false, expect: no },
  ];
}
