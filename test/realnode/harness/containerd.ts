// One containerd per real node (Debian's 1.6.20, CRI v1), with every path of its own: root, state, socket, runc
// root, opt dir, CNI conf and bin dirs. Two corrections to `containerd config default` that this machine needs:
//  - restrict_oom_score_adj = true: the kubelet asks for oom_score_adj -998 on sandboxes, which needs
//    CAP_SYS_RESOURCE, absent here (runc then fails with "can't get final child's PID from pipe: EOF");
//  - SystemdCgroup = false with the kubelet's cgroupDriver cgroupfs: no systemd here, and containerd 1.6 has no
//    RuntimeConfig RPC, so the kubelet cannot ask for the driver and falls back to its own config.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface ContainerdPaths {
  root: string;
  state: string;
  socket: string;
  runcRoot: string;
  opt: string;
  cniConfDir: string;
  cniBinDir: string;
}

export function containerdPaths(dir: string): ContainerdPaths {
  return {
    root: join(dir, 'containerd', 'root'),
    state: join(dir, 'containerd', 'state'),
    socket: join(dir, 'containerd.sock'),
    runcRoot: join(dir, 'runc'),
    opt: join(dir, 'containerd', 'opt'),
    cniConfDir: join(dir, 'net.d'),
    cniBinDir: join(dir, 'cni-bin'),
  };
}

const q = (s: string) => JSON.stringify(s); // TOML basic strings use JSON's escapes for what we write

/**
 * The top of a config.toml of `version` for the node's own dirs, without the snapshotters that cannot work here
 * (they only add noise to the log) and without tracing.
 */
export function configHead(version: number, p: ContainerdPaths, snapshotters: string[]): string {
  const disabled = [
    ...snapshotters.map((s) => `io.containerd.snapshotter.v1.${s}`),
    'io.containerd.tracing.processor.v1.otlp',
    'io.containerd.internal.v1.tracing',
  ];
  return `version = ${version}
root = ${q(p.root)}
state = ${q(p.state)}
# Snapshotters that cannot work here only add noise to the log.
disabled_plugins = [${disabled.map(q).join(', ')}]`;
}

/**
 * The runtime tables under CRI table `cri` that both config versions write alike: runc, the default, with the node's
 * own runc root and cgroupfs (SystemdCgroup false: see the top of this file).
 */
export function runcRuntime(cri: string, p: ContainerdPaths): string {
  return `  default_runtime_name = "runc"

[${cri}.containerd.runtimes.runc]
  runtime_type = "io.containerd.runc.v2"

[${cri}.containerd.runtimes.runc.options]
  SystemdCgroup = false
  Root = ${q(p.runcRoot)}
`;
}

/**
 * config.toml (version 2) for one node. `registryHosts`: containerd's registry config_path (a certs.d tree of
 * hosts.toml files, harness/registry.ts), through which the CRI plugin resolves and pulls.
 */
export function containerdConfig(p: ContainerdPaths, sandboxImage: string, registryHosts?: string): string {
  const cri = 'plugins."io.containerd.grpc.v1.cri"';
  return `${configHead(2, p, ['aufs', 'btrfs', 'devmapper', 'zfs'])}

[grpc]
  address = ${q(p.socket)}

[plugins."io.containerd.internal.v1.opt"]
  path = ${q(p.opt)}

[${cri}]
  sandbox_image = ${q(sandboxImage)}
  # See the top of this file.
  restrict_oom_score_adj = true
  # Pod netns files under this containerd's own state dir (not the shared /var/run/netns).
  netns_mounts_under_state_dir = true
  stream_server_address = "127.0.0.1"
  # 0: a free port, so two containerds never collide.
  stream_server_port = "0"
  enable_selinux = false
  disable_apparmor = true

[${cri}.containerd]
  snapshotter = "overlayfs"
${runcRuntime(cri, p)}
[${cri}.cni]
  bin_dir = ${q(p.cniBinDir)}
  conf_dir = ${q(p.cniConfDir)}
  # containerd loads only the first file by name (the default); meshgate's check-node emulates exactly this.
  max_conf_num = 1
${registryHosts ? `\n[${cri}.registry]\n  config_path = ${q(registryHosts)}\n` : ''}`;
}

/** `ctr -a <socket> -n k8s.io <args>`: k8s.io is the namespace the CRI plugin (and so the kubelet) sees. */
export async function ctr(ctrBin: string, socket: string, args: string[], timeoutMs = 120_000): Promise<string> {
  const { stdout } = await run(ctrBin, ['-a', socket, '-n', 'k8s.io', ...args], {
    timeout: timeoutMs,
    maxBuffer: 64 << 20,
  });
  return stdout;
}

/** Imports an OCI archive (unpacked for the overlayfs snapshotter, as the CRI plugin needs). */
export async function importImage(ctrBin: string, socket: string, archive: string): Promise<void> {
  await ctr(ctrBin, socket, ['images', 'import', '--snapshotter', 'overlayfs', archive]);
}

/**
 * The network namespace file of a pod's sandbox: the sandbox container carries the pod UID label, and its OCI
 * spec names the netns path containerd created for it (under the state dir, see netns_mounts_under_state_dir).
 */
export async function podNetnsPath(ctrBin: string, socket: string, podUid: string): Promise<string> {
  const ids = (
    await ctr(ctrBin, socket, [
      'containers',
      'ls',
      '--quiet',
      `labels."io.kubernetes.pod.uid"==${podUid},labels."io.cri-containerd.kind"==sandbox`,
    ])
  )
    .split('\n')
    .filter(Boolean);
  if (ids.length === 0) throw new Error(`no sandbox container for pod uid ${podUid} in containerd at ${socket}`);
  // Several sandboxes exist only while a pod's sandbox is being recreated; any live one shares the netns path.
  for (const id of ids) {
    const info = JSON.parse(await ctr(ctrBin, socket, ['containers', 'info', id])) as {
      Spec?: { linux?: { namespaces?: { type: string; path?: string }[] } };
    };
    const net = info.Spec?.linux?.namespaces?.find((n) => n.type === 'network')?.path;
    if (net) return net;
  }
  throw new Error(`sandbox of pod uid ${podUid} has no network namespace path in its spec`);
}
