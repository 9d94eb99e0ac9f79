// Linkerd's own proxy injector (linkerd2 b24cd40's controller/cmd/proxy-injector, built by scripts/build-linkerd.sh)
// next to a harness control plane, as docs/mesh-binaries.md describes:
//   const l5d = await startLinkerdInjector(cp);              // renders linkerd-control-plane, starts the webhook
//   await l5d.register();                                   // the chart's MutatingWebhookConfiguration, pointed at it
//   await l5d.setValues({ cniEnabled: true });              // re-rendered: the injector re-reads it on each request
//   await l5d.stop();
// Its three compiled-in paths (/var/run/linkerd/{tls,config,identity}) are given in its own mount namespace: a tmpfs
// over /run and a bind mount of a dir of ours on /run/linkerd, so the values can change while it runs.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { CoreV1Api, type V1MutatingWebhookConfiguration } from '@kubernetes/client-node';
import { findMeshBuild } from '../../meshbin/binaries.ts';
import { repoRoot } from '../../support/build-cache.ts';
import type { ControlPlane } from './controlplane.ts';
import { awaitInjectorReady, type InjectorRegistration, injectorRegistration, renderMeshChart } from './injector.ts';
import { freePort, httpGet } from './net.ts';
import * as procs from './procs.ts';

const CHARTS = join(repoRoot, '../shared/vendor/linkerd2/charts');

/** What the chart gives the injector: ConfigMap linkerd-config key values, linkerd-identity-trust-roots' bundle. */
export interface RenderedLinkerd {
  values: string;
  trustRoots: string;
  webhookConfiguration: V1MutatingWebhookConfiguration;
}

/** An ECDSA P-256 trust anchor and an issuer (CA:TRUE) under it, as `linkerd install` wants them (openssl). */
function identityPki(dir: string): { ca: string; issuerCrt: string; issuerKey: string } {
  const f = (n: string) => join(dir, n);
  // Kept across re-renders in one dir, as `helm upgrade` keeps a cluster's trust anchors (meshgate learns them from
  // linkerd-identity-trust-roots: a new anchor at every render would be a rotation nobody asked for).
  if (existsSync(f('issuer.crt'))) return { ca: f('ca.crt'), issuerCrt: f('issuer.crt'), issuerKey: f('issuer.key') };
  const ssl = (args: string[]) => execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  const caExt = ['-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign'];
  ssl(['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', f('ca.key')]);
  ssl([
    ...['req', '-x509', '-new', '-key', f('ca.key'), '-subj', '/CN=root.linkerd.cluster.local', '-days', '2'],
    ...caExt,
    ...['-out', f('ca.crt')],
  ]);
  ssl(['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', f('issuer.key')]);
  ssl(['req', '-new', '-key', f('issuer.key'), '-subj', '/CN=identity.linkerd.cluster.local', '-out', f('issuer.csr')]);
  writeFileSync(f('issuer.ext'), 'basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\n');
  ssl([
    ...['x509', '-req', '-in', f('issuer.csr'), '-CA', f('ca.crt'), '-CAkey', f('ca.key'), '-days', '2'],
    ...['-extfile', f('issuer.ext'), '-out', f('issuer.crt')],
  ]);
  return { ca: f('ca.crt'), issuerCrt: f('issuer.crt'), issuerKey: f('issuer.key') };
}

/**
 * Renders the snapshot's linkerd-control-plane chart with the control plane's helm (a copy next to its partials
 * dependency, `helm dependency update` there), with `values` applied last; linkerdVersion is the build's stamp.
 */
export async function renderLinkerdControlPlane(
  cp: ControlPlane,
  values: Record<string, unknown> = {},
  workDir = cp.dir,
): Promise<RenderedLinkerd> {
  const dir = mkdtempSync(join(workDir, 'linkerd-chart-'));
  cpSync(join(CHARTS, 'linkerd-control-plane'), join(dir, 'linkerd-control-plane'), { recursive: true });
  cpSync(join(CHARTS, 'partials'), join(dir, 'partials'), { recursive: true });
  const chart = join(dir, 'linkerd-control-plane');
  const dep = await cp.helm(['dependency', 'update', chart]);
  if (dep.code !== 0) throw new Error(`helm dependency update ${chart} failed (exit ${dep.code}):\n${dep.stderr}`);
  const pki = identityPki(workDir);
  const overrides = join(dir, 'overrides.yaml');
  const version = String(findMeshBuild('linkerd').manifest.linkerdVersion);
  writeFileSync(overrides, stringify({ linkerdVersion: version, ...values }));
  const { data, webhook } = await renderMeshChart(cp, chart, [
    ...['linkerd-control-plane', chart, '--kube-version', '1.34.0', '--namespace', 'linkerd'],
    ...['--set-file', `identityTrustAnchorsPEM=${pki.ca}`, '--set-file', `identity.issuer.tls.crtPEM=${pki.issuerCrt}`],
    ...['--set-file', `identity.issuer.tls.keyPEM=${pki.issuerKey}`, '-f', overrides],
  ]);
  return {
    values: data('linkerd-config', 'values'),
    trustRoots: data('linkerd-identity-trust-roots', 'ca-bundle.crt'),
    webhookConfiguration: webhook('linkerd-proxy-injector-webhook-config'),
  };
}

export interface LinkerdInjector extends InjectorRegistration {
  /** https://127.0.0.1:<port>/ */
  url: string;
  rendered: RenderedLinkerd;
  pid: number;
  logs(): string;
  /** Re-renders the chart with these values (from the chart's defaults) and swaps the file the injector reads. */
  setValues(values: Record<string, unknown>): Promise<void>;
}

/** Renders the chart, lays out /var/run/linkerd in the injector's own mount namespace and serves its webhook. */
export async function startLinkerdInjector(
  cp: ControlPlane,
  values: Record<string, unknown> = {},
  opts: { logLevel?: 'debug' | 'info' | 'warn' | 'error'; env?: Record<string, string> } = {},
): Promise<LinkerdInjector> {
  const bin = findMeshBuild('linkerd').bin('linkerd-proxy-injector');
  const dir = mkdtempSync(join(cp.dir, 'linkerd-injector-')); // removed with the control plane's dir
  const run = join(dir, 'run-linkerd'); // becomes /var/run/linkerd inside its mount namespace
  for (const d of ['tls', 'config', 'identity/trust-roots']) mkdirSync(join(run, d), { recursive: true });
  let rendered = await renderLinkerdControlPlane(cp, values, dir);
  const write = (r: RenderedLinkerd) => {
    writeFileSync(join(run, 'config/values'), r.values);
    writeFileSync(join(run, 'identity/trust-roots/ca-bundle.crt'), r.trustRoots);
  };
  write(rendered);
  // The chart's own serving certificate is for the Service name; the apiserver dials 127.0.0.1 here.
  const serving = cp.ca.issue({
    commonName: 'linkerd-proxy-injector.linkerd.svc',
    dnsNames: ['linkerd-proxy-injector.linkerd.svc'],
    ipAddresses: ['127.0.0.1'],
  });
  writeFileSync(join(run, 'tls/tls.crt'), serving.certPem);
  writeFileSync(join(run, 'tls/tls.key'), serving.keyPem, { mode: 0o600 });

  const port = await freePort();
  const admin = await freePort();
  const logPath = join(dir, 'linkerd-proxy-injector.log');
  const script =
    'mount -t tmpfs tmpfs /run && mkdir /run/linkerd && mount --bind "$1" /run/linkerd && shift && exec "$@"';
  const proc = procs.startComponent(
    'linkerd-proxy-injector',
    'unshare',
    [
      ...['--mount', '--propagation', 'private', 'sh', '-c', script, 'sh', run, bin],
      ...[`-kubeconfig=${cp.kubeconfigPath}`, `-addr=127.0.0.1:${port}`, `-metrics-addr=127.0.0.1:${admin}`],
      `-log-level=${opts.logLevel ?? 'info'}`,
    ],
    { logPath, pgidFile: join(cp.dir, 'pgids'), cwd: dir, env: { ...process.env, ...opts.env } },
  );
  const logs = () => procs.tail(logPath, Number.MAX_SAFE_INTEGER);
  await awaitInjectorReady(
    proc,
    'linkerd-proxy-injector /ready',
    logPath,
    async () => (await httpGet(`http://127.0.0.1:${admin}/ready`).catch(() => ({ status: 0 }))).status === 200,
  );
  const base = `https://127.0.0.1:${port}`;
  return {
    url: `${base}/`,
    get rendered() {
      return rendered;
    },
    pid: proc.pid,
    logs,
    async setValues(v) {
      rendered = await renderLinkerdControlPlane(cp, v, dir);
      write(rendered);
    },
    ...injectorRegistration(cp, proc, base, '/', () => rendered.webhookConfiguration),
  };
}

/**
 * `l5d` installed as Linkerd's chart would for meshgate: registered failing closed (an injector error must fail the
 * test, not let an uninjected pod through), and its control plane's ConfigMaps in namespace linkerd, from which
 * meshgate learns the trust anchors and services the injector writes, trusted because the injector's
 * MutatingWebhookConfiguration names that namespace (src/mesh/installed.ts). Without them every injected proxy would
 * carry anchors meshgate has never seen (impostor_container).
 */
export async function installLinkerd(cp: ControlPlane, l5d: LinkerdInjector): Promise<void> {
  await l5d.register({ failurePolicy: 'Fail' });
  const core = cp.kc.makeApiClient(CoreV1Api);
  await core.createNamespace({ body: { metadata: { name: 'linkerd' } } });
  for (const [name, data] of [
    ['linkerd-config', { values: l5d.rendered.values }],
    ['linkerd-identity-trust-roots', { 'ca-bundle.crt': l5d.rendered.trustRoots }],
  ] as const)
    await core.createNamespacedConfigMap({ namespace: 'linkerd', body: { metadata: { name }, data } });
}
