// containerd 2.x on a real node (v2.4.2, scripts/build-containerd.sh; docs/mesh-binaries.md "containerd 2.x"): the
// same node layout and the same two corrections as containerd.ts for 1.6, in the config schema 2.x writes
// (`containerd config default` prints version 4). The CRI plugin is split there: the runtime part
// (io.containerd.cri.v1.runtime) holds the CNI config (bin_dirs is a list) and the sandbox settings, the images part
// (io.containerd.cri.v1.images) the snapshotter and the pinned sandbox image; the grpc part keeps the stream server.
// The shim is 2.4.2's own containerd-shim-runc-v2, found first on the node's PATH (runtimePath()).
import { dirname, join } from 'node:path';
import { findMeshBuild } from '../../meshbin/binaries.ts';
import { configHead, type ContainerdPaths, runcRuntime } from './containerd.ts';

/** The container runtimes a real node can run: Debian's containerd 1.6.20 or the bootstrap's 2.4.2. */
export type TierRuntime = 'containerd-1.6' | 'containerd-2.4';

const q = (s: string) => JSON.stringify(s);

/**
 * The node's NRI socket (containerd >= 1.7; on by default in 2.x at /var/run/nri/nri.sock, which two nodes on one host
 * would share): meshgate's NRI plugin (nri/, harness/nri.ts) connects here.
 */
export const nriSocket = (p: ContainerdPaths) => join(dirname(p.socket), 'nri.sock');

/** The 2.4.2 build's containerd, ctr, and the dir its shim is in (to put first on the node's PATH). */
export function containerd2Binaries(): { containerd: string; ctr: string; binDir: string } {
  const b = findMeshBuild('containerd');
  return { containerd: b.bin('containerd'), ctr: b.bin('ctr'), binDir: dirname(b.bin('containerd-shim-runc-v2')) };
}

/**
 * config.toml (version 4) for one node on containerd 2.x; `config dump` shows it with no migration warning. The
 * registry config_path (harness/registry.ts) moved to the images part.
 */
export function containerd2Config(p: ContainerdPaths, sandboxImage: string, registryHosts?: string): string {
  const rt = "plugins.'io.containerd.cri.v1.runtime'";
  const img = "plugins.'io.containerd.cri.v1.images'";
  return `${configHead(4, p, ['btrfs', 'devmapper', 'zfs', 'erofs'])}

# Version 4 has no [grpc] table (it would be ignored, and the socket left at /run/containerd): the servers are plugins.
[plugins.'io.containerd.server.v1.grpc']
  address = ${q(p.socket)}

[plugins.'io.containerd.server.v1.ttrpc']
  address = ${q(`${p.socket}.ttrpc`)}

[plugins.'io.containerd.internal.v1.opt']
  path = ${q(p.opt)}

# NRI: on (2.x's default), each node on its own socket.
[plugins.'io.containerd.nri.v1.nri']
  disable = false
  socket_path = ${q(nriSocket(p))}

[plugins.'io.containerd.grpc.v1.cri']
  stream_server_address = "127.0.0.1"
  # 0: a free port, so two containerds never collide.
  stream_server_port = "0"

[${img}]
  snapshotter = "overlayfs"

[${img}.pinned_images]
  sandbox = ${q(sandboxImage)}
${registryHosts ? `\n[${img}.registry]\n  config_path = ${q(registryHosts)}\n` : ''}
[${rt}]
  # See containerd.ts.
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  enable_selinux = false
  disable_apparmor = true

[${rt}.containerd]
${runcRuntime(rt, p)}
[${rt}.cni]
  bin_dirs = [${q(p.cniBinDir)}]
  conf_dir = ${q(p.cniConfDir)}
  # As on 1.6: only the first file by name (the default); the runtime handler's cni_conf_dir/cni_max_conf_num stay
  # unset, so they are these.
  max_conf_num = 1
`;
}
