/**
 * The clusters the e2e suites start, once: a control plane whose kwok nodes carry a node agent's published verdict,
 * with Istio's real injector registered next to it and meshgate in this process as the suite needs. Each part is
 * handed to the suite's `stopLater` (shared.ts) as soon as it runs. Each suite still says what it tests; this file
 * only says how a cluster is brought to that point.
 */
import { CoreV1Api, type V1Pod } from '@kubernetes/client-node';
import { expect } from 'vitest';
import type { MeshName } from '../../../src/mesh/types.ts';
import { createNamespace, publishVerdict, startMeshgate, type Meshgate, type RegisterOptions } from '../meshgate.ts';
import { startControlPlane, type ControlPlane } from './controlplane.ts';
import { findIstioBinaries, startIstioInjector, type IstioInjector, type IstioInjectorOptions } from './istio.ts';
import type { NodeOptions } from './nodes.ts';
import type { StopLater } from './shared.ts';
import { waitFor } from './wait.ts';

/** The kubelet version of the suites' nodes: 1.34, where Istio 1.27 injects its proxy as a native sidecar. */
export const KUBELET = 'v1.34.2';

/** The suites' usual pair of nodes: one whose node agent verified its CNI chain, one whose agent did not. */
export const VERIFIED_AND_NOT = { 'node-verified': true, 'node-unverified': false } as const;

export interface VerdictCluster {
  cp: ControlPlane;
  core: CoreV1Api;
}

export interface MeshedCluster extends VerdictCluster {
  istio: IstioInjector;
}

/** A control plane (handed to `stopLater`) with a kwok node of kubelet KUBELET (plus `nodes[name]`) per name. */
export async function startKwokCluster(
  stopLater: StopLater,
  names: string[],
  nodes: Record<string, NodeOptions> = {},
): Promise<VerdictCluster> {
  const cp = stopLater(
    await startControlPlane({ nodes: names.map((name) => ({ name, kubeletVersion: KUBELET, ...nodes[name] })) }),
  );
  return { cp, core: cp.kc.makeApiClient(CoreV1Api) };
}

/**
 * A kwok cluster (startKwokCluster) with a node per entry of `verdicts`, each with that node agent verdict published
 * for the mesh's CNI plugin `pluginType` (default istio-cni), before any chart policy reserves that to the agents.
 */
export async function startVerdictCluster(
  stopLater: StopLater,
  verdicts: Readonly<Record<string, boolean>>,
  opts: { nodes?: Record<string, NodeOptions>; pluginType?: string } = {},
): Promise<VerdictCluster> {
  const cluster = await startKwokCluster(stopLater, Object.keys(verdicts), opts.nodes);
  for (const [node, verified] of Object.entries(verdicts))
    await publishVerdict(cluster.cp, node, verified, opts.pluginType);
  return cluster;
}

/**
 * A verdict cluster (startVerdictCluster) with Istio's real injector registered (`istio`: its options and failure
 * policy), both handed to `stopLater`.
 */
export async function startMeshedCluster(
  stopLater: StopLater,
  verdicts: Readonly<Record<string, boolean>>,
  opts: {
    nodes?: Record<string, NodeOptions>;
    istio?: IstioInjectorOptions;
    failurePolicy?: 'Fail' | 'Ignore';
  } = {},
): Promise<MeshedCluster> {
  const cluster = await startVerdictCluster(stopLater, verdicts, opts);
  const istio = stopLater(await startIstioInjector(cluster.cp, opts.istio));
  await istio.register(opts.failurePolicy ? { failurePolicy: opts.failurePolicy } : undefined);
  return { ...cluster, istio };
}

export interface GuardedCluster extends VerdictCluster {
  mg: Meshgate;
}

/**
 * A verdict cluster (startVerdictCluster) and meshgate in this process for `mesh` (default custom: it injects its own
 * templates) with the test config plus `config`, registered with `register`; all handed to `stopLater`.
 */
export async function startGuardedCluster(
  stopLater: StopLater,
  verdicts: Readonly<Record<string, boolean>>,
  opts: { config?: Record<string, unknown>; mesh?: MeshName; register?: RegisterOptions } = {},
): Promise<GuardedCluster> {
  const cluster = await startVerdictCluster(stopLater, verdicts);
  const mg = stopLater(await startMeshgate(cluster.cp, opts.config, opts.mesh, { register: opts.register ?? {} }));
  return { ...cluster, mg };
}

export interface CompanionCluster extends MeshedCluster, GuardedCluster {}

/**
 * A meshed cluster (startMeshedCluster) and meshgate for Istio in this process with the test config plus `config`,
 * registered after Istio's injector (as 'z-meshgate': the apiserver calls mutating webhooks in name order).
 */
export async function startIstioCompanion(
  stopLater: StopLater,
  verdicts: Readonly<Record<string, boolean>>,
  opts: Parameters<typeof startMeshedCluster>[2] & { config?: Record<string, unknown> } = {},
): Promise<CompanionCluster> {
  const cluster = await startMeshedCluster(stopLater, verdicts, opts);
  const mg = stopLater(await startMeshgate(cluster.cp, opts.config, 'istio', { register: { name: 'z-meshgate' } }));
  return { ...cluster, mg };
}

/**
 * Istio's own istio/gateway chart (of the Istio module) installed by real helm as istio-ingressgateway into a new,
 * unlabelled namespace istio-ingress (Service ClusterIP); the first pod of its Deployment once created (`running`:
 * once Running). --skip-schema-validation: the chart's values.schema.json ($ref beside additionalProperties at its
 * root) refuses its own defaults under helm 3.18+'s validator, as Istio's users meet it; the templates are what
 * matter here.
 */
export async function installIstioGateway(cp: ControlPlane, running: boolean): Promise<V1Pod> {
  await createNamespace(cp, 'istio-ingress');
  const installed = await cp.helm([
    ...['install', 'istio-ingressgateway', findIstioBinaries().manifest.gatewayChart, '-n', 'istio-ingress'],
    ...['--skip-schema-validation', '--set', 'service.type=ClusterIP'],
  ]);
  expect(installed.code, installed.stderr).toBe(0);
  const core = cp.kc.makeApiClient(CoreV1Api);
  const [gw] = await waitFor(`the gateway Deployment's pod ${running ? 'running' : 'created'}`, async () => {
    const pods = (await core.listNamespacedPod({ namespace: 'istio-ingress' })).items;
    return pods.length > 0 && (!running || pods[0].status?.phase === 'Running') ? pods : undefined;
  });
  return gw;
}
