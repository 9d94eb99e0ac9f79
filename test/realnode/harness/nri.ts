// meshgate's NRI plugin (nri/, scripts/build-nri.sh) on a containerd 2.4 node, as the chart's nriPlugin DaemonSet
// runs it: a host process of the node connected to that node's NRI socket, with the mesh's identity and container
// names taken from meshgate's configuration the same way the node agent's guard takes them (nriPluginArgs), so the
// two cannot disagree. containerd 1.6 has no NRI: nothing runs there.
import { readFileSync } from 'node:fs';
import { nriPluginArgs } from '../../../src/agent/guard/start.ts';
import type { MeshgateConfig } from '../../../src/config/types.ts';
import type { DeepReadonly } from '../../../src/util/readonly.ts';
import * as procs from '../../e2e/harness/procs.ts';
import { waitFor } from '../../e2e/harness/wait.ts';
import { findMeshBuild } from '../../meshbin/binaries.ts';
import { nriSocket } from './containerd2.ts';
import type { RealNode } from './node.ts';

export interface RunningNri {
  component: procs.Component;
  logs(lines?: number): string;
  stop(): Promise<void>;
}

/** Starts the plugin on `node` and waits until containerd registered it (its Synchronize call). */
export async function startNriPlugin(node: RealNode, config: DeepReadonly<MeshgateConfig>): Promise<RunningNri> {
  const bin = findMeshBuild('nri').bin('meshgate-nri');
  const component = node.spawn('meshgate-nri', bin, [
    `--socket=${nriSocket(node.containerd)}`,
    ...nriPluginArgs(config),
  ]);
  const logs = (lines = 20) => procs.tail(component.logPath, lines);
  await waitFor(
    `meshgate's NRI plugin registered with ${node.name}'s containerd`,
    async () => {
      if (component.exit) throw new Error(`meshgate-nri exited (${JSON.stringify(component.exit)}): ${logs()}`);
      return readFileSync(component.logPath, 'utf8').includes('registered with the runtime');
    },
    { timeoutMs: 30_000, describe: () => logs() },
  );
  return { component, logs, stop: () => procs.stopComponent(component) };
}
