/**
 * `meshgate node-agent`: runs on every node (DaemonSet, hostPath mounts of the CNI conf and bin dirs), verifies
 * the CNI chain the runtime will load and says so on its own Node (src/agent/). Flags are parsed and validated
 * here, once, into a frozen config; defaults are pinned by test/agent/node-agent-cli.test.ts.
 */
import { NodeAgent, type AgentConfig } from '../agent/agent.ts';
import {
  durationFlag,
  multusDirs,
  multusPaths,
  parseCount,
  parseLibcni,
  parseRuntime,
  resolvePluginType,
  splitDirs,
} from '../agent/flags.ts';
import { configFromFlags } from '../config/load.ts';
import { DEFAULT_AMBIENT_POLL_MS, DEFAULT_AMBIENT_READYZ, DEFAULT_ZDS_SOCKET } from '../agent/ambient-facts.ts';
import { KubeNodePublisher, type LeaseOptions } from '../agent/kube-publisher.ts';
import { createAgentMetrics } from '../agent/metrics.ts';
import { serveAgent, type AgentServer } from '../agent/http.ts';
import { jsonLineLog } from '../agent/log.ts';
import { liveness, readiness } from '../agent/health.ts';
import { parsePort } from '../util/values.ts';
import { parseFlags, UsageError } from '../util/args.ts';
import { type GuardOptions, guardOptions, startGuard } from '../agent/guard/start.ts';
import type { CliIO } from './io.ts';
import { COMMANDS } from './commands.ts';

const USAGE = `usage: meshgate node-agent (--config FILE | --mesh NAME | --plugin-type TYPE) [flags]

Verifies the CNI chain the container runtime will load on this node and publishes the verdict on the Node
(label meshgate.io/cni-verified, condition MeshCNIVerified, annotation meshgate.io/cni-evidence).

flags:
  --config FILE             meshgate configuration: the plugin type is its cni.pluginType, and for linkerd-cni the
                            plugin's own ports and proxy UID must match the config's proxy (else plugin_config_mismatch)
  --mesh NAME               instead of --config: a mesh profile's defaults (istio | linkerd | custom)
  --plugin-type TYPE        mesh CNI plugin type that must be chained, e.g. istio-cni, linkerd-cni; with --config or
                            --mesh it must equal the config's cni.pluginType (a mismatch is a startup error)
  --node-name NAME          this node (default: $NODE_NAME, set it with the downward API; never guessed)
  --cni-conf-dir DIR        CNI configuration dir (default /etc/cni/net.d)
  --cni-bin-dir DIR         CNI plugin dir, repeatable or comma-separated (default /opt/cni/bin)
  --runtime NAME            containerd | crio: whose file selection to emulate (default containerd); a Node that
                            reports another runtime is not verified (runtime_mismatch)
  --libcni LINE             1.1 | 1.2 | 1.3: which libcni release line reads the files, or auto: the line of the
                            runtime version the Node reports, and every line must agree when that is not a known
                            release (default auto)
  --max-conf-num N          containerd's max_conf_num (default 1; 0 = all files)
  --multus-dir DIR          a dir Multus reads (its confDir /etc/cni/multus/net.d, the dir of its clusterNetwork
                            file), read and watched besides the conf dir; repeatable or comma-separated (default none)
  --multus-path FROM=TO     Multus' configuration says FROM where the host has TO (the thick plugin's daemon runs in a
                            container); repeatable (default /host/etc/cni/net.d=<--cni-conf-dir>). With --config, its
                            cni.multusNetwork (the OpenShift model) is verified in Multus' confDir
  --resync DURATION         periodic re-verification and Node re-read (default 5m)
  --debounce DURATION       coalescing window after a file event (default 100ms)
  --taint-unverified        keep the taint meshgate.io/cni-unverified:NoSchedule on the Node while unverified
  --node-lease-namespace NS renew a Lease meshgate-node-<node> in NS once per resync as the heartbeat of an unchanged
                            verdict, instead of writing the Node (the chart passes its namespace; default: the Node)
  --ambient-readyz URL      with config ambient.enabled (Istio ambient): istio-cni's node agent readiness, a loopback
                            http URL (default ${DEFAULT_AMBIENT_READYZ})
  --ztunnel-socket PATH     with ambient: the ZDS socket ztunnel connects to (default ${DEFAULT_ZDS_SOCKET})
  --proc-net-unix PATH      with ambient: where the host's unix sockets are listed (default /proc/net/unix)
  --ambient-poll DURATION   with ambient: how often the two are checked (default ${DEFAULT_AMBIENT_POLL_MS / 1000}s)
  --proxy-guard             also stop any container of a meshgate-admitted pod on this node, other than the mesh's,
                            that runs as the proxy's UID or GID (image USER, setuid, file capabilities, set-user-ID
                            binaries): kill it, delete its pod, record an Event (needs --config or --mesh, hostPID,
                            CAP_KILL and the chart's pod rights; docs/security.md "Who can become the proxy")
  --proxy-guard-interval D  how often the guard reads the node's processes (default 1s: the window it leaves)
  --proc-root DIR           the host's procfs, as the agent sees it (default /proc)
  --kubeconfig FILE         kubeconfig to use (default: in-cluster service account)
  --port N                  serve /healthz, /readyz and /metrics over plain HTTP on N (default: not served)
  --host ADDR               listen address for --port (default 0.0.0.0; the chart passes the node's own IP, the
                            agent runs in the host's network)

examples:
  meshgate node-agent --config /etc/meshgate/config/config.yaml     # in the DaemonSet, NODE_NAME from spec.nodeName
  meshgate node-agent --mesh istio --node-name worker-1 --kubeconfig ~/.kube/config --resync 1m
  meshgate node-agent --config /etc/meshgate/config/config.yaml --port 9102 --host "$POD_IP"   # probes, metrics
`;

export type NodeAgentOptions = AgentConfig & {
  kubeconfig?: string;
  listen?: { host: string; port: number };
  guard?: GuardOptions;
  /** Heartbeats on a Lease per node in this namespace (src/agent/node-lease.ts); undefined: on the Node. */
  leases?: LeaseOptions;
};

/**
 * What a Lease says it lasts: the readers' default bound (cni.maxVerdictAgeSeconds, src/config/defaults.ts) is four
 * resync periods, one missed heartbeat and more.
 */
const LEASE_RESYNCS = 4;

const FLAGS = COMMANDS['node-agent'].flags;

/** Validated, frozen options from argv and the environment (only NODE_NAME is read from it). */
export function parseNodeAgentArgs(
  argv: string[],
  env: Readonly<Record<string, string | undefined>>,
): NodeAgentOptions {
  const { values } = parseFlags(argv, FLAGS);
  const withConfig = values.config !== undefined || values.mesh !== undefined;
  const config = withConfig ? configFromFlags({ config: values.config, mesh: values.mesh }) : undefined;
  const pluginType = resolvePluginType(values['plugin-type'], config, values.config ?? `--mesh ${values.mesh}`);
  const nodeName = values['node-name'] ?? env.NODE_NAME;
  if (!nodeName) throw new UsageError('--node-name or $NODE_NAME is required (set NODE_NAME from spec.nodeName)');
  if (!values.kubeconfig && !env.KUBERNETES_SERVICE_HOST) {
    throw new UsageError('not running in a cluster ($KUBERNETES_SERVICE_HOST is unset): pass --kubeconfig');
  }
  // 0: any free port (tests).
  if (values.port !== undefined && values.port !== '0' && !parsePort(values.port).ok) {
    throw new UsageError(`--port: "${values.port}" is not a port (1-65535)`);
  }
  return Object.freeze({
    nodeName,
    pluginType,
    confDir: values['cni-conf-dir'],
    binDirs: Object.freeze(splitDirs(values['cni-bin-dir'])),
    runtime: parseRuntime(values.runtime),
    libcni: parseLibcni(values.libcni),
    maxConfNum: parseCount('--max-conf-num', values['max-conf-num']),
    multusDirs: Object.freeze(multusDirs(values['multus-dir'])),
    multus: Object.freeze({
      paths: Object.freeze(multusPaths(values['multus-path'], values['cni-conf-dir'])),
      ...(config?.cni.multusNetwork ? { network: config.cni.multusNetwork } : {}),
    }),
    resyncMs: durationFlag('--resync', values.resync),
    leases:
      values['node-lease-namespace'] === undefined
        ? undefined
        : Object.freeze({
            namespace: values['node-lease-namespace'],
            durationSeconds: Math.ceil((LEASE_RESYNCS * durationFlag('--resync', values.resync)) / 1000),
          }),
    debounceMs: durationFlag('--debounce', values.debounce),
    taintUnverified: values['taint-unverified'],
    kubeconfig: values.kubeconfig,
    expect:
      config &&
      Object.freeze({
        inboundPort: config.proxy.inboundPort,
        outboundPort: config.proxy.outboundPort,
        proxyUid: config.proxy.uid,
      }),
    listen: values.port === undefined ? undefined : Object.freeze({ host: values.host, port: Number(values.port) }),
    guard: guardOptions(
      values['proxy-guard'],
      durationFlag('--proxy-guard-interval', values['proxy-guard-interval']),
      values['proc-root'],
      config,
    ),
    ...(config?.ambient.enabled
      ? {
          ambient: Object.freeze({
            readyzUrl: loopbackUrl(values['ambient-readyz']),
            zdsSocket: values['ztunnel-socket'],
            procNetUnix: values['proc-net-unix'],
            pollMs: durationFlag('--ambient-poll', values['ambient-poll']),
          }),
        }
      : {}),
  });
}

/** istio-cni's readiness is served on the node itself: anything but a loopback http URL would leave the node. */
function loopbackUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UsageError(`--ambient-readyz: "${text}" is not a URL`);
  }
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (url.protocol !== 'http:' || !(host.startsWith('127.') || host === '::1' || host === 'localhost'))
    throw new UsageError(`--ambient-readyz: "${text}" must be an http URL on loopback (the agent runs on the node)`);
  return url.href;
}

export async function nodeAgentCommand(argv: string[], io: CliIO): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    io.stdout(USAGE);
    return 0;
  }
  let options: NodeAgentOptions;
  let publisher: KubeNodePublisher;
  try {
    options = parseNodeAgentArgs(argv, io.env);
    publisher = await KubeNodePublisher.connect(options.kubeconfig, io.env, options.leases);
  } catch (err) {
    io.stderr(`meshgate node-agent: ${(err as Error).message}\n\n${err instanceof UsageError ? USAGE : ''}`);
    return 2;
  }
  const log = jsonLineLog({ node: options.nodeName }, (line) => io.stdout(line));
  const metrics = createAgentMetrics({ processMetrics: true });
  const agent = new NodeAgent(options, { publisher, log, observer: metrics.observer });
  const startedAt = Date.now();
  const endpoints = {
    registry: metrics.registry,
    alive: () => liveness(agent.status(), Date.now(), startedAt),
    ready: () => readiness(agent.status(), Date.now()),
  };
  log.info({ ...options, guard: options.guard && { intervalMs: options.guard.intervalMs } }, 'node agent starting');
  // Listening first: the probes must answer while the first check runs.
  let server: AgentServer | undefined;
  if (options.listen) {
    try {
      server = await serveAgent(endpoints, options.listen);
    } catch (err) {
      const where = `${options.listen.host}:${options.listen.port}`;
      io.stderr(`meshgate node-agent: cannot listen on ${where}: ${(err as Error).message}\n`);
      return 1;
    }
  }
  const signal = new Promise<string>((resolve) => {
    for (const s of ['SIGTERM', 'SIGINT'] as const) process.once(s, () => resolve(s));
  });
  await agent.start();
  const cluster = { kubeconfig: options.kubeconfig, env: io.env };
  const guard = options.guard && (await startGuard(options.guard, options.nodeName, cluster, metrics.registry, log));
  log.info({ signal: await signal }, 'node agent stopping; the Node keeps its last verdict');
  await guard?.stop();
  await agent.stop();
  await server?.close();
  return 0;
}
