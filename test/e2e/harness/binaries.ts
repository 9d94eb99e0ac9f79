// Finds the control-plane binaries that scripts/build-controlplane.sh built into the cache outside the repo.
// The cache dir's key is computed from the script's inputs (test/support/build-cache.ts), so a test always uses
// binaries built from the tree it runs in.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildCacheDir, buildCacheKey, repoRoot } from '../../support/build-cache.ts';

export { repoRoot };

export interface ControlPlaneManifest {
  kubernetesVersion: string;
  etcdVersion: string;
  kwokVersion: string;
  helmVersion: string;
  goVersion: string;
  binDir: string;
  kwokStageDir: string;
  builtAt: string;
}

export interface ControlPlaneBinaries {
  /** The cache dir `controlplane-<key>`. */
  dir: string;
  /** Holds etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kubectl, kwok, helm. */
  binDir: string;
  manifest: ControlPlaneManifest;
  /** kwok `--config` files: node stages plus the chosen pod stages ('fast' = straight to Running). */
  kwokStageConfigs(pods: 'fast' | 'general'): string[];
  /** Absolute path of a binary. */
  bin(name: BinaryName): string;
}

export type BinaryName =
  | 'etcd'
  | 'kube-apiserver'
  | 'kube-controller-manager'
  | 'kube-scheduler'
  | 'kubectl'
  | 'kwok'
  | 'helm';

/** scripts/build-controlplane.sh's key inputs, in its order. */
const CONTROLPLANE_INPUTS = [
  'test/e2e/controlplane/go.mod',
  'test/e2e/controlplane/go.sum',
  'scripts/build-controlplane.sh',
];

/** Same key as scripts/build-controlplane.sh. */
export function controlPlaneCacheKey(root = repoRoot): string {
  return buildCacheKey(CONTROLPLANE_INPUTS, root);
}

/**
 * Locates the finished build. MESHGATE_CONTROLPLANE_DIR overrides the computed dir (e.g. to try another build);
 * MESHGATE_CACHE moves the cache root like it does for the script.
 */
export function findControlPlaneBinaries(): ControlPlaneBinaries {
  const dir = process.env.MESHGATE_CONTROLPLANE_DIR || buildCacheDir('controlplane', CONTROLPLANE_INPUTS);
  if (!existsSync(join(dir, '.complete'))) {
    throw new Error(
      `control-plane binaries are not built: ${dir}/.complete is missing. ` +
        `Run \`bash scripts/build-controlplane.sh\` (npm test does it via scripts/bootstrap.mjs; a cold build ` +
        `takes about half an hour on 2 cores).`,
    );
  }
  const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as ControlPlaneManifest;
  const binDir = join(dir, 'bin');
  const stages = join(dir, 'kwok-stages');
  return {
    dir,
    binDir,
    manifest,
    bin: (name) => join(binDir, name),
    kwokStageConfigs: (pods) => {
      const files = [
        'node/node-initialize.yaml',
        'node/node-heartbeat-with-lease.yaml',
        ...(pods === 'fast'
          ? ['pod-fast/pod-ready.yaml', 'pod-fast/pod-complete.yaml', 'pod-fast/pod-delete.yaml']
          : [
              'pod-general/pod-create.yaml',
              'pod-general/pod-init-container-running.yaml',
              'pod-general/pod-init-container-completed.yaml',
              'pod-general/pod-ready.yaml',
              'pod-general/pod-complete.yaml',
              'pod-general/pod-delete.yaml',
            ]),
      ];
      return files.map((f) => join(stages, f));
    },
  };
}
