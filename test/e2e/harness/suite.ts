/**
 * The set-up the e2e suites share, once: a control plane whose kwok nodes carry a node agent's published verdict,
 * Istio's real injector registered next to it, the chart installed by real helm, and meshgate's webhook and repair
 * controller in this process configured from the chart's own ConfigMap. Each suite still says what it tests; this
 * file only says how a cluster is brought to that point.
 */
import { CoreV1Api } from '@kubernetes/client-node';
import pino from 'pino';
import { parse as parseYaml } from 'yaml';
import { expect } from 'vitest';
import { compileConfig } from '../../../src/config/compile.ts';
import { buildConfig } from '../../../src/config/load.ts';
import type { MeshgateConfig } from '../../../src/config/types.ts';
import { startRepair, type RunningRepair } from '../../../src/repair/run.ts';
import { startServer, type RunningServer, type ServeOptions } from '../../../src/server/start.ts';
import type { DeepReadonly } from '../../../src/util/readonly.ts';
import { chartDir } from '../../chart/helm.ts';
import { daemonClient } from '../daemon-client.ts';
import { publishVerdict } from '../meshgate.ts';
import { startControlPlane, type ControlPlane } from './controlplane.ts';
import { startIstioInjector, type IstioInjector, type IstioInjectorOptions } from './istio.ts';
import type { NodeOptions } from './nodes.ts';

type Config = DeepReadonly<MeshgateConfig>;

/** The kubelet version of the suites' nodes: 1.34, where Istio 1.27 injects its proxy as a native sidecar. */
export const KUBELET = 'v1.34.2';

export interface MeshedCluster {
  cp: ControlPlane;
  core: CoreV1Api;
  istio: IstioInjector;
}

/**
 * A control plane with one kwok node per entry of `verdicts` (kubelet KUBELET, plus `nodes[name]`), each with that
 * node agent verdict published (before any chart policy reserves that to the agents), and Istio's real injector
 * registered (`istio`: its options and failure policy).
 */
export async function startMeshedCluster(
  verdicts: Record<string, boolean>,
  opts: {
    nodes?: Record<string, NodeOptions>;
    istio?: IstioInjectorOptions;
    failurePolicy?: 'Fail' | 'Ignore';
  } = {},
): Promise<MeshedCluster> {
  const cp = await startControlPlane({
    nodes: Object.keys(verdicts).map((name) => ({ name, kubeletVersion: KUBELET, ...opts.nodes?.[name] })),
  });
  for (const [node, verified] of Object.entries(verdicts)) await publishVerdict(cp, node, verified);
  const istio = await startIstioInjector(cp, opts.istio);
  await istio.register(opts.failurePolicy ? { failurePolicy: opts.failurePolicy } : undefined);
  return { cp, core: cp.kc.makeApiClient(CoreV1Api), istio };
}

/**
 * The chart's release `meshgate` installed by real helm in `namespace` (created first, as an admin would), for Istio
 * (`--set mesh=istio`) and `args` (more `--set …`).
 */
export async function installChart(cp: ControlPlane, namespace: string, ...args: string[]): Promise<void> {
  await cp.kc.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: namespace } } });
  const installed = await cp.helm([
    'install',
    'meshgate',
    chartDir,
    '--namespace',
    namespace,
    '--set',
    'mesh=istio',
    ...args,
  ]);
  expect(installed.code, installed.stderr).toBe(0);
}

/** The configuration the chart's ConfigMap in `namespace` gives meshgate, read and validated as its daemons do. */
export async function chartConfig(cp: ControlPlane, namespace: string): Promise<Config> {
  const cm = await cp.kc.makeApiClient(CoreV1Api).readNamespacedConfigMap({ name: 'meshgate', namespace });
  return buildConfig(parseYaml(cm.data!['config.yaml']), `ConfigMap ${namespace}/meshgate`);
}

const logger = () => pino({ level: process.env.MESHGATE_E2E_LOG ?? 'warn' });

/**
 * meshgate's webhook server in this process (port 0 on 127.0.0.1, self-signed for 127.0.0.1, the admin's client),
 * configured by `config` (the chart's, from chartConfig), synced; `extra` adds to or overrides its options. The
 * caller points the webhook configurations at it.
 */
export async function serveConfig(
  cp: ControlPlane,
  config: Config,
  extra: Partial<ServeOptions> = {},
): Promise<RunningServer> {
  const server = await startServer({
    config: compileConfig(config),
    port: 0,
    host: '127.0.0.1',
    tlsSans: ['127.0.0.1'],
    kube: daemonClient(cp.kc),
    drainSeconds: 0,
    logger: logger(),
    ...extra,
  });
  await server.synced;
  return server;
}

/** meshgate's repair controller in this process, as the admin, configured by `config`, its mark keys in `markKeyDir`. */
export function startConfigRepair(cp: ControlPlane, config: Config, markKeyDir: string): Promise<RunningRepair> {
  return startRepair({
    kube: daemonClient(cp.kc),
    config,
    maxDeletesPerMinute: 10,
    dryRun: false,
    markKeyDir,
    logger: logger(),
  });
}
