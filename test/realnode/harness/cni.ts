// CNI configuration of a real node: its conf dir (what containerd loads) and bin dir (copies of Debian's plugins
// plus istio-cni), both per node so a scenario can change one node's chain or binaries without touching the other.
// containerd watches the conf dir and reloads on change; writes are atomic (temp file + rename), like a CNI
// installer's, so containerd never reads half a file.
import { chmodSync, copyFileSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { kubeconfig, type CertificateAuthority } from '../../e2e/harness/pki.ts';
import type { RealNodeBinaries } from './binaries.ts';
import { linkerdCniPlugin, prepareLinkerdCni } from './linkerd-cni.ts';
import { ambientPluginConf } from '../../meshbin/istio-ambient.ts';

/** cniVersion of the conflists: bridge/host-local/portmap 1.1.1 and istio-cni 1.27 all support it. */
export const CNI_VERSION = '0.3.1';
/** The conflist file every node starts with; sorts first, so with max_conf_num 1 it is the one loaded. */
export const CONFLIST_NAME = '10-meshgate-e2e.conflist';

export interface CniNodeLayout {
  confDir: string;
  binDir: string;
  /** host-local's IPAM state. */
  ipamDir: string;
  /** istio-cni's cni_agent_run_dir: its kubeconfig and log live here. */
  istioDir: string;
  /** The node's pod bridge device (e.g. mg-rn-1) and subnet (e.g. 10.244.1.0/24). */
  bridge: string;
  subnet: string;
  /** Whose CNI plugin is the node's mesh plugin; default istio (istio-cni). linkerd: linkerd-cni (linkerd-cni.ts). */
  mesh?: TierMesh;
  /** Istio ambient (the istio-ambient line): istio-cni chained with ambient_enabled and the enablement selectors. */
  ambient?: boolean;
}

/** The meshes the tier runs: their injector, their CNI plugin and their proxy stand-in. */
export type TierMesh = 'istio' | 'linkerd';

export type PluginConf = Record<string, unknown> & { type: string };

/** The interface plugin: a bridge per node with host-local IPAM; pods' default route points at the bridge. */
export function bridgePlugin(l: CniNodeLayout): PluginConf {
  return {
    type: 'bridge',
    bridge: l.bridge,
    isGateway: true,
    // No masquerade: nothing is reachable past the namespace anyway, and no rules outside the pod's own netns.
    ipMasq: false,
    ipam: { type: 'host-local', ranges: [[{ subnet: l.subnet }]], routes: [{ dst: '0.0.0.0/0' }], dataDir: l.ipamDir },
  };
}

export const portmapPlugin = (): PluginConf => ({ type: 'portmap', capabilities: { portMappings: true } });

/**
 * istio-cni in sidecar mode (ambient off): it reads its kubeconfig from cni_agent_run_dir, fetches the pod and,
 * if it has an istio-proxy container, the sidecar.istio.io/status annotation and no istio-init, writes the
 * redirect rules into the pod's netns itself (no node agent needed).
 */
export function istioCniPlugin(l: CniNodeLayout): PluginConf {
  return {
    type: 'istio-cni',
    cni_agent_run_dir: l.istioDir,
    plugin_log_level: 'debug',
    ambient_enabled: false,
    exclude_namespaces: ['kube-system'],
  };
}

/** The node's mesh plugin as its installer chains it: istio-cni, or linkerd-cni (linkerd-cni.ts). */
export function meshPlugin(l: CniNodeLayout): PluginConf {
  if (l.mesh === 'linkerd') return linkerdCniPlugin(l);
  return l.ambient ? ambientPluginConf(l.istioDir) : istioCniPlugin(l);
}

/** The standard chains: rn-1 style (with the mesh plugin) and rn-2 style (without). */
export function standardChain(l: CniNodeLayout, withMesh: boolean): PluginConf[] {
  return withMesh ? [bridgePlugin(l), portmapPlugin(), meshPlugin(l)] : [bridgePlugin(l), portmapPlugin()];
}

/** Writes `<confDir>/<file>` atomically. `plugins` null removes the file. */
export function writeConflist(l: CniNodeLayout, plugins: PluginConf[] | null, file = CONFLIST_NAME): string {
  const path = join(l.confDir, file);
  if (plugins === null) {
    rmSync(path, { force: true });
    return path;
  }
  const tmp = join(l.confDir, `.${file}.tmp`);
  writeFileSync(tmp, `${JSON.stringify({ cniVersion: CNI_VERSION, name: 'meshgate-e2e', plugins }, null, 2)}\n`);
  renameSync(tmp, path);
  return path;
}

/**
 * Creates the node's CNI dirs, copies the plugin binaries (bridge, host-local, loopback, portmap, istio-cni) into
 * its own bin dir, and writes istio-cni's kubeconfig: a client certificate for the user `meshgate-e2e:istio-cni`,
 * which the cluster grants get/list/watch on pods and namespaces (see grantIstioCni in cluster.ts).
 */
export function prepareCni(l: CniNodeLayout, bins: RealNodeBinaries, server: string, ca: CertificateAuthority): void {
  for (const d of [l.confDir, l.binDir, l.ipamDir, l.istioDir]) mkdirSync(d, { recursive: true });
  const plugins = { ...bins.cniPlugins, 'istio-cni': bins.istioCni };
  for (const [name, src] of Object.entries(plugins)) {
    copyFileSync(src, join(l.binDir, name));
    chmodSync(join(l.binDir, name), 0o755);
  }
  const client = ca.issue({ commonName: ISTIO_CNI_USER, usage: 'client' });
  writeFileSync(join(l.istioDir, 'istio-cni-kubeconfig'), kubeconfig(server, ca.certPem, client, 'istio-cni'), {
    mode: 0o600,
  });
  if (l.mesh === 'linkerd') prepareLinkerdCni(l, server, ca);
}

/** The user istio-cni authenticates as (see prepareCni). */
export const ISTIO_CNI_USER = 'meshgate-e2e:istio-cni';
