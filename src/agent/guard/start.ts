/**
 * `meshgate node-agent --proxy-guard`: the guard's options from the agent's flags and configuration, and
 * its start beside the verdict loop (src/cli/node-agent.ts). The chart turns it on with `nodeAgent.proxyGuard`
 * (hostPID, CAP_KILL, the pod rights of guard/kube.ts).
 */
import { compileConfig } from '../../config/compile.ts';
import type { MeshgateConfig } from '../../config/types.ts';
import { connectCluster } from '../../kube/client.ts';
import { errorFields } from '../../log/fields.ts';
import { UsageError } from '../../util/args.ts';
import type { DeepReadonly } from '../../util/readonly.ts';
import type { AgentLog } from '../agent.ts';
import type { TextRegistry } from '../exposition.ts';
import { ProxyGuard } from './guard.ts';
import { kubeGuardActions, WatchedPods } from './kube.ts';
import { guardMetrics } from './metrics.ts';
import type { GuardView } from './pods.ts';
import { scanProcesses } from './scan.ts';

export interface GuardOptions {
  intervalMs: number;
  /** The host's procfs (the agent runs with hostPID). */
  procRoot: string;
  view: GuardView;
}

/** The guard's view of the mesh: its containers' names and the identity its redirect exempts. */
export function guardView(config: DeepReadonly<MeshgateConfig>): GuardView {
  const cfg = compileConfig(config);
  // The configured names (mesh custom names its own containers) and the profile's (the mesh's injector's).
  const names = [cfg.names, cfg.profile.names].flatMap((n) => [n.proxy, n.init, n.validator]);
  return {
    meshNames: new Set(names),
    proxyName: cfg.names.proxy,
    proxyUid: cfg.identity.proxyUid,
    ...(cfg.identity.proxyGid === undefined ? {} : { proxyGid: cfg.identity.proxyGid }),
    exemptGids: (annotations) => cfg.profile.annotationSettings(annotations).exemptGids,
  };
}

/** Pod annotations naming a further exempt GID, per mesh (the linkerd profile's annotationSettings reads this one). */
const GID_ANNOTATIONS: Readonly<Record<string, readonly string[]>> = { linkerd: ['config.linkerd.io/proxy-gid'] };

/**
 * The flags of meshgate's NRI plugin (nri/main.go) for this configuration: the same identity and container names as
 * the guard's view, so the runtime's refusal and the agent's guard judge alike. The chart's nriPlugin DaemonSet
 * renders these (test/chart/nri-plugin.test.ts holds it to this function); the real-node tier passes them.
 */
export function nriPluginArgs(config: DeepReadonly<MeshgateConfig>): string[] {
  const v = guardView(config);
  return [
    `--proxy-uid=${v.proxyUid}`,
    ...(v.proxyGid === undefined ? [] : [`--proxy-gid=${v.proxyGid}`]),
    ...[...v.meshNames].map((n) => `--mesh-container=${n}`),
    ...(GID_ANNOTATIONS[config.mesh] ?? []).map((a) => `--exempt-gid-annotation=${a}`),
  ];
}

export function guardOptions(
  on: boolean,
  intervalMs: number,
  procRoot: string,
  config: DeepReadonly<MeshgateConfig> | undefined,
): GuardOptions | undefined {
  if (!on) return undefined;
  if (!config) throw new UsageError('--proxy-guard needs --config or --mesh: the mesh names its containers and proxy');
  if (intervalMs < 100) throw new UsageError('--proxy-guard-interval must be at least 100ms (each pass reads /proc)');
  if (!procRoot.startsWith('/')) throw new UsageError(`--proc-root must be an absolute path, got "${procRoot}"`);
  return { intervalMs, procRoot, view: guardView(config) };
}

/** Starts the pod watch, then the passes; resolves once the first list arrived. */
export async function startGuard(
  o: GuardOptions,
  nodeName: string,
  cluster: { kubeconfig?: string; env: Readonly<Record<string, string | undefined>> },
  registry: TextRegistry,
  log: AgentLog,
): Promise<{ stop(): Promise<void> }> {
  const client = await connectCluster(cluster);
  if (!client) throw new UsageError('the proxy guard needs cluster credentials (--kubeconfig or in-cluster)');
  const pods = new WatchedPods(client, nodeName, o.view, (err) =>
    log.warn({ err: errorFields(err) }, 'watch of this node’s pods failed; retrying'),
  );
  await pods.start();
  const guard = new ProxyGuard(o.intervalMs, {
    pods,
    actions: kubeGuardActions(client),
    log,
    scan: (watched) => scanProcesses(o.procRoot, watched),
    observer: guardMetrics(registry),
  });
  guard.start();
  log.info({ intervalMs: o.intervalMs, procRoot: o.procRoot }, 'proxy-identity guard started');
  return {
    async stop() {
      await guard.stop();
      pods.stop();
      client.close();
    },
  };
}
