/**
 * `meshgate node-agent`: runs on every node (DaemonSet, hostPath mounts of the CNI conf and bin dirs), verifies
 * the CNI chain the runtime will load and says so on its own Node (src/agent/). Flags are parsed and validated
 * here, once, into a frozen config; defaults are pinned by test/agent/node-agent-cli.test.ts.
 */
import pino from 'pino';
import { NodeAgent, type AgentConfig } from '../agent/agent.ts';
import { durationFlag, parseCount, parseRuntime, splitDirs } from '../agent/flags.ts';
import { KubeNodePublisher } from '../agent/kube-publisher.ts';
import { parseFlags, UsageError } from './args.ts';
import type { CliIO } from './io.ts';

export const USAGE = `usage: meshgate node-agent --plugin-type TYPE [flags]

Verifies the CNI chain the container runtime will load on this node and publishes the verdict on the Node
(label meshgate.io/cni-verified, condition MeshCNIVerified, annotation meshgate.io/cni-evidence).

flags:
  --plugin-type TYPE        mesh CNI plugin type that must be chained, e.g. istio-cni, linkerd-cni (required)
  --node-name NAME          this node (default: $NODE_NAME, set it with the downward API; never guessed)
  --cni-conf-dir DIR        CNI configuration dir (default /etc/cni/net.d)
  --cni-bin-dir DIR         CNI plugin dir, repeatable or comma-separated (default /opt/cni/bin)
  --runtime NAME            containerd | crio: whose file selection to emulate (default containerd)
  --max-conf-num N          containerd's max_conf_num (default 1; 0 = all files)
  --resync DURATION         periodic re-verification and Node re-read (default 5m)
  --debounce DURATION       coalescing window after a file event (default 100ms)
  --taint-unverified        keep the taint meshgate.io/cni-unverified:NoSchedule on the Node while unverified
  --kubeconfig FILE         kubeconfig to use (default: in-cluster service account)
`;

export type NodeAgentOptions = AgentConfig & { kubeconfig?: string };

const FLAGS = {
  'plugin-type': { type: 'string' },
  'node-name': { type: 'string' },
  'cni-conf-dir': { type: 'string', default: '/etc/cni/net.d' },
  'cni-bin-dir': { type: 'string', multiple: true },
  runtime: { type: 'string', default: 'containerd' },
  'max-conf-num': { type: 'string', default: '1' },
  resync: { type: 'string', default: '5m' },
  debounce: { type: 'string', default: '100ms' },
  'taint-unverified': { type: 'boolean', default: false },
  kubeconfig: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** Validated, frozen options from argv and the environment (only NODE_NAME is read from it). */
export function parseNodeAgentArgs(argv: string[], env: Readonly<Record<string, string | undefined>>): NodeAgentOptions {
  const { values } = parseFlags(argv, FLAGS);
  const pluginType = values['plugin-type'];
  if (!pluginType) throw new UsageError('--plugin-type is required (e.g. istio-cni, linkerd-cni)');
  const nodeName = values['node-name'] ?? env.NODE_NAME;
  if (!nodeName) throw new UsageError('--node-name or $NODE_NAME is required (set NODE_NAME from spec.nodeName)');
  if (!values.kubeconfig && !env.KUBERNETES_SERVICE_HOST) {
    throw new UsageError('not running in a cluster ($KUBERNETES_SERVICE_HOST is unset): pass --kubeconfig');
  }
  return Object.freeze({
    nodeName,
    pluginType,
    confDir: values['cni-conf-dir'],
    binDirs: Object.freeze(splitDirs(values['cni-bin-dir'])),
    runtime: parseRuntime(values.runtime),
    maxConfNum: parseCount('--max-conf-num', values['max-conf-num']),
    resyncMs: durationFlag('--resync', values.resync),
    debounceMs: durationFlag('--debounce', values.debounce),
    taintUnverified: values['taint-unverified'],
    kubeconfig: values.kubeconfig,
  });
}

export async function run(argv: string[], io: CliIO): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    io.stdout(USAGE);
    return 0;
  }
  let options: NodeAgentOptions;
  let publisher: KubeNodePublisher;
  try {
    options = parseNodeAgentArgs(argv, io.env);
    publisher = KubeNodePublisher.fromFlags(options.kubeconfig);
  } catch (err) {
    io.stderr(`meshgate node-agent: ${(err as Error).message}\n\n${err instanceof UsageError ? USAGE : ''}`);
    return 2;
  }
  const log = pino({ base: { node: options.nodeName } }, { write: (line: string) => io.stdout(line) });
  const agent = new NodeAgent(options, { publisher, log });
  log.info({ ...options }, 'node agent starting');
  await agent.start();
  const signal = await new Promise<string>((resolve) => {
    for (const s of ['SIGTERM', 'SIGINT'] as const) process.once(s, () => resolve(s));
  });
  log.info({ signal }, 'node agent stopping; the Node keeps its last verdict');
  await agent.stop();
  return 0;
}
