// Istio's own sidecar injector (istio.io/istio 1.27.0, built by scripts/build-istio.sh) next to a harness control
// plane, as the reference meshgate is compared with:
//   const istio = await startIstioInjector(cp);          // renders the istio-discovery chart, starts the webhook
//   await istio.register();                             // the chart's MutatingWebhookConfiguration, pointed at it
//   ... pods in namespaces labelled istio-injection=enabled get istio-init + istio-proxy ...
//   await istio.stop();                                 // deregisters and stops it
// The chart is rendered at test time with the control plane's helm, so each test can choose hub/tag/values (the
// real-node tier points hub/tag at locally built images); nothing rendered is committed.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { stringify } from 'yaml';
import type { V1MutatingWebhookConfiguration } from '@kubernetes/client-node';
import { buildCacheDir, buildCacheKey, repoRoot } from '../../support/build-cache.ts';
import type { ControlPlane } from './controlplane.ts';
import { awaitInjectorReady, type InjectorRegistration, injectorRegistration, renderMeshChart } from './injector.ts';
import { freePort, httpGet } from './net.ts';
import * as procs from './procs.ts';

export interface IstioManifest {
  istioRelease: string;
  istioModuleVersion: string;
  istioCommit: string;
  goVersion: string;
  binDir: string;
  discoveryChart: string;
  /** The istio/gateway chart of the same module. */
  gatewayChart: string;
  /** Seconds each binary took in the build that filled this dir (null: it was already there). */
  buildSeconds: Record<string, number | null>;
  builtAt: string;
}

export type IstioBinaryName = 'istio-injector' | 'istio-cni' | 'install-cni' | 'istio-iptables';

export interface IstioBinaries {
  dir: string;
  manifest: IstioManifest;
  bin(name: IstioBinaryName): string;
}

const MODULE = 'test/istio';

/** scripts/build-istio.sh's key inputs, in its order: go.mod, go.sum, cmd/**\/*.go sorted, the script. */
function istioKeyInputs(root: string): string[] {
  const goFiles = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? goFiles(join(dir, e.name)) : e.name.endsWith('.go') ? [join(dir, e.name)] : [],
    );
  const mod = join(root, MODULE);
  const sources = goFiles(join(mod, 'cmd'))
    .map((f) => relative(mod, f))
    .sort(); // byte order, like `LC_ALL=C sort`
  return [
    join(mod, 'go.mod'),
    join(mod, 'go.sum'),
    ...sources.map((s) => join(mod, s)),
    join(root, 'scripts/build-istio.sh'),
  ];
}

/** Same key as scripts/build-istio.sh. */
export function istioCacheKey(root = repoRoot): string {
  return buildCacheKey(istioKeyInputs(root), root);
}

/** Locates the finished build; MESHGATE_ISTIO_DIR overrides the computed dir, MESHGATE_CACHE moves the cache root. */
export function findIstioBinaries(): IstioBinaries {
  const dir = process.env.MESHGATE_ISTIO_DIR || buildCacheDir('istio', istioKeyInputs(repoRoot));
  if (!existsSync(join(dir, '.complete'))) {
    throw new Error(
      `Istio binaries are not built: ${dir}/.complete is missing. Run \`bash scripts/build-istio.sh\` ` +
        '(npm test does it via scripts/bootstrap.mjs; a cold build takes several minutes on 2 cores).',
    );
  }
  const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as IstioManifest;
  return { dir, manifest, bin: (name) => join(manifest.binDir, name) };
}

export interface RenderOptions {
  /** global.hub; default docker.io/istio (test/istio/values.yaml). */
  hub?: string;
  /** global.tag; default 1.27.0. */
  tag?: string;
  /** More chart values, applied last (helm merges maps, so only what is named changes). */
  values?: Record<string, unknown>;
}

/** What istiod would be given by the rendered chart. */
export interface RenderedIstiod {
  /** ConfigMap istio-sidecar-injector, key `config`: injection policy and templates. */
  injectorConfig: string;
  /** ConfigMap istio-sidecar-injector, key `values`: the chart values the templates read. */
  injectorValues: string;
  /** ConfigMap istio, key `mesh`: the MeshConfig. */
  mesh: string;
  /** MutatingWebhookConfiguration istio-sidecar-injector as the chart renders it (service clientConfig). */
  webhookConfiguration: V1MutatingWebhookConfiguration;
}

/** Renders the module's istio-discovery chart with the control plane's helm (test/istio/values.yaml, then opts). */
export async function renderIstioDiscovery(
  cp: ControlPlane,
  opts: RenderOptions = {},
  workDir = cp.dir,
): Promise<RenderedIstiod> {
  const chart = findIstioBinaries().manifest.discoveryChart;
  const overrides = join(mkdtempSync(join(workDir, 'istio-values-')), 'overrides.yaml');
  const global: Record<string, string> = {};
  if (opts.hub) global.hub = opts.hub;
  if (opts.tag) global.tag = opts.tag;
  writeFileSync(
    overrides,
    stringify({ ...opts.values, global: { ...(opts.values?.global as object | undefined), ...global } }),
  );
  const { data, webhook } = await renderMeshChart(cp, chart, [
    ...['istiod', chart, '--namespace', 'istio-system'],
    ...['-f', join(repoRoot, MODULE, 'values.yaml'), '-f', overrides],
  ]);
  return {
    injectorConfig: data('istio-sidecar-injector', 'config'),
    injectorValues: data('istio-sidecar-injector', 'values'),
    mesh: data('istio', 'mesh'),
    webhookConfiguration: webhook('istio-sidecar-injector'),
  };
}

export interface IstioInjectorOptions extends RenderOptions {
  /** Istio log level of every scope; default 'info' like istiod (one line per injection, in the log file). */
  logLevel?: 'debug' | 'info' | 'warn' | 'error' | 'none';
  /** Extra environment, e.g. { ENABLE_NATIVE_SIDECARS: 'false' } (Istio's own feature flags). */
  env?: Record<string, string>;
  /** Startup budget; default 60 s (the process is up in well under a second, the informers sync in about one). */
  startTimeoutMs?: number;
}

export interface IstioInjector extends InjectorRegistration {
  /** https://127.0.0.1:<port>/inject */
  url: string;
  /** base64 of the CA that signed the serving certificate (the control plane's CA), for clientConfig.caBundle. */
  caBundle: string;
  caPem: string;
  rendered: RenderedIstiod;
  pid: number;
  /** The injector's log so far. */
  logs(): string;
}

/** Renders the chart, writes istiod's files (inject/config, inject/values, mesh) and serves Istio's webhook. */
export async function startIstioInjector(cp: ControlPlane, opts: IstioInjectorOptions = {}): Promise<IstioInjector> {
  const bins = findIstioBinaries();
  const dir = mkdtempSync(join(cp.dir, 'istio-injector-')); // removed with the control plane's dir
  const rendered = await renderIstioDiscovery(cp, opts, dir);
  // istiod mounts the ConfigMaps as files: /var/lib/istio/inject/{config,values} and /etc/istio/config/mesh.
  const paths = {
    injectDir: join(dir, 'inject'),
    mesh: join(dir, 'mesh'),
    cert: join(dir, 'tls.crt'),
    key: join(dir, 'tls.key'),
  };
  mkdirSync(paths.injectDir);
  writeFileSync(join(paths.injectDir, 'config'), rendered.injectorConfig);
  writeFileSync(join(paths.injectDir, 'values'), rendered.injectorValues);
  writeFileSync(paths.mesh, rendered.mesh);
  const serving = cp.ca.issue({
    commonName: 'istiod.istio-system.svc',
    dnsNames: ['istiod.istio-system.svc'],
    ipAddresses: ['127.0.0.1'],
  });
  writeFileSync(paths.cert, serving.certPem);
  writeFileSync(paths.key, serving.keyPem, { mode: 0o600 });

  const port = await freePort();
  const logPath = join(dir, 'istio-injector.log');
  const proc = procs.startComponent(
    'istio-injector',
    bins.bin('istio-injector'),
    [
      `--listen=127.0.0.1:${port}`,
      `--tls-cert=${paths.cert}`,
      `--tls-key=${paths.key}`,
      `--inject-dir=${paths.injectDir}`,
      `--mesh-config=${paths.mesh}`,
      `--kubeconfig=${cp.kubeconfigPath}`,
      `--log-level=${opts.logLevel ?? 'info'}`,
    ],
    { logPath, pgidFile: join(cp.dir, 'pgids'), env: { ...process.env, ...opts.env }, cwd: dir },
  ); // pgids: the control plane's watchdog list
  const base = `https://127.0.0.1:${port}`;
  const logs = () => procs.tail(logPath, Number.MAX_SAFE_INTEGER);
  await awaitInjectorReady(
    proc,
    'istio-injector /ready',
    logPath,
    async () => (await httpGet(`${base}/ready`, { ca: cp.ca.certPem }).catch(() => ({ status: 0 }))).status === 200,
    opts.startTimeoutMs,
  );
  return {
    url: `${base}/inject`,
    caBundle: Buffer.from(cp.ca.certPem).toString('base64'),
    caPem: cp.ca.certPem,
    rendered,
    pid: proc.pid,
    logs,
    ...injectorRegistration(cp, proc, base, '/inject', () => rendered.webhookConfiguration),
  };
}
