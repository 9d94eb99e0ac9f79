/**
 * `meshgate check` against a real kube-apiserver (test/e2e/harness): meshgate's webhook running in this process
 * and registered by URL on 127.0.0.1, the chart's other objects created by hand under the chart's names (ConfigMap
 * with the config, node agent DaemonSet and repair controller Deployment, whose pods kwok runs on two fake nodes),
 * node verdicts published through the agent's own publisher. A healthy install first, then each failure staged and
 * undone in turn: an unmeshed pod and a workload created before their namespace was opted in, an unverified node, a
 * stale verdict, a verdict for another plugin, a caBundle that does not match the serving certificate, no webhook
 * configurations, and a Service-backed webhook without ready endpoints and with a Secret from another CA. Each run
 * asserts the codes and the exit code and prints the table.
 * Run: npx vitest run test/e2e/check.test.ts (needs the control plane built by scripts/build-controlplane.sh).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import {
  AdmissionregistrationV1Api,
  AppsV1Api,
  CoordinationV1Api,
  CoreV1Api,
  DiscoveryV1Api,
  PatchStrategy,
  setHeaderOptions,
  V1MicroTime,
} from '@kubernetes/client-node';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkCommand } from '../../src/cli/check.ts';
import { memoryIO } from '../../src/cli/io.ts';
import {
  CertificateAuthority,
  freePort,
  startControlPlane,
  waitFor,
  waitForPodsRunning,
  type ControlPlane,
} from './harness/index.ts';
import {
  createNamespace,
  publishVerdict,
  restrictedPod,
  startMeshgate,
  WEBHOOK_NAME,
  type Meshgate,
} from './meshgate.ts';
import { rawConfig } from '../support/config.ts';
import { deployment } from './workloads.ts';
import type { CheckJson } from './meshgate.ts';

const V = 'v1.34.2';
const NS = 'meshgate';
let cp: ControlPlane;
let mg: Meshgate;
let core: CoreV1Api;
let apps: AppsV1Api;
let home: string;
const figures: number[] = [];

type Json = CheckJson;

/** Runs `meshgate check` in-process as a user would; prints the table; returns it with the JSON of a second run. */
async function check(title: string, extra: string[] = []) {
  const args = ['--kubeconfig', cp.kubeconfigPath, '--name', WEBHOOK_NAME, ...extra];
  const env = { HOME: home };
  const table = memoryIO('', env);
  const t0 = performance.now();
  const code = await checkCommand(args, table);
  figures.push(performance.now() - t0);
  console.log(`--- meshgate check: ${title} (exit ${code})\n${table.out}${table.err}`);
  const json = memoryIO('', env);
  const jsonCode = await checkCommand([...args, '-o', 'json'], json);
  expect(json.err).toBe('');
  const report = JSON.parse(json.out) as Json;
  expect(report.exitCode).toBe(jsonCode);
  const status = (c: string) => report.results.find((r) => r.code === c)?.status;
  const items = (c: string) => report.results.find((r) => r.code === c)?.items ?? [];
  return { code, jsonCode, table: table.out, report, status, items };
}

function agentDaemonSet() {
  const labels = { 'app.kubernetes.io/name': 'meshgate', 'app.kubernetes.io/component': 'node-agent' };
  return {
    metadata: { name: `${WEBHOOK_NAME}-node-agent`, namespace: NS },
    spec: {
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          tolerations: [{ operator: 'Exists' }],
          containers: [{ name: 'node-agent', image: 'ghcr.io/meshgate/meshgate:0.1.0' }],
        },
      },
    },
  };
}

const strategic = setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch);
const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'meshgate-check-home-'));
  cp = await startControlPlane({
    nodes: [
      { name: 'node-a', kubeletVersion: V },
      { name: 'node-b', kubeletVersion: V },
    ],
  });
  core = cp.kc.makeApiClient(CoreV1Api);
  apps = cp.kc.makeApiClient(AppsV1Api);
  await publishVerdict(cp, 'node-a', true);
  await publishVerdict(cp, 'node-b', true);
  mg = await startMeshgate(cp);
  await mg.register();
  // The chart's objects: its ConfigMap (the config `check` reads by default), the node agent and the repair controller.
  await createNamespace(cp, NS);
  const config = {
    ...rawConfig('custom'),
    meshNamespace: NS,
    apps: { privileges: 'restricted', baselineNamespaces: [] },
  };
  await core.createNamespacedConfigMap({
    namespace: NS,
    body: { metadata: { name: WEBHOOK_NAME }, data: { 'config.yaml': stringify(config) } },
  });
  await apps.createNamespacedDaemonSet({ namespace: NS, body: agentDaemonSet() as never });
  await apps.createNamespacedDeployment({
    namespace: NS,
    body: deployment(`${WEBHOOK_NAME}-repair-controller`, restrictedPod(`${WEBHOOK_NAME}-repair-controller`).spec),
  });
  await createNamespace(cp, 'shop', { 'meshgate.io/inject': 'enabled' });
  await apps.createNamespacedDeployment({ namespace: 'shop', body: deployment('web', restrictedPod('web').spec, 2) });
  await waitForPodsRunning(cp.kc, 'shop', 'app=web', 2, { timeoutMs: 90_000 });
  await waitFor(
    'node agent DaemonSet ready on both nodes',
    async () =>
      (await apps.readNamespacedDaemonSet({ name: `${WEBHOOK_NAME}-node-agent`, namespace: NS })).status
        ?.numberReady === 2,
    { timeoutMs: 90_000 },
  );
  await waitFor(
    'repair controller ready',
    async () =>
      (await apps.readNamespacedDeployment({ name: `${WEBHOOK_NAME}-repair-controller`, namespace: NS })).status
        ?.readyReplicas === 1,
    { timeoutMs: 90_000 },
  );
}, 300_000);

afterAll(async () => {
  await mg?.stop();
  await cp?.stop();
  if (home) rmSync(home, { recursive: true, force: true });
  if (figures.length)
    console.log(`meshgate check on a 2-node cluster: ${figures.map((ms) => `${ms.toFixed(0)} ms`).join(', ')}`);
});

describe('meshgate check against a real apiserver', () => {
  it('a healthy install: every check passes, exit 0', async () => {
    const r = await check('healthy');
    const bad = r.report.results.filter((x) => x.status !== 'ok');
    expect(bad).toEqual([]);
    expect(r.code).toBe(0);
    expect(r.table).toContain('✔');
    expect(r.table).not.toContain('✖');
    expect(r.items('webhook_endpoints_ready')[0]).toMatchObject({ status: 'ok' });
    expect(r.items('namespaces_opted_in').map((i) => i.name)).toEqual(['shop']);
  });

  it("pods that predate their namespace's opt-in: listed with the command that restarts them, exit 1", async () => {
    await createNamespace(cp, 'legacy');
    await core.createNamespacedPod({ namespace: 'legacy', body: restrictedPod('old') });
    await apps.createNamespacedDeployment({
      namespace: 'legacy',
      body: deployment('legacy-web', restrictedPod('legacy-web').spec, 2),
    });
    await waitForPodsRunning(cp.kc, 'legacy', 'app in (old, legacy-web)', 3, { timeoutMs: 90_000 });
    await core.patchNamespace(
      { name: 'legacy', body: { metadata: { labels: { 'meshgate.io/inject': 'enabled' } } } },
      merge,
    );
    try {
      const r = await check('namespace labelled after its pods were created');
      expect(r.code).toBe(1);
      expect(r.status('pods_redirected')).toBe('fail');
      const items = r.items('pods_redirected').map((i) => ({ name: i.name, reason: i.reason, command: i.command }));
      expect(items.sort((a, b) => a.name.localeCompare(b.name))).toEqual([
        {
          name: 'legacy/deployment/legacy-web',
          reason: 'proxy_missing',
          command: 'kubectl -n legacy rollout restart deployment/legacy-web',
        },
        { name: 'legacy/pod/old', reason: 'proxy_missing', command: 'kubectl -n legacy delete pod old' },
      ]);
      expect(r.table).toContain('run: kubectl -n legacy rollout restart deployment/legacy-web');
      expect(r.status('namespaces_opted_in')).toBe('ok');
      expect(
        r
          .items('namespaces_opted_in')
          .map((i) => i.name)
          .sort(),
      ).toEqual(['legacy', 'shop']);
    } finally {
      await core.patchNamespace(
        { name: 'legacy', body: { metadata: { labels: { 'meshgate.io/inject': null } } } },
        merge,
      );
    }
  });

  it("an unverified node: listed with the agent's reason code, exit 1", async () => {
    await publishVerdict(cp, 'node-b', false);
    try {
      const r = await check('node-b unverified');
      expect(r.code).toBe(1);
      expect(r.status('node_verified')).toBe('fail');
      expect(r.items('node_verified')).toEqual([
        expect.objectContaining({ name: 'node-b', reason: 'mesh_plugin_missing' }),
      ]);
      expect(r.status('node_verdict_fresh')).toBe('ok');
    } finally {
      await publishVerdict(cp, 'node-b', true);
    }
  });

  it('a stale verdict (the agent stopped heartbeating): stale_verdict, exit 1', async () => {
    const old = new Date(Date.now() - 2 * 3600_000).toISOString().replace(/\.\d+Z$/, 'Z');
    await core.patchNodeStatus(
      { name: 'node-a', body: { status: { conditions: [{ type: 'MeshCNIVerified', lastHeartbeatTime: old }] } } },
      strategic,
    );
    try {
      const r = await check('node-a stale');
      expect(r.code).toBe(1);
      expect(r.items('node_verdict_fresh')).toEqual([
        expect.objectContaining({ name: 'node-a', reason: 'stale_verdict', status: 'fail' }),
      ]);
      expect(r.items('node_verified')).toEqual([expect.objectContaining({ name: 'node-a', reason: 'stale_verdict' })]);
    } finally {
      await publishVerdict(cp, 'node-a', true);
    }
  });

  it('a condition heartbeat gone old but the agent’s Lease renewed: fresh (the agent heartbeats on its Lease)', async () => {
    const old = new Date(Date.now() - 2 * 3600_000).toISOString().replace(/\.\d+Z$/, 'Z');
    await core.patchNodeStatus(
      { name: 'node-a', body: { status: { conditions: [{ type: 'MeshCNIVerified', lastHeartbeatTime: old }] } } },
      strategic,
    );
    const leases = cp.kc.makeApiClient(CoordinationV1Api);
    await leases.createNamespacedLease({
      namespace: NS,
      body: {
        metadata: { name: 'meshgate-node-node-a', labels: { 'meshgate.io/node-lease': 'true' } },
        spec: { holderIdentity: 'node-a', renewTime: new V1MicroTime() },
      },
    });
    try {
      const r = await check('node-a heartbeating on its Lease');
      expect(r.code).toBe(0);
      expect(r.status('node_verdict_fresh')).toBe('ok');
      expect(r.status('node_verified')).toBe('ok');
    } finally {
      await leases.deleteNamespacedLease({ namespace: NS, name: 'meshgate-node-node-a' });
      await publishVerdict(cp, 'node-a', true);
    }
  });

  it('a verdict for another mesh CNI plugin: plugin_mismatch, exit 1', async () => {
    await publishVerdict(cp, 'node-a', true, 'linkerd-cni');
    try {
      const r = await check('node-a verified for linkerd-cni');
      expect(r.code).toBe(1);
      expect(r.items('mesh_plugin_consistent')).toEqual([
        expect.objectContaining({ name: 'node-a', reason: 'plugin_mismatch' }),
      ]);
      expect(r.items('node_verified')).toEqual([
        expect.objectContaining({ name: 'node-a', reason: 'plugin_mismatch' }),
      ]);
    } finally {
      await publishVerdict(cp, 'node-a', true);
    }
  });

  it('a caBundle that does not match the serving certificate: ca_mismatch, exit 1', async () => {
    const admission = cp.kc.makeApiClient(AdmissionregistrationV1Api);
    const other = Buffer.from(cp.ca.certPem).toString('base64');
    await admission.patchMutatingWebhookConfiguration(
      { name: WEBHOOK_NAME, body: [{ op: 'replace', path: '/webhooks/0/clientConfig/caBundle', value: other }] },
      setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
    );
    try {
      const r = await check('mutating caBundle from another CA');
      expect(r.code).toBe(1);
      expect(r.status('serving_cert_trusted')).toBe('fail');
      expect(r.items('serving_cert_trusted').filter((i) => i.status === 'fail')).toEqual([
        expect.objectContaining({ name: `mutating ${WEBHOOK_NAME}/inject.meshgate.io`, reason: 'ca_mismatch' }),
      ]);
      expect(r.status('webhook_ca_bundle')).toBe('warn');
    } finally {
      await mg.register();
    }
  });

  it('no webhook configurations: both missing, the checks that need them not run, exit 1', async () => {
    await mg.unregister();
    try {
      const r = await check('webhook configurations deleted');
      expect(r.code).toBe(1);
      expect(r.status('mutating_webhook_present')).toBe('fail');
      expect(r.status('validating_webhook_present')).toBe('fail');
      for (const c of ['webhook_endpoints_ready', 'serving_cert_trusted', 'namespaces_opted_in', 'pods_redirected'])
        expect(r.status(c)).toBe('skip');
    } finally {
      await mg.register();
    }
  });

  it('a Service-backed webhook: no ready endpoint, then one; a Secret from another CA, then the right one', async () => {
    const name = 'svcgate';
    const ca = new CertificateAuthority('check-e2e-ca');
    const stranger = new CertificateAuthority('check-e2e-other-ca');
    const host = `${name}.${NS}.svc`;
    const tls = (issuer: CertificateAuthority) => ({
      'tls.crt': Buffer.from(issuer.issue({ commonName: host, dnsNames: [host] }).certPem).toString('base64'),
    });
    await core.createNamespacedService({
      namespace: NS,
      body: {
        metadata: { name },
        spec: { selector: { app: name }, ports: [{ name: 'https', port: 443, targetPort: 8443 as never }] },
      },
    });
    await core.createNamespacedSecret({
      namespace: NS,
      body: { metadata: { name: `${name}-tls` }, type: 'Opaque', data: tls(stranger) },
    });
    // Selects no namespace: the apiserver never calls this webhook, so nothing dials the fake pod IPs kwok assigns.
    const entry = (path: string) => ({
      name: `${path}.svcgate.meshgate.io`,
      sideEffects: 'None',
      admissionReviewVersions: ['v1'],
      failurePolicy: 'Fail',
      namespaceSelector: { matchLabels: { 'meshgate-check-e2e': 'never' } },
      clientConfig: {
        service: { namespace: NS, name, path: `/${path}`, port: 443 },
        caBundle: Buffer.from(ca.certPem).toString('base64'),
      },
      rules: [
        { operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], scope: 'Namespaced' },
      ],
    });
    const admission = cp.kc.makeApiClient(AdmissionregistrationV1Api);
    await admission.createMutatingWebhookConfiguration({
      body: { metadata: { name }, webhooks: [{ ...entry('mutate'), reinvocationPolicy: 'IfNeeded' }] } as never,
    });
    await admission.createValidatingWebhookConfiguration({
      body: { metadata: { name }, webhooks: [entry('validate')] } as never,
    });
    const flags = ['--webhook-config', name, '--tls-secret', `${name}-tls`];

    const down = await check('Service without endpoints, Secret from another CA', flags);
    expect(down.code).toBe(1);
    expect(down.items('webhook_endpoints_ready')).toEqual([
      expect.objectContaining({ name: `Service ${NS}/${name}`, status: 'fail' }),
    ]);
    expect(down.items('serving_cert_trusted').map((i) => i.reason)).toEqual(['ca_mismatch', 'ca_mismatch']);
    expect(down.status('namespaces_opted_in')).toBe('warn');

    await apps.createNamespacedDeployment({ namespace: NS, body: deployment(name, restrictedPod(name).spec) });
    await core.replaceNamespacedSecret({
      name: `${name}-tls`,
      namespace: NS,
      body: { metadata: { name: `${name}-tls` }, type: 'Opaque', data: tls(ca) },
    });
    await waitFor(
      'an EndpointSlice with a ready endpoint',
      async () => {
        const slices = await cp.kc
          .makeApiClient(DiscoveryV1Api)
          .listNamespacedEndpointSlice({ namespace: NS, labelSelector: `kubernetes.io/service-name=${name}` });
        return slices.items.some((s) => (s.endpoints ?? []).some((e) => e.conditions?.ready));
      },
      { timeoutMs: 90_000 },
    );
    const up = await check("Service with one ready endpoint, Secret from the caBundle's CA", flags);
    expect(up.items('webhook_endpoints_ready')).toEqual([
      expect.objectContaining({ name: `Service ${NS}/${name}`, status: 'warn' }),
    ]);
    expect(up.status('serving_cert_trusted')).toBe('ok');
    expect(up.items('serving_cert_trusted')[0]?.name).toBe(`mutating ${name}/mutate.svcgate.meshgate.io`);
    // 7 days (the harness CA's default) is within the 30-day warning.
    expect(up.status('serving_cert_expiry')).toBe('warn');
  });

  it('through the real binary: exit 0 when healthy; 2 for a bad config, a missing ConfigMap, a usage error, an unreachable apiserver; never a trace', async () => {
    const bin = join(import.meta.dirname, '..', '..', 'bin', 'meshgate.js');
    const meshgate = (args: string[]) =>
      spawnSync(process.execPath, [bin, 'check', ...args], { encoding: 'utf8', env: { HOME: home } });
    const healthy = meshgate(['--kubeconfig', cp.kubeconfigPath, '--name', WEBHOOK_NAME]);
    expect(healthy.stderr).toBe('');
    expect(healthy.status).toBe(0);
    const badConfig = meshgate(['--kubeconfig', cp.kubeconfigPath, '--config', join(home, 'none.yaml')]);
    expect(badConfig.status).toBe(2);
    expect(badConfig.stderr).toMatch(
      /^meshgate check: invalid configuration in .*none.yaml:\n {2}- cannot read: ENOENT/,
    );
    const noConfigMap = meshgate(['--kubeconfig', cp.kubeconfigPath, '--name', 'not-installed']);
    expect(noConfigMap.status).toBe(2);
    expect(noConfigMap.stderr).toBe(
      'meshgate check: ConfigMap meshgate/not-installed not found: pass --config FILE or --mesh NAME, or -n/--name where meshgate is installed\n',
    );
    const usage = meshgate(['--no-such-flag']);
    expect(usage.status).toBe(2);
    expect(usage.stderr).toMatch(/^meshgate check: Unknown option '--no-such-flag'/);
    // A loopback port nothing listens on: the connection is refused at once.
    const closed = join(home, 'closed.kubeconfig');
    writeFileSync(
      closed,
      readFileSync(cp.kubeconfigPath, 'utf8').replace(cp.server, `https://127.0.0.1:${await freePort()}`),
    );
    const down = meshgate(['--kubeconfig', closed]);
    console.log(`unreachable apiserver: exit ${down.status}: ${down.stderr}`);
    expect(down.status).toBe(2);
    expect(down.stdout).toBe('');
    expect(down.stderr).toMatch(
      /^meshgate check: cannot reach the apiserver at https:\/\/127.0.0.1:\d+ \(reading \/version\): .*ECONNREFUSED/,
    );
    expect(down.stderr).not.toMatch(/\n\s+at /);
  }, 120_000);
});
