/**
 * How the tests start Istio ambient's two node components for real, shared by the e2e test on kwok
 * (test/e2e/ambient-istio-cni.test.ts) and the real-node tier (test/realnode/harness/ambient.ts):
 *  - istio-cni's node agent: `install-cni` of Istio 1.27.0 (scripts/build-istio.sh) with AMBIENT_ENABLED. Its
 *    paths under /host are compiled in (cni/pkg/constants: /host/proc, /host/etc/cni/net.d, /host/opt/cni/bin and
 *    the pod netns paths the plugin sends, opened under /host), so it runs in a chroot of bind mounts inside a mount
 *    and pid namespace of its own (`unshare --mount --pid --fork --kill-child --mount-proc`: it dies with unshare,
 *    and /proc/1/ns/net there is its own network namespace, the one it runs in);
 *  - ztunnel in in-pod mode without istiod (`--features testing`, scripts/build-ztunnel.sh): FAKE_CA, an empty
 *    LOCAL_XDS, connected to the agent's ZDS socket.
 * Its readiness port 8000 is not configurable in 1.27 (cni/pkg/constants ReadinessPort), so one network namespace
 * holds one such agent.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** istio-cni's readiness endpoint (fixed port 8000 in Istio 1.27). */
export const ISTIO_CNI_READYZ = 'http://127.0.0.1:8000/readyz';
/** ztunnel's admin server (its default): /config_dump lists the pods handed to it ("workloadState"). */
export const ZTUNNEL_ADMIN = 'http://127.0.0.1:15000';

/** Istio 1.27's default ambient enablement selectors (istio-cni chart values), as the agent reads them (YAML). */
export const AMBIENT_SELECTORS_YAML = `- podSelector:
    matchLabels: {istio.io/dataplane-mode: ambient}
- podSelector:
    matchExpressions:
    - {key: istio.io/dataplane-mode, operator: NotIn, values: [none]}
  namespaceSelector:
    matchLabels: {istio.io/dataplane-mode: ambient}
`;

/** The same selectors as the installer renders them into the plugin's conflist entry. */
export const AMBIENT_SELECTORS = [
  { podSelector: { matchLabels: { 'istio.io/dataplane-mode': 'ambient' } } },
  {
    podSelector: { matchExpressions: [{ key: 'istio.io/dataplane-mode', operator: 'NotIn', values: ['none'] }] },
    namespaceSelector: { matchLabels: { 'istio.io/dataplane-mode': 'ambient' } },
  },
];

/** istio-cni's plugin entry with ambient on, as its installer chains it (cni/pkg/install/cniconfig.go). */
export function ambientPluginConf(agentRunDir: string, selectors = true): Record<string, unknown> & { type: string } {
  return {
    type: 'istio-cni',
    ambient_enabled: true,
    cni_agent_run_dir: agentRunDir,
    plugin_log_level: 'debug',
    exclude_namespaces: ['kube-system'],
    pod_namespace: 'istio-system',
    enablement_selectors: selectors ? AMBIENT_SELECTORS : [],
  };
}

export interface AgentChroot {
  /** An empty dir: the chroot. */
  root: string;
  /** What the agent sees as /host/etc/cni/net.d and /host/opt/cni/bin (the installer writes there). */
  hostConf: string;
  hostBin: string;
  /** A dir with `token` and `namespace`: the agent's service account, as a pod has it mounted. */
  serviceAccount: string;
  /** Where install-cni and the plugin binaries are (mounted as /opt/cni/bin). */
  istioBinDir: string;
  /** More bind mounts inside the chroot (recursive, so mounts made later below `from` follow when it is shared). */
  binds: { from: string; to: string }[];
}

/** The shell script that builds the chroot and execs the agent in it (run by `unshare`, see agentCommand). */
export function agentScript(c: AgentChroot): string {
  return [
    'set -e',
    `R=${c.root}`,
    'for d in usr etc dev proc sys tmp var; do mkdir -p $R/$d; mount --rbind /$d $R/$d; done',
    'for l in bin sbin lib lib64; do ln -s usr/$l $R/$l; done',
    'mkdir -p $R/run/secrets/kubernetes.io/serviceaccount $R/host/proc',
    'mkdir -p $R/host/etc/cni/net.d $R/host/opt/cni/bin $R/opt/cni/bin',
    'mount --rbind /proc $R/host/proc',
    `mount --bind ${c.serviceAccount} $R/run/secrets/kubernetes.io/serviceaccount`,
    `mount --bind ${c.hostConf} $R/host/etc/cni/net.d`,
    `mount --bind ${c.hostBin} $R/host/opt/cni/bin`,
    `mount --bind ${c.istioBinDir} $R/opt/cni/bin`,
    ...c.binds.flatMap((b) => [`mkdir -p $R${b.to}`, `mount --rbind ${b.from} $R${b.to}`]),
    'exec chroot $R /opt/cni/bin/install-cni',
  ].join('\n');
}

/**
 * `unshare` and its arguments. Propagation slave: mounts the host makes later below a shared mount (the pod netns
 * files a runtime creates) reach the chroot's copies; nothing mounted here reaches the host.
 */
export function agentCommand(c: AgentChroot): { bin: string; args: string[] } {
  return {
    bin: 'unshare',
    args: [
      '--mount',
      '--propagation',
      'slave',
      '--pid',
      '--fork',
      '--kill-child',
      '--mount-proc',
      'sh',
      '-c',
      agentScript(c),
    ],
  };
}

export interface AgentEnvOptions {
  /** The apiserver's URL (KUBERNETES_SERVICE_HOST/PORT; the agent reads its token from the chroot's SA dir). */
  server: string;
  kubeconfig: string;
  nodeName: string;
  /** cni_agent_run_dir: the plugin's socket to the agent, the plugin's kubeconfig and log. */
  agentRunDir: string;
  /** The ZDS socket ztunnel connects to. */
  zdsSocket: string;
}

/** The agent's environment as the istio-cni chart's DaemonSet sets it, ambient on, repair off. */
export function agentEnv(o: AgentEnvOptions): Record<string, string> {
  const url = new URL(o.server);
  return {
    PATH: '/usr/sbin:/usr/bin:/sbin:/bin',
    KUBECONFIG: o.kubeconfig,
    KUBERNETES_SERVICE_HOST: url.hostname,
    KUBERNETES_SERVICE_PORT: url.port,
    SKIP_TLS_VERIFY: 'true',
    NODE_NAME: o.nodeName,
    POD_NAME: `istio-cni-node-${o.nodeName}`,
    POD_NAMESPACE: 'istio-system',
    AMBIENT_ENABLED: 'true',
    AMBIENT_ENABLEMENT_SELECTOR: AMBIENT_SELECTORS_YAML,
    AMBIENT_DNS_CAPTURE: 'true',
    CNI_AGENT_RUN_DIR: o.agentRunDir,
    ZTUNNEL_UDS_ADDRESS: o.zdsSocket,
    MOUNTED_CNI_NET_DIR: '/host/etc/cni/net.d',
    CHAINED_CNI_PLUGIN: 'true',
    REPAIR_ENABLED: 'false',
  };
}

/** ztunnel's environment: in-pod mode on `zdsSocket`, no istiod (fake CA, no workloads), IPv4 only. */
export function ztunnelEnv(zdsSocket: string, nodeName: string): Record<string, string> {
  return {
    FAKE_CA: 'true',
    XDS_ADDRESS: '',
    LOCAL_XDS: 'workloads: []\npolicies: []\nservices: []\n',
    PROXY_MODE: 'shared',
    INPOD_UDS: zdsSocket,
    IPV6_ENABLED: 'false',
    NODE_NAME: nodeName,
  };
}

/** Whether istio-cni's node agent answers ready. */
export async function agentReady(url = ISTIO_CNI_READYZ): Promise<boolean> {
  try {
    return (await fetch(url, { signal: AbortSignal.timeout(1_000) })).status === 200;
  } catch {
    return false;
  }
}

/** The pods ztunnel serves (its admin /config_dump "workloadState": uid → state "Up" | "Pending"). */
export async function ztunnelWorkloads(admin = ZTUNNEL_ADMIN): Promise<Map<string, string>> {
  const res = await fetch(`${admin}/config_dump`, { signal: AbortSignal.timeout(2_000) });
  const dump = (await res.json()) as { workloadState?: Record<string, { state?: string }> };
  return new Map(Object.entries(dump.workloadState ?? {}).map(([uid, w]) => [uid, w.state ?? '']));
}

/**
 * The agent's service account as the istio-cni chart creates it (here bound to cluster-admin: the test grants
 * rather than copies the chart's ClusterRole), its token written into `dir` as a pod has it mounted.
 */
export async function agentServiceAccount(
  kubectl: (argv: string[]) => Promise<{ stdout: string }>,
  dir: string,
): Promise<void> {
  await kubectl(['create', 'namespace', 'istio-system']);
  await kubectl(['create', 'serviceaccount', 'istio-cni', '-n', 'istio-system']);
  await kubectl([
    'create',
    'clusterrolebinding',
    'istio-cni',
    '--clusterrole=cluster-admin',
    '--serviceaccount=istio-system:istio-cni',
  ]);
  const token = (await kubectl(['create', 'token', 'istio-cni', '-n', 'istio-system', '--duration=24h'])).stdout.trim();
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'token'), token);
  writeFileSync(join(dir, 'namespace'), 'istio-system');
}
