// One real node: its own containerd (and so runc, CNI plugins, istio-cni) and kubelet, registered with the
// harness control plane under its name, on an IP of the namespace's node bridge. Each process starts inside the
// node's cgroups (via a `sh -c` prefix that joins them, then execs), so teardown can find everything it left,
// including containerd's shims, which outlive containerd.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CoreV1Api, type V1Node } from '@kubernetes/client-node';
import type { ControlPlane } from '../../e2e/harness/controlplane.ts';
import { kubeconfig } from '../../e2e/harness/pki.ts';
import * as procs from '../../e2e/harness/procs.ts';
import { waitFor } from '../../e2e/harness/wait.ts';
import type { RealNodeBinaries } from './binaries.ts';
import { prepareCni, standardChain, writeConflist, type CniNodeLayout, type TierMesh, type PluginConf } from './cni.ts';
import {
  containerdConfig,
  containerdPaths,
  ctr,
  importImage,
  podNetnsPath,
  type ContainerdPaths,
} from './containerd.ts';
import { containerd2Binaries, containerd2Config, type TierRuntime } from './containerd2.ts';
import { CGROUP_NAME, inCgroupScript, makeCgroup } from './host.ts';
import type { BuiltImage } from './image.ts';
import { kubeletArgs, kubeletConfig, kubeletLayout, type KubeletLayout } from './kubelet.ts';

export interface RealNodeSpec {
  /** Node name, e.g. rn-1. */
  name: string;
  /** 1-based index: picks the IP (10.250.0.<i>), ports, pod subnet (10.244.<i>.0/24) and bridge. */
  index: number;
  /** Start with the mesh plugin (istio-cni) chained after bridge + portmap. Phase-2 scenarios rewrite it freely. */
  mesh: boolean;
  /** Whose mesh plugin that is (default istio: istio-cni; linkerd: linkerd-cni). */
  meshName?: TierMesh;
  /** Istio ambient: the mesh plugin is istio-cni with ambient on (cni.ts meshPlugin). */
  ambient?: boolean;
  /** containerd 1.6 (Debian's, the default) or 2.4 (scripts/build-containerd.sh). */
  runtime?: TierRuntime;
  /** Images to import before the kubelet starts (the sandbox image must be among them). */
  images: BuiltImage[];
  /** containerd's registry config_path (harness/registry.ts): where it pulls meshgate's image from. */
  registryHosts?: string;
}

export interface RealNode {
  name: string;
  ip: string;
  /** Whether the node started with the mesh plugin in its chain (scenarios may have changed it since). */
  mesh: boolean;
  dir: string;
  cni: CniNodeLayout;
  /** Which containerd the node runs. */
  runtime: TierRuntime;
  containerd: ContainerdPaths;
  kubelet: KubeletLayout;
  /** Rewrites this node's conflist (null removes it); containerd picks the change up by itself. */
  writeConflist(plugins: PluginConf[] | null, file?: string): string;
  /** The chain this node was started with (or the other one: standardChain(!mesh)). */
  standardChain(withMesh: boolean): PluginConf[];
  importImage(image: BuiltImage): Promise<void>;
  /** `ctr -n k8s.io` against this node's containerd. */
  ctr(args: string[]): Promise<string>;
  /** The netns file of a pod's sandbox on this node (nsenter --net=<it>). */
  podNetns(podUid: string): Promise<string>;
  /**
   * Starts a host process of this node (a DaemonSet-like agent) in its own cgroup below the node's, with the
   * node's PATH, logging to <dir>/logs/<name>.log; stop it with procs.stopComponent (teardown kills it anyway).
   */
  spawn(name: string, bin: string, args: string[], env?: NodeJS.ProcessEnv): procs.Component;
  /** Last lines of the kubelet's and containerd's logs, for failure messages. */
  describe(lines?: number): string;
  /** SIGTERM kubelet then containerd (SIGKILL after procs.STOP_GRACE_MS). Shims are left to cleanup.sh. */
  stop(): Promise<void>;
}

/** containerd runs runc, the CNI plugins, iptables and nsenter by name (istio-cni execs iptables-*). */
const NODE_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** The node bridge's addresses: 10.250.0.0/24 is nowhere else on this machine and far from pods and services. */
export const nodeIp = (index: number) => `10.250.0.${index}`;

/** Starts containerd and the kubelet of one node and waits until the Node is Ready. */
export async function startRealNode(
  cp: ControlPlane,
  bins: RealNodeBinaries,
  runDir: string,
  runId: string,
  spec: RealNodeSpec,
): Promise<RealNode> {
  const dir = join(runDir, spec.name);
  const logs = join(dir, 'logs');
  mkdirSync(logs, { recursive: true });
  const pgidFile = join(dir, 'pgids');
  writeFileSync(pgidFile, '');
  const cgroupRoot = `${CGROUP_NAME}/${runId}/${spec.name}`;

  const ip = nodeIp(spec.index);
  const cni: CniNodeLayout = {
    confDir: join(dir, 'net.d'),
    binDir: join(dir, 'cni-bin'),
    ipamDir: join(dir, 'ipam'),
    istioDir: join(dir, 'istio'),
    bridge: `mg-${spec.name}`,
    subnet: `10.244.${spec.index}.0/24`,
    mesh: spec.meshName,
    ambient: spec.ambient,
  };
  prepareCni(cni, bins, cp.server, cp.ca);
  writeConflist(cni, standardChain(cni, spec.mesh));

  const c = containerdPaths(dir);
  const pause = spec.images.find((i) => i.ref.includes('/pause:'));
  if (!pause) throw new Error(`node ${spec.name}: no pause image among ${spec.images.map((i) => i.ref).join(', ')}`);
  const v2 = spec.runtime === 'containerd-2.4' ? containerd2Binaries() : undefined;
  const rt = v2 ?? { containerd: bins.containerd, ctr: bins.ctr, binDir: undefined };
  writeFileSync(
    join(dir, 'containerd.toml'),
    v2 ? containerd2Config(c, pause.ref, spec.registryHosts) : containerdConfig(c, pause.ref, spec.registryHosts),
  );
  const components: procs.Component[] = [];
  const start = (name: string, cg: string, bin: string, args: string[], env: NodeJS.ProcessEnv = {}) => {
    makeCgroup(`${cgroupRoot}/${cg}`);
    const comp = procs.startComponent(
      `${spec.name}/${name}`,
      'sh',
      ['-c', inCgroupScript(`${cgroupRoot}/${cg}`), name, bin, ...args],
      {
        logPath: join(logs, `${name}.log`),
        pgidFile,
        cwd: dir,
        // On 2.4 its own shim comes first.
        env: { PATH: `${rt.binDir ? `${rt.binDir}:` : ''}${NODE_PATH}`, HOME: dir, ...env },
      },
    );
    components.push(comp);
    return comp;
  };
  const describe = (lines = 30) =>
    components.map((k) => `--- ${k.name} (${k.logPath}) ---\n${procs.tail(k.logPath, lines)}`).join('\n');

  const containerd = start('containerd', 'runtime', rt.containerd, [
    '--config',
    join(dir, 'containerd.toml'),
    '--log-level',
    'info',
  ]);
  await waitFor(
    `${spec.name}: containerd at ${c.socket}`,
    async () => {
      procs.assertRunning(containerd);
      await ctr(rt.ctr, c.socket, ['version'], 5_000);
      return true;
    },
    { timeoutMs: 60_000, describe },
  );
  await Promise.all(spec.images.map((img) => importImage(rt.ctr, c.socket, img.archive)));

  const kl = kubeletLayout(dir, {
    name: spec.name,
    ip,
    port: 10250 + spec.index, // distinct per node (all nodes share the namespace); 10250 is the usual port
    healthzPort: 10248 + 10 * spec.index, // 10258, 10268, ...: clear of each other and of 10250+i
    cgroupRoot: `/${cgroupRoot}`,
    containerdSocket: c.socket,
    clusterCaFile: join(cp.dir, 'pki', 'ca.crt'),
  });
  writeFileSync(kl.configFile, kubeletConfig(kl));
  const client = cp.ca.issue({
    commonName: `system:node:${spec.name}`,
    organizations: ['system:nodes'],
    usage: 'client',
  });
  writeFileSync(kl.kubeconfigFile, kubeconfig(cp.server, cp.ca.certPem, client, spec.name), { mode: 0o600 });
  const kubelet = start('kubelet', 'kubelet', bins.kubelet, kubeletArgs(kl));

  const core = cp.kc.makeApiClient(CoreV1Api);
  await waitFor(
    `node ${spec.name} Ready (real kubelet)`,
    async () => {
      procs.assertRunning(kubelet);
      procs.assertRunning(containerd);
      const n: V1Node = await core.readNode({ name: spec.name });
      return n.status?.conditions?.some((k) => k.type === 'Ready' && k.status === 'True');
    },
    { timeoutMs: 120_000, describe },
  );

  return {
    name: spec.name,
    ip,
    mesh: spec.mesh,
    dir,
    cni,
    containerd: c,
    kubelet: kl,
    writeConflist: (plugins, file) => writeConflist(cni, plugins, file),
    standardChain: (withMesh) => standardChain(cni, withMesh),
    runtime: spec.runtime ?? 'containerd-1.6',
    importImage: (img) => importImage(rt.ctr, c.socket, img.archive),
    ctr: (args) => ctr(rt.ctr, c.socket, args),
    podNetns: (uid) => podNetnsPath(rt.ctr, c.socket, uid),
    spawn: (name, bin, args, env) => start(name, name, bin, args, env),
    describe,
    stop: async () => {
      await procs.stopComponent(kubelet);
      await procs.stopComponent(containerd);
    },
  };
}
