/**
 * Part 4 with a real apiserver (`--with-apiserver`, off by default): the e2e harness (test/e2e/harness) starts
 * etcd + kube-apiserver only, a Node object is created, and the agent publishes through the real
 * KubeNodePublisher; the clock stops when both patches (Node, then nodes/status) have been acknowledged.
 * Needs the binaries from scripts/build-controlplane.sh; when they are missing the result says why.
 */
import { CoreV1Api } from '@kubernetes/client-node';
import { KubeNodePublisher } from '../src/agent/kube-publisher.ts';
import { NODE_VERIFIED_LABEL } from '../src/contract/names.ts';
import { measureAgentLatency, type AgentLatency } from './agent-latency.ts';
import { daemonClient } from '../test/e2e/daemon-client.ts';

export type ApiserverLatency =
  | { available: true; kubernetesVersion: string; startS: number; latency: AgentLatency; finalLabel?: string }
  | { available: false; why: string };

export async function measureWithApiserver(changes = 20): Promise<ApiserverLatency> {
  const harness = await import('../test/e2e/harness/index.ts');
  try {
    harness.findControlPlaneBinaries();
  } catch (err) {
    return { available: false, why: (err as Error).message };
  }
  const t0 = performance.now();
  const cp = await harness.startControlPlane({ withScheduler: false, withControllerManager: false, withKwok: false });
  try {
    const startS = (performance.now() - t0) / 1000;
    const name = 'bench-node';
    const api = cp.kc.makeApiClient(CoreV1Api);
    await api.createNode({ body: harness.kwokNodeManifest(name) });
    const latency = await measureAgentLatency(changes, new KubeNodePublisher(daemonClient(cp.kc)), name);
    // Read back by an independent client: the Node must say what the last change implies.
    const finalLabel = (await api.readNode({ name })).metadata?.labels?.[NODE_VERIFIED_LABEL];
    return { available: true, kubernetesVersion: cp.versions.kubernetesVersion, startS, latency, finalLabel };
  } finally {
    await cp.stop();
  }
}
