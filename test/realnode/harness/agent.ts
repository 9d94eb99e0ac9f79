// meshgate's node agent on a real node, as its DaemonSet runs it (hostNetwork, the node's CNI conf and bin dirs
// mounted read-only): here a host process of that node reading the node's own dirs, so the verdict it publishes
// on the Node is about exactly the chain that node's containerd loads.
import { join } from 'node:path';
import { repoRoot } from '../../e2e/harness/binaries.ts';
import * as procs from '../../e2e/harness/procs.ts';
import type { RealNode } from './node.ts';

export interface NodeAgentOptions {
  /** e.g. cluster.cp.kubeconfigPath (admin); pass a restricted one to test the chart's RBAC and policy. */
  kubeconfig: string;
  /** Default istio-cni. */
  pluginType?: string;
  /** More `meshgate node-agent` flags, e.g. ['--taint-unverified', '--debounce=50ms']. */
  args?: string[];
  /**
   * The conf dir the agent reads; default the node's own (what its containerd loads). S8 points it elsewhere: an
   * agent misconfigured to read another dir than the runtime, whose verdict then says nothing about the runtime.
   */
  confDir?: string;
}

export interface RunningNodeAgent {
  component: procs.Component;
  logs(lines?: number): string;
  stop(): Promise<void>;
}

export function startNodeAgent(node: RealNode, opts: NodeAgentOptions): RunningNodeAgent {
  const component = node.spawn('meshgate-node-agent', join(repoRoot, 'node_modules/.bin/node'), [
    join(repoRoot, 'bin/meshgate.js'),
    'node-agent',
    `--plugin-type=${opts.pluginType ?? 'istio-cni'}`,
    `--node-name=${node.name}`,
    `--cni-conf-dir=${opts.confDir ?? node.cni.confDir}`,
    `--cni-bin-dir=${node.cni.binDir}`,
    '--runtime=containerd',
    '--max-conf-num=1', // as the node's containerd.toml says
    `--kubeconfig=${opts.kubeconfig}`,
    ...(opts.args ?? []),
  ]);
  return {
    component,
    logs: (lines = 40) => procs.tail(component.logPath, lines),
    stop: () => procs.stopComponent(component),
  };
}

/** The label the agent publishes (src/contract/node.ts VERIFIED_LABEL): "true" | "false". */
export const VERIFIED_LABEL = 'meshgate.io/cni-verified';
