// cert-manager v1.21 (github.com/cert-manager/cert-manager, built by scripts/build-cert-manager.sh) next to a harness
// control plane, as a cluster that installs meshgate with certs.mode=cert-manager runs it:
//   const cm = await startCertManager(cp);   // its CRDs, then its controller and CA injector
//   ... Issuers, Certificates and cert-manager.io/inject-ca-from annotations now do what they do in a cluster ...
//   await cm.stop();
// Both run out of cluster with the admin kubeconfig and no leader election (one replica each), inside the test run's
// loopback-only network namespace like every process it starts. cert-manager's own webhook is not run: the CRDs
// have one version and no conversion webhook, so nothing needs it; it would only validate and default the
// resources (the CRDs' schemas still do). The CRDs are rendered from the Helm chart of the same module with the
// control plane's helm (crds.enabled=true), as `helm install cert-manager --set crds.enabled=true` would install them.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildCacheKey, finishedBuild, repoRoot } from '../../support/build-cache.ts';
import type { ControlPlane } from './controlplane.ts';
import * as procs from './procs.ts';
import { waitFor } from './wait.ts';

export interface CertManagerManifest {
  certManagerVersion: string;
  goVersion: string;
  controller: string;
  cainjector: string;
  chartDir: string;
  buildSeconds: number;
  builtAt: string;
}

/** scripts/build-cert-manager.sh's key inputs, in its order. */
const CERT_MANAGER_INPUTS = [
  ...['go.mod', 'go.sum', 'controller/main.go', 'cainjector/main.go', 'internal/command/command.go'].map(
    (f) => `test/cert-manager/${f}`,
  ),
  'scripts/build-cert-manager.sh',
];

/** Same key as scripts/build-cert-manager.sh. */
export function certManagerCacheKey(root = repoRoot): string {
  return buildCacheKey(CERT_MANAGER_INPUTS, root);
}

/** Locates the finished build; MESHGATE_CACHE moves the cache root. */
export function findCertManager(): CertManagerManifest {
  const dir = finishedBuild(
    'cert-manager',
    CERT_MANAGER_INPUTS,
    'scripts/build-cert-manager.sh',
    'a cold build took about 11 min on 2 shared cores',
  );
  return JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as CertManagerManifest;
}

export interface CertManager {
  manifest: CertManagerManifest;
  controller: procs.Component;
  cainjector: procs.Component;
  /** Throws (with the log tail) if either process has exited. */
  assertRunning(): void;
  /** The last lines of both logs, for failure messages. */
  describe(lines?: number): string;
  stop(): Promise<void>;
}

const CRD_TEMPLATES = ['certificaterequests', 'certificates', 'clusterissuers', 'issuers'].map(
  (kind) => `templates/crd-cert-manager.io_${kind}.yaml`,
);

export interface CertManagerOptions {
  /**
   * The CA injector's feature gates. CAInjectorMerging=false makes it replace a caBundle instead of merging new CAs
   * in (kept until they expire): what it did before that gate (alpha in 1.17, beta in 1.19, GA and on in 1.21).
   */
  cainjectorFeatureGates?: Record<string, boolean>;
}

/** Installs cert-manager's CRDs and starts its controller and CA injector against `cp`. */
export async function startCertManager(cp: ControlPlane, o: CertManagerOptions = {}): Promise<CertManager> {
  const manifest = findCertManager();
  const rendered = await cp.helm([
    'template',
    'cert-manager',
    manifest.chartDir,
    '--namespace',
    'cert-manager',
    // helm's default (v1.20) is below the chart's kubeVersion; render for the apiserver that runs.
    '--kube-version',
    cp.versions.kubernetesVersion,
    '--set',
    'crds.enabled=true',
    ...CRD_TEMPLATES.flatMap((t) => ['--show-only', t]),
  ]);
  if (rendered.code !== 0) throw new Error(`helm template of cert-manager's CRDs failed: ${rendered.stderr}`);
  const applied = await cp.kubectl(['apply', '--server-side', '-f', '-'], { input: rendered.stdout });
  if (applied.code !== 0) throw new Error(`applying cert-manager's CRDs failed: ${applied.stderr}`);
  const crds = CRD_TEMPLATES.map(
    (t) => `crd/${t.replace(/^templates\/crd-cert-manager\.io_(.*)\.yaml$/, '$1')}.cert-manager.io`,
  );
  // kubectl wait gives up at once ("accessor error") on a CRD whose status has no conditions yet: asked again.
  let established = await cp.kubectl(['wait', '--for=condition=Established', '--timeout=60s', ...crds]);
  for (let i = 0; i < 10 && established.code !== 0 && established.stderr.includes('accessor error'); i++) {
    await new Promise((r) => setTimeout(r, 1000));
    established = await cp.kubectl(['wait', '--for=condition=Established', '--timeout=60s', ...crds]);
  }
  if (established.code !== 0) throw new Error(`cert-manager's CRDs not established: ${established.stderr}`);

  const start = (name: 'controller' | 'cainjector', args: string[] = []) =>
    procs.startComponent(
      `cert-manager-${name}`,
      manifest[name],
      [`--kubeconfig=${cp.kubeconfigPath}`, '--v=2', ...args],
      { logPath: join(cp.dir, `cert-manager-${name}.log`), pgidFile: join(cp.dir, 'pgids') },
    );
  const gates = Object.entries(o.cainjectorFeatureGates ?? {}).map(([k, v]) => `${k}=${v}`);
  const controller = start('controller');
  const cainjector = start('cainjector', gates.length > 0 ? [`--feature-gates=${gates.join(',')}`] : []);
  const assertRunning = () => {
    procs.assertRunning(controller);
    procs.assertRunning(cainjector);
  };
  const stop = async () => {
    await Promise.all([procs.stopComponent(controller), procs.stopComponent(cainjector)]);
  };
  try {
    // Both log once their informers are started; a crash at startup shows its log tail here.
    for (const [c, line] of [
      [controller, 'starting cert-manager controller'],
      [cainjector, 'Starting Controller'],
    ] as const) {
      await waitFor(
        `${c.name} started`,
        () => {
          assertRunning();
          return readFileSync(c.logPath, 'utf8').includes(line);
        },
        { timeoutMs: 60_000, intervalMs: 250, describe: () => procs.tail(c.logPath, 30) },
      );
    }
  } catch (err) {
    await stop();
    throw err;
  }
  const describe = (lines = 30) =>
    [controller, cainjector].map((c) => `--- ${c.name} (${c.logPath}):\n${procs.tail(c.logPath, lines)}`).join('\n');
  return { manifest, controller, cainjector, assertRunning, describe, stop };
}
