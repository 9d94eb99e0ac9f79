// The mesh on the real nodes, installed as a user installs it: Istio's own injector (Istio 1.27.0's webhook, the
// istio-discovery chart with pilot.cni.enabled=false, so it injects istio-init) pointed at the stand-in proxyv2,
// and meshgate as its companion: the webhook (harness/webhook.ts), the node agent on every node reading that
// node's own CNI dirs, and the repair controller as a process (`meshgate repair-controller --config <the webhook's>`). The
// istio-cni plugin itself is already chained on rn-1 (harness/cni.ts).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CoreV1Api } from '@kubernetes/client-node';
import { repoRoot } from '../../e2e/harness/binaries.ts';
import { startIstioInjector, type IstioInjector } from '../../e2e/harness/istio.ts';
import * as procs from '../../e2e/harness/procs.ts';
import { waitFor } from '../../e2e/harness/wait.ts';
import { rawConfig } from '../../support/config.ts';
import { startNodeAgent, VERIFIED_LABEL, type RunningNodeAgent } from './agent.ts';
import type { RealCluster } from './cluster.ts';
import { chartDefaults, type ChartDefaults } from './chart.ts';
import { MESHGATE_REF, PROXYV2_HUB, PROXYV2_TAG } from './images.ts';
import type { RealNode } from './node.ts';
import type { TierMesh } from './cni.ts';
import type { LinkerdInjector } from '../../e2e/harness/linkerd.ts';
import { linkerdMeshgateConfig, linkerdOptIn, startTierLinkerdInjector } from './linkerd-mesh.ts';
import { MESH_NAMESPACE, startWebhook, type Webhook } from './webhook.ts';
import { ambientAgentArgs, type AmbientNode } from './ambient.ts';
import { type RunningNri, startNriPlugin } from './nri.ts';
import { buildConfig } from '../../../src/config/load.ts';

/** What opts a namespace in: Istio's injector selects istio-injection, meshgate's webhooks meshgate.io/inject. */
export const OPT_IN_LABELS = { 'istio-injection': 'enabled', 'meshgate.io/inject': 'enabled' };
/** Istio ambient: the namespace enrolled in ambient (Istio's default selectors) and selected by meshgate's webhooks. */
export const AMBIENT_OPT_IN = { 'istio.io/dataplane-mode': 'ambient', 'meshgate.io/inject': 'enabled' };
const NODE = () => join(repoRoot, 'node_modules/.bin/node');
const MESHGATE_BIN = () => join(repoRoot, 'bin/meshgate.js');

export interface AgentVariant {
  /** Read another conf dir than the node's runtime loads (S8: an agent misconfigured). */
  confDir?: string;
  /** Override the chart's nodeAgent.taintUnverified (S7 measures the other setting too). */
  taintUnverified?: boolean;
}

export interface MeshStack {
  /** Istio's injector (meshName istio). */
  istio?: IstioInjector;
  /** Linkerd's injector (meshName linkerd; harness/linkerd-mesh.ts). */
  linkerd?: LinkerdInjector;
  /** The ambient line: istio-cni's node agent and ztunnel on their one node (harness/ambient.ts). */
  ambient?: AmbientNode;
  webhook: Webhook;
  agents: Map<string, RunningNodeAgent>;
  /** meshgate's NRI plugin on each containerd 2.4 node (harness/nri.ts); none on 1.6, which has no NRI. */
  nri: Map<string, RunningNri>;
  /**
   * (Re)starts the node agent of `node` with the chart's flags, changed as `opts` says; a no-op when it already
   * runs that way.
   */
  restartAgent(node: RealNode, opts?: AgentVariant, force?: boolean): Promise<void>;
  chart: ChartDefaults;
  repair(): procs.Component;
  /**
   * Restarts the repair controller (same flags) with a fresh state: a new Lease name, so the new process leads at
   * once instead of waiting for the old Lease to expire, and no failures remembered from an earlier scenario.
   */
  restartRepair(): Promise<void>;
  /** Creates a namespace (opted in or not) with what istiod would have put there: the istio-ca-root-cert ConfigMap. */
  namespace(name: string, labels?: Record<string, string>): Promise<void>;
  /** Waits until the node's published label is `want` (the agent's verdict reached the apiserver). */
  waitVerdict(node: string, want: boolean, timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

/**
 * S9's node side (issue 31 §2): under `apps.privileges: node`, the default, admission judges only what the spec
 * states and the node decides who runs as the proxy.
 */
export const NODE_SIDE_NAMESPACE = 's9-node';

/**
 * S9's admission side: held to `apps.privileges: restricted` by `apps.restrictedNamespaces`, as a cluster admin holds
 * a namespace where no window is acceptable (docs/security.md).
 */
export const RESTRICTED_NAMESPACE = 's9';

/** The apps section of the tier's config: the default level (`node`), with S9's admission side held to restricted. */
export const TIER_APPS = { privileges: 'node', restrictedNamespaces: [RESTRICTED_NAMESPACE] } as const;

/**
 * The webhook's config: the istio profile, recognising the stand-in proxyv2 and running the validator from meshgate's
 * image, with the default `apps.privileges` (the unit tiers' base config relaxes it to baseline); the scenarios' app
 * containers show anyway that they cannot become the proxy, as `restricted` would ask.
 */
export function meshgateConfig(meshName: TierMesh = 'istio', ambient = false): Record<string, unknown> {
  if (meshName === 'linkerd') return linkerdMeshgateConfig();
  const repo = `${PROXYV2_HUB}/proxyv2`;
  return {
    ...(ambient ? { ambient: { enabled: true } } : {}),
    validator: { image: MESHGATE_REF },
    recognisedImages: { proxy: [repo], init: [repo], validator: [repo] },
    apps: TIER_APPS,
  };
}

/**
 * @param repairFlags more `meshgate repair-controller` flags (the capabilities S6 and S8 switch on)
 * @param ambient the ambient line's node components: meshgate runs with `ambient.enabled`, its node agents read the
 *                config (ambient checks) and watch that node's ZDS socket
 */
export async function startMeshStack(
  cluster: RealCluster,
  repairFlags: string[] = [],
  ambient?: AmbientNode,
): Promise<MeshStack> {
  const { cp } = cluster;
  const chart = chartDefaults();
  const core = cp.kc.makeApiClient(CoreV1Api);
  const { meshName } = cluster;
  const istio = meshName === 'istio' ? await startIstioInjector(cp, { hub: PROXYV2_HUB, tag: PROXYV2_TAG }) : undefined;
  await istio?.register();
  const linkerd = meshName === 'linkerd' ? await startTierLinkerdInjector(cp) : undefined;
  await core.createNamespace({ body: { metadata: { name: MESH_NAMESPACE } } });
  const config = meshgateConfig(meshName, cluster.ambient);
  const webhook = await startWebhook(cp, cluster.runDir, config, meshName);
  await webhook.register(chart.webhook);
  // The same configuration file as the webhook's, as the chart mounts one ConfigMap into all three.
  const configFile = join(cluster.runDir, 'meshgate-config.json');
  const raw = rawConfig(meshName, { meshNamespace: MESH_NAMESPACE, ...config });
  writeFileSync(configFile, JSON.stringify(raw, null, 2));
  // The ambient line's agents read it (their ambient checks), and every agent whose guard is on (the chart always
  // passes it); the others stay as they were measured.
  const ambientArgs = (node: RealNode) =>
    cluster.ambient ? [`--config=${configFile}`, ...ambientAgentArgs(node, ambient)] : [];
  const guardArgs = chart.proxyGuard.enabled && !cluster.ambient ? [`--config=${configFile}`] : [];

  const agents = new Map<string, RunningNodeAgent>();
  const variants = new Map<string, string>();
  const restartAgent = async (node: RealNode, opts: AgentVariant = {}, force = false) => {
    const running = agents.get(node.name);
    const variant = JSON.stringify(opts);
    if (!force && running && running.component.exit === null && variants.get(node.name) === variant) return;
    await running?.stop();
    const taint = opts.taintUnverified ?? chart.taintUnverified;
    const args = [
      ...chart.agentArgs.filter((a) => a !== '--taint-unverified'),
      ...(taint ? ['--taint-unverified'] : []),
      ...ambientArgs(node),
      ...guardArgs,
    ];
    const pluginType = meshName === 'linkerd' ? 'linkerd-cni' : 'istio-cni';
    agents.set(
      node.name,
      startNodeAgent(node, { kubeconfig: cp.kubeconfigPath, confDir: opts.confDir, args, pluginType }),
    );
    variants.set(node.name, variant);
  };
  for (const n of cluster.nodes) await restartAgent(n);
  const nri = new Map<string, RunningNri>();
  const parsed = buildConfig(raw, configFile);
  for (const n of cluster.nodes) if (n.runtime === 'containerd-2.4') nri.set(n.name, await startNriPlugin(n, parsed));

  const logs = join(cluster.runDir, 'logs');
  mkdirSync(logs, { recursive: true });
  let repair: procs.Component | undefined;
  let generation = 0;
  const restartRepair = async () => {
    if (repair) await procs.stopComponent(repair);
    repair = procs.startComponent(
      'meshgate-repair-controller',
      NODE(),
      [
        MESHGATE_BIN(),
        'repair-controller',
        `--config=${configFile}`,
        `--kubeconfig=${cp.kubeconfigPath}`,
        `--lease-name=meshgate-repair-controller-${++generation}`,
        `--mark-key-dir=${webhook.markKeyDir}`,
        ...chart.repairArgs,
        ...repairFlags,
      ],
      { logPath: join(logs, 'meshgate-repair-controller.log'), pgidFile: join(logs, 'pgids') },
    );
  };
  await restartRepair();

  const waitVerdict = async (node: string, want: boolean, timeoutMs = 30_000) => {
    await waitFor(
      `${VERIFIED_LABEL}=${want} on ${node}`,
      async () => (await core.readNode({ name: node })).metadata?.labels?.[VERIFIED_LABEL] === String(want),
      { timeoutMs, describe: () => agents.get(node)?.logs(20) ?? '' },
    );
  };
  for (const n of cluster.nodes) await waitVerdict(n.name, n.mesh);

  return {
    istio,
    linkerd,
    ambient,
    webhook,
    agents,
    nri,
    chart,
    restartAgent,
    repair: () => repair!,
    restartRepair,
    async namespace(name, labels = {}) {
      await core.createNamespace({ body: { metadata: { name, labels, annotations: linkerdOptIn(meshName, labels) } } });
      await core.createNamespacedConfigMap({
        namespace: name,
        body: { metadata: { name: 'istio-ca-root-cert' }, data: { 'root-cert.pem': cp.ca.certPem } },
      });
      await waitFor(
        `serviceaccount ${name}/default`,
        async () => {
          await core.readNamespacedServiceAccount({ name: 'default', namespace: name });
          return true;
        },
        { timeoutMs: 30_000 },
      );
    },
    waitVerdict,
    async stop() {
      if (repair) await procs.stopComponent(repair);
      await Promise.all([...agents.values(), ...nri.values()].map((a) => a.stop()));
      await webhook.down();
      await istio?.stop();
      await linkerd?.stop();
    },
  };
}
