/**
 * The real mesh binaries the bootstrap builds besides Istio's (test/e2e/harness/istio.ts) and the control plane's:
 * Linkerd's CNI plugin, proxy-init, proxy injector and network validator, containerd 2.x, meshgate's own NRI plugin
 * (nri/), and ztunnel. Each part's
 * dir is found by its script's key inputs (test/support/build-cache.ts); a missing build is an error naming the
 * script, never a skip.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildCacheDir, finishedBuild } from '../support/build-cache.ts';

const VENDOR = '../shared/vendor';

/** Each part: its script's key inputs in the script's order, and how long a cold build takes (for the error). */
export const MESH_BUILDS = {
  linkerd: {
    inputs: [
      `${VENDOR}/linkerd2-proxy-init/SOURCE`,
      `${VENDOR}/linkerd2-proxy-init/go.mod`,
      `${VENDOR}/linkerd2-proxy-init/go.sum`,
      `${VENDOR}/linkerd2/SOURCE`,
      `${VENDOR}/linkerd2/go.mod`,
      `${VENDOR}/linkerd2/go.sum`,
      'test/linkerd/injector/go.mod',
      'test/linkerd/injector/go.sum',
      'test/linkerd/injector/main.go',
      'scripts/build-linkerd.sh',
    ],
    cold: 'about 6 minutes cold',
  },
  'linkerd-validator': {
    inputs: [
      `${VENDOR}/linkerd2-proxy-init/SOURCE`,
      `${VENDOR}/linkerd2-proxy-init/Cargo.toml`,
      `${VENDOR}/linkerd2-proxy-init/Cargo.lock`,
      `${VENDOR}/linkerd2-proxy-init/validator/Cargo.toml`,
      'scripts/build-linkerd-validator.sh',
    ],
    cold: 'about 2 minutes cold',
  },
  containerd: {
    inputs: ['test/containerd/go.mod', 'test/containerd/go.sum', 'scripts/build-containerd.sh'],
    cold: 'about 4 minutes cold',
  },
  nri: {
    inputs: [
      'nri/go.mod',
      'nri/go.sum',
      'nri/main.go',
      'nri/policy.go',
      'nri/seccomp.go',
      'nri/print.go',
      'scripts/build-nri.sh',
    ],
    cold: 'about 1 minute cold',
  },
  ztunnel: {
    inputs: [
      `${VENDOR}/ztunnel/SOURCE`,
      `${VENDOR}/ztunnel/Cargo.toml`,
      `${VENDOR}/ztunnel/Cargo.lock`,
      'scripts/build-ztunnel.sh',
    ],
    cold: 'about 10 minutes cold',
  },
} as const;

export type MeshPart = keyof typeof MESH_BUILDS;

/** The binaries of each part (bin/<name> in its dir). */
export interface MeshBinaryNames {
  linkerd: 'linkerd-cni' | 'linkerd2-proxy-init' | 'linkerd-proxy-injector';
  'linkerd-validator': 'linkerd-network-validator';
  containerd: 'containerd' | 'containerd-shim-runc-v2' | 'ctr';
  nri: 'meshgate-nri';
  ztunnel: 'ztunnel';
}

/** The part's cache dir, built or not (what `bash scripts/build-<part>.sh --print-dir` prints). */
export function meshBuildDir(part: MeshPart): string {
  return buildCacheDir(part, MESH_BUILDS[part].inputs);
}

export interface MeshBuild<P extends MeshPart> {
  dir: string;
  /** manifest.json as the script wrote it: versions, commits, buildSeconds. */
  manifest: Record<string, unknown>;
  bin(name: MeshBinaryNames[P]): string;
}

/** The finished build of a part. */
export function findMeshBuild<P extends MeshPart>(part: P): MeshBuild<P> {
  const dir = finishedBuild(part, MESH_BUILDS[part].inputs, `scripts/build-${part}.sh`, MESH_BUILDS[part].cold);
  const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as Record<string, unknown>;
  return { dir, manifest, bin: (name) => join(dir, 'bin', name) };
}
