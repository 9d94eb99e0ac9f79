// Finds everything a real node runs: kubelet, pause, the proxy stand-in and S9's app (scripts/build-realnode.sh),
// istio-cni (scripts/build-istio.sh, found by test/e2e/harness/istio.ts), and Debian's containerd, runc, ctr and CNI
// plugins (scripts/bootstrap.mjs installs them). The realnode cache key is computed from its script's inputs
// (test/support/build-cache.ts), so a run always uses binaries built from the tree it runs in; a missing piece is an
// error that says which command builds or installs it.
import { accessSync, constants, existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { findIstioBinaries } from '../../e2e/harness/istio.ts';
import { buildCacheKey, finishedBuild, repoRoot } from '../../support/build-cache.ts';

/** scripts/build-realnode.sh's key inputs, in its order. */
const REALNODE_INPUTS = [
  'test/e2e/controlplane/go.mod',
  'test/e2e/controlplane/go.sum',
  'scripts/build-realnode.sh',
  'test/realnode/images/proxy.c',
  'test/realnode/images/become-proxy.c',
  'test/realnode/cri/go.mod',
  'test/realnode/cri/go.sum',
  'test/realnode/cri/main.go',
  'test/realnode/images/standin.h',
];

/** Same key as scripts/build-realnode.sh. */
export function realNodeCacheKey(root = repoRoot): string {
  return buildCacheKey(REALNODE_INPUTS, root);
}

/** Debian's CNI plugins (containernetworking-plugins) live here, not in /opt/cni/bin. */
export const DEBIAN_CNI_DIR = '/usr/lib/cni';
/** The interface plugins every node's chain uses. */
export const BASE_CNI_PLUGINS = ['bridge', 'host-local', 'loopback', 'portmap'];

export interface RealNodeBinaries {
  kubelet: string;
  pause: string;
  proxy: string;
  /** Scenario S9's app: tries setgid/setuid(1337), then the probe connection (test/realnode/images/become-proxy.c). */
  becomeProxy: string;
  /** The CRI client of the emulation check (test/realnode/cri). */
  cri: string;
  istioCni: string;
  /** Istio's rule generator (istio-init runs it), put into the proxyv2 stand-in image. */
  istioIptables: string;
  containerd: string;
  ctr: string;
  runc: string;
  /** Absolute paths of BASE_CNI_PLUGINS, by name. */
  cniPlugins: Record<string, string>;
  kubernetesVersion: string;
  pauseVersion: string;
}

function onPath(cmd: string, pkg: string): string {
  for (const d of (process.env.PATH ?? '').split(':')) {
    const p = join(d, cmd);
    try {
      accessSync(p, constants.X_OK);
      if (statSync(p).isFile()) return p;
    } catch {
      // not in this dir
    }
  }
  throw new Error(`${cmd} is not on PATH: apt-get install ${pkg} (scripts/bootstrap.mjs does it as root)`);
}

export function findRealNodeBinaries(): RealNodeBinaries {
  const rn = finishedBuild('realnode', REALNODE_INPUTS, 'scripts/build-realnode.sh', 'about 2 minutes cold');
  const manifest = JSON.parse(readFileSync(join(rn, 'manifest.json'), 'utf8')) as {
    kubernetesVersion: string;
    pauseVersion: string;
  };
  const cniPlugins = Object.fromEntries(
    BASE_CNI_PLUGINS.map((p) => {
      const path = join(DEBIAN_CNI_DIR, p);
      if (!existsSync(path))
        throw new Error(`CNI plugin ${path} is missing: apt-get install containernetworking-plugins`);
      return [p, path];
    }),
  );
  onPath('nsenter', 'util-linux');
  onPath('iptables-save', 'iptables');
  return {
    kubelet: join(rn, 'bin/kubelet'),
    pause: join(rn, 'bin/pause'),
    proxy: join(rn, 'bin/meshgate-e2e-proxy'),
    becomeProxy: join(rn, 'bin/meshgate-e2e-become-proxy'),
    cri: join(rn, 'bin/meshgate-e2e-cri'),
    istioCni: findIstioBinaries().bin('istio-cni'),
    istioIptables: findIstioBinaries().bin('istio-iptables'),
    containerd: onPath('containerd', 'containerd'),
    ctr: onPath('ctr', 'containerd'),
    runc: onPath('runc', 'runc'),
    cniPlugins,
    kubernetesVersion: manifest.kubernetesVersion,
    pauseVersion: manifest.pauseVersion,
  };
}
