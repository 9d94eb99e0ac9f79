/**
 * meshgate as the chart deploys it, in the e2e suites: the chart installed by real helm, and meshgate's webhook and
 * repair controller in this process configured from the chart's own ConfigMap (clusters.ts starts the cluster).
 */
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import pino from 'pino';
import { parse as parseYaml } from 'yaml';
import { expect } from 'vitest';
import { compileConfig } from '../../../src/config/compile.ts';
import { buildConfig } from '../../../src/config/load.ts';
import type { MeshgateConfig } from '../../../src/config/types.ts';
import { startRepair, type RepairRunOptions, type RunningRepair } from '../../../src/repair/run.ts';
import type { QuarantineSettings } from '../../../src/repair/quarantine/run.ts';
import { startServer, type RunningServer, type ServeOptions } from '../../../src/server/start.ts';
import type { DeepReadonly } from '../../../src/util/readonly.ts';
import { chartDir } from '../../chart/helm.ts';
import { daemonClient } from '../daemon-client.ts';
import { pointChartWebhooksAt } from '../meshgate.ts';
import type { ControlPlane } from './controlplane.ts';

type Config = DeepReadonly<MeshgateConfig>;

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

/** The log of what a suite runs in this process: MESHGATE_E2E_LOG's level, or `fallback`. */
export const logger = (fallback = 'warn') => pino({ level: process.env.MESHGATE_E2E_LOG ?? fallback });

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

/**
 * meshgate's repair controller in this process, configured by `config`, its mark keys in `markKeyDir`, acting as
 * `kc` (default the admin; the chart's service account, impersonated, where its RBAC is under test): up to 10
 * deletes a minute, no dry run; `extra` adds to its options (quarantine, unmeshed, lease, listen …) or overrides them.
 */
export function startConfigRepair(
  cp: ControlPlane,
  config: Config,
  markKeyDir: string,
  extra: Partial<RepairRunOptions> & { kc?: KubeConfig } = {},
): Promise<RunningRepair> {
  const { kc = cp.kc, ...options } = extra;
  return startRepair({
    kube: daemonClient(kc),
    config,
    maxDeletesPerMinute: 10,
    dryRun: false,
    markKeyDir,
    logger: logger(),
    ...options,
  });
}

/**
 * Node quarantine as the e2e suites run it (src/repair/quarantine): 3 validation failures within 10 minutes withdraw
 * a node's verdict, held off by `holdOff`, without a taint; rechecked every 200 ms; probe pods in `namespace`.
 */
export function testQuarantine(namespace: string, holdOff: QuarantineSettings['holdOff']): QuarantineSettings {
  return {
    threshold: 3,
    windowMs: 10 * 60_000,
    holdOff,
    taint: false,
    intervalMs: 200,
    probe: { namespace, timeoutMs: 30_000 },
  };
}

/**
 * meshgate's webhook server in this process configured from the chart's ConfigMap in `namespace` (serveConfig, with
 * `extra`), and the chart's own webhook configurations pointed at it; the config too, for a repair controller.
 */
export async function serveChart(
  cp: ControlPlane,
  namespace: string,
  extra: Partial<ServeOptions> = {},
): Promise<{ server: RunningServer; config: Config }> {
  const config = await chartConfig(cp, namespace);
  const server = await serveConfig(cp, config, extra);
  await pointChartWebhooksAt(cp, server.url, server.ca!);
  return { server, config };
}
