// A node reboot, as far as one node of the tier can have one: the kubelet and containerd stop, every process of the
// node dies (shims, containers, its host agents), the runtime's state is gone as /run is after a boot (pod netns
// files unmounted, containerd's state and runc's root emptied; its root with the images stays, like /var/lib), then
// `whileDown` changes the node's files (the CNI dir as it is at boot), and containerd and the kubelet start again
// on the same dirs. The kubelet then finds its pods' sandboxes gone and creates new ones — through whatever chain
// the conf dir holds at that moment.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { waitFor } from '../../e2e/harness/wait.ts';
import type { RealNodeBinaries } from './binaries.ts';
import { containerd2Binaries } from './containerd2.ts';
import { CGROUP_NAME } from './host.ts';
import { kubeletArgs } from './kubelet.ts';
import type { RealNode } from './node.ts';

/** SIGKILLs every process in the node's cgroups (the pids hierarchy sees them all), until none is left. */
function killNode(runId: string, node: string): void {
  const root = join('/sys/fs/cgroup/pids', CGROUP_NAME, runId, node);
  const pids = (dir: string): string[] =>
    existsSync(dir)
      ? [
          ...readFileSync(join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean),
          ...readdirSync(dir, { withFileTypes: true })
            .filter((e) => e.isDirectory())
            .flatMap((e) => pids(join(dir, e.name))),
        ]
      : [];
  for (let tries = 0; tries < 50; tries++) {
    const left = pids(root);
    if (left.length === 0) return;
    for (const p of left)
      try {
        process.kill(Number(p), 'SIGKILL');
      } catch {
        // gone already
      }
    execFileSync('sleep', ['0.1']);
  }
  throw new Error(`reboot of ${node}: processes survive SIGKILL: ${pids(root).join(' ')}`);
}

/** Lazily unmounts everything under `dir`, deepest first (the pod netns bind mounts under containerd's state). */
function unmountUnder(dir: string): void {
  const mounts = readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((l) => l.split(' ')[4])
    .filter((m): m is string => m !== undefined && (m === dir || m.startsWith(`${dir}/`)))
    .sort()
    .reverse();
  for (const m of mounts) execFileSync('umount', ['-l', m]);
}

export async function rebootNode(
  runId: string,
  bins: RealNodeBinaries,
  node: RealNode,
  whileDown: () => void,
): Promise<void> {
  await node.stop();
  killNode(runId, node.name);
  for (const d of [node.containerd.state, node.containerd.runcRoot]) {
    unmountUnder(d);
    rmSync(d, { recursive: true, force: true });
  }
  whileDown();
  const containerd = node.runtime === 'containerd-2.4' ? containerd2Binaries().containerd : bins.containerd;
  node.spawn('containerd', containerd, ['--config', join(node.dir, 'containerd.toml'), '--log-level', 'info']);
  await waitFor(`${node.name}: containerd back after the reboot`, async () => Boolean(await node.ctr(['version'])), {
    timeoutMs: 60_000,
  });
  node.spawn('kubelet', bins.kubelet, kubeletArgs(node.kubelet));
}
