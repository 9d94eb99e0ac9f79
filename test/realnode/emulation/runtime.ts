// A containerd of its own for the emulation check: no kubelet, its own conf dir and bin dir, reached through the CRI
// API (test/realnode/cri, the calls the kubelet makes), so its CRI plugin loads CNI config and runs the chain with
// its real code (go-cni v1.1.6 + libcni v1.1.1 as Debian's containerd 1.6.20 links them).
//   what containerd LOADED  RuntimeService/Status (verbose): go-cni's GetConfig (every network, its name and plugin
//                           types) and the last load's error
//   what containerd RAN     every plugin binary in the bin dir is a recording plugin (RECORDER below) that appends
//                           "<command> <ifname> <its own name>" to a log and answers ADD with a result; a
//                           RunPodSandbox per case shows which plugins ran, in order, and whether the sandbox started
// containerd watches its conf dir and reloads on change, so each case must be sure the load it observes is of the
// case's files: see waitLoaded().
import { execFile } from 'node:child_process';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import * as procs from '../../e2e/harness/procs.ts';
import { waitFor } from '../../e2e/harness/wait.ts';
import type { RealCluster } from '../harness/cluster.ts';
import { containerdConfig, containerdPaths, ctr, importImage, type ContainerdPaths } from '../harness/containerd.ts';
import { containerd2Binaries, containerd2Config } from '../harness/containerd2.ts';
import { CGROUP_NAME, inCgroupScript, makeCgroup } from '../harness/host.ts';

const run = promisify(execFile);

/** The recording plugin. CNI_IFNAME tells go-cni's loopback network (lo) from the case's network (eth0). */
const RECORDER = (log: string) => `#!/bin/sh
# meshgate-e2e recording CNI plugin (test/realnode/emulation/runtime.ts): records that it ran, under which name.
printf '%s %s %s\\n' "$CNI_COMMAND" "$CNI_IFNAME" "\${0##*/}" >> ${JSON.stringify(log)}
cat > /dev/null
case "$CNI_COMMAND" in
  ADD)
    if [ "$CNI_IFNAME" = lo ]; then
      printf '{"cniVersion":"1.0.0","interfaces":[{"name":"lo","sandbox":"%s"}]}\\n' "$CNI_NETNS"
    else
      printf '{"cniVersion":"1.0.0","interfaces":[{"name":"%s","sandbox":"%s"}],"ips":[{"address":"10.99.0.2/24","interface":0}]}\\n' "$CNI_IFNAME" "$CNI_NETNS"
    fi ;;
  VERSION) printf '{"cniVersion":"1.0.0","supportedVersions":["0.1.0","0.2.0","0.3.0","0.3.1","0.4.0","1.0.0","1.1.0"]}\\n' ;;
esac
exit 0
`;

export interface LoadedNetwork {
  name: string;
  plugins: string[];
}

export interface RuntimeStatus {
  /** go-cni's networks after the last load: [cni-loopback, the default network] when it loaded. */
  networks: LoadedNetwork[];
  /** "OK" or the last load's error. */
  lastLoad: string;
}

export interface EmulationRuntime {
  paths: ContainerdPaths;
  recordLog: string;
  recorderScript: string;
  status(): Promise<RuntimeStatus>;
  /** RunPodSandbox: the sandbox id, or containerd's error. */
  runSandbox(name: string, uid: string): Promise<{ id?: string; error?: string }>;
  removeSandbox(id: string): Promise<string | undefined>;
  stop(): Promise<void>;
}

interface RawStatus {
  error?: string;
  info?: { cniconfig?: string; lastCNILoadStatus?: string };
}

export async function startEmulationRuntime(cluster: RealCluster): Promise<EmulationRuntime> {
  const { bins, runId } = cluster;
  const dir = join(cluster.runDir, 'emu');
  const paths = containerdPaths(dir);
  const logs = join(dir, 'logs');
  for (const d of [logs, paths.cniConfDir, paths.cniBinDir]) mkdirSync(d, { recursive: true });
  const recordLog = join(dir, 'cni-record.log');
  const recorderScript = join(dir, 'recorder.sh');
  writeFileSync(recorderScript, RECORDER(recordLog));
  chmodSync(recorderScript, 0o755);
  // The runtime the cluster's nodes run: Debian's 1.6, or 2.4.2 (its own config schema, binaries and shim).
  const v2 = cluster.nodes[0]?.runtime === 'containerd-2.4' ? containerd2Binaries() : undefined;
  const rt = v2 ?? { containerd: bins.containerd, ctr: bins.ctr, binDir: undefined };
  const config = v2 ? containerd2Config : containerdConfig;
  writeFileSync(join(dir, 'containerd.toml'), config(paths, cluster.images.pause.ref));
  const cg = `${CGROUP_NAME}/${runId}/emu`;
  makeCgroup(`${cg}/runtime`);
  makeCgroup(`${cg}/pods`);
  const pgidFile = join(dir, 'pgids');
  writeFileSync(pgidFile, '');
  const containerd = procs.startComponent(
    'emu/containerd',
    'sh',
    ['-c', inCgroupScript(`${cg}/runtime`), 'containerd', rt.containerd, '--config', join(dir, 'containerd.toml')],
    {
      logPath: join(logs, 'containerd.log'),
      pgidFile,
      cwd: dir,
      env: {
        PATH: `${rt.binDir ? `${rt.binDir}:` : ''}/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin`,
        HOME: dir,
      },
    },
  );
  await waitFor(
    `emulation containerd at ${paths.socket}`,
    async () => {
      procs.assertRunning(containerd);
      await ctr(rt.ctr, paths.socket, ['version'], 5_000);
      return true;
    },
    { timeoutMs: 60_000, describe: () => procs.tail(containerd.logPath, 30) },
  );
  await importImage(rt.ctr, paths.socket, cluster.images.pause.archive);

  const cri = async (args: string[]) => {
    const { stdout } = await run(bins.cri, args, { timeout: 90_000, maxBuffer: 64 << 20 });
    return JSON.parse(stdout) as Record<string, unknown>;
  };
  return {
    paths,
    recordLog,
    recorderScript,
    async status() {
      const r = (await cri(['status', paths.socket])) as RawStatus;
      if (r.error) throw new Error(`CRI Status: ${r.error}`);
      const cfg = JSON.parse(r.info?.cniconfig ?? '{}') as {
        Networks?: Array<{ Config?: { Name?: string; Plugins?: Array<{ Network?: { type?: string } }> } }>;
      };
      return {
        networks: (cfg.Networks ?? []).map((n) => ({
          name: n.Config?.Name ?? '',
          plugins: (n.Config?.Plugins ?? []).map((p) => p.Network?.type ?? ''),
        })),
        lastLoad: r.info?.lastCNILoadStatus ?? '(none)',
      };
    },
    async runSandbox(name, uid) {
      // Below the run's cgroups (cgroupfs path), so teardown kills what a case leaves behind.
      const r = await cri(['runp', paths.socket, name, uid, 'emulation', `/${cg}/pods`, join(logs, 'pods', uid)]);
      return { id: r.id as string | undefined, error: r.error as string | undefined };
    },
    async removeSandbox(id) {
      const r = await cri(['rmp', paths.socket, id]);
      return r.error as string | undefined;
    },
    stop: () => procs.stopComponent(containerd),
  };
}
