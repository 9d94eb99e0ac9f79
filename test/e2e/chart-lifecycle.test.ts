// The chart's life on a real apiserver, with meshgate's real webhook answering through the chart's own Service-based
// configurations (the apiserver resolves the Service and dials its ClusterIP through an egress proxy of this test
// that pipes to the webhook on loopback: harness/egress.ts):
//   1. install the previous chart (PREVIOUS_CHART, from git) and let meshgate make what it makes at run time, each
//      part as the component's own service account with meshgate's own code: the webhook its TLS Secret and caBundle
//      (and, after the upgrade, the admission mark's Secret), the node agents their verdicts (label, evidence,
//      condition, taint), the repair controller its Lease and a quarantine, the webhook a DaemonSet pod pinned
//      Pending to verified nodes;
//   2. `helm upgrade` to this chart under a steady stream of pod creates, then move the Service to a webhook started
//      as the new chart runs it (a rolling update's endpoint switch): no create may be refused;
//   3. `helm uninstall`: its post-delete hook Job runs `meshgate uninstall` (this test runs the Job's container as
//      a kubelet would: its args, a token of its service account bound to its pod) — then nothing of meshgate may
//      be left: no Secret, Lease, ConfigMap, RBAC, policy, webhook configuration, hook object, pod, and no meshgate
//      key on any Node; the pinned DaemonSet pod is recreated without meshgate and runs.
// Rolling the webhook's real pods under load belongs to the real-node tier (docs/real-nodes.md).
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  AdmissionregistrationV1Api,
  AppsV1Api,
  CoordinationV1Api,
  CoreV1Api,
  PatchStrategy,
  RbacAuthorizationV1Api,
  setHeaderOptions,
  type V1Node,
  type V1Pod,
} from '@kubernetes/client-node';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { KubeNodePublisher } from '../../src/agent/kube-publisher.ts';
import { compileConfig } from '../../src/config/compile.ts';
import { buildConfig } from '../../src/config/load.ts';
import { kubeLeaseStore } from '../../src/kube/lease-store.ts';
import { CONDITION_TYPE, EVIDENCE_ANNOTATION, UNVERIFIED_TAINT, VERIFIED_LABEL } from '../../src/contract/node.ts';
import { QUARANTINE_ANNOTATION } from '../../src/node/quarantine.ts';
import { kubeQuarantineApi } from '../../src/repair/quarantine/api.ts';
import { nodeView } from '../../src/repair/quarantine/node-view.ts';
import { type RunningServer, startServer } from '../../src/server/start.ts';
import { chartDir } from '../chart/helm.ts';
import { CUSTOM_REQUIRED } from '../chart/profiles.ts';
import { repoRoot } from './harness/binaries.ts';
import { startEgressProxy, type EgressProxy } from './harness/egress.ts';
import { httpGet } from './harness/net.ts';
import { describeError, startControlPlane, waitFor, type ControlPlane } from './harness/index.ts';
import { impersonate, serviceAccount } from './impersonate.ts';
import { daemonClient } from './daemon-client.ts';
import { testVerdict } from './meshgate.ts';
import { daemonSet, daemonSetReady, UNPRIVILEGED } from './workloads.ts';

/** The chart version users upgrade from: the last commit before this release's work (CHANGELOG.md). */
const PREVIOUS_CHART = { ref: 'fcaa252', version: '0.1.0' };
const NS = 'meshgate';
const APP = 'app';
/** The hook Job's pods go nowhere (no node has this label): this test runs their container itself. */
const HOOK_NODE_SELECTOR = { 'meshgate.test/hook-runner': 'this-test' };
const BIN = join(repoRoot, 'bin', 'meshgate.js');

const VALUES = {
  mesh: 'custom',
  config: CUSTOM_REQUIRED,
  // The repair controller's node rights (and the policy limiting them to withdrawals) come with this.
  repairController: { withdrawVerdicts: true },
};

const sa = (name: string) => serviceAccount(NS, name);
const restricted = { ...UNPRIVILEGED, seccompProfile: { type: 'RuntimeDefault' } };
const appPod = (name: string): V1Pod => ({
  metadata: { name, labels: { app: 'load' } },
  spec: { containers: [{ name: 'app', image: 'registry.example/app:1', securityContext: restricted }] },
});

/** Whatever of meshgate a Node carries, by the contract's names. */
function meshgateKeys(node: V1Node): string[] {
  return [
    ...Object.keys(node.metadata?.labels ?? {}).filter((k) => k.startsWith('meshgate.io/')),
    ...Object.keys(node.metadata?.annotations ?? {}).filter((k) => k.startsWith('meshgate.io/')),
    ...(node.status?.conditions ?? []).filter((c) => c.type === CONDITION_TYPE).map((c) => c.type),
    ...(node.spec?.taints ?? []).filter((t) => t.key.startsWith('meshgate.io/')).map((t) => t.key),
  ];
}

describe('chart lifecycle: previous version → upgrade under load → uninstall leaves nothing', () => {
  let cp: ControlPlane;
  let core: CoreV1Api;
  let egress: EgressProxy;
  let clusterIp = '';
  let backend = 0;
  const webhooks: RunningServer[] = [];
  const tmp = mkdtempSync(join(tmpdir(), 'meshgate-lifecycle-'));
  const valuesFile = (name: string, values: object) => {
    const file = join(tmp, name);
    writeFileSync(file, JSON.stringify(values));
    return file;
  };

  /** meshgate's webhook as the chart's Deployment runs it: its config from the ConfigMap, its service account. */
  async function startWebhook(withMark: boolean): Promise<RunningServer> {
    const cm = await core.readNamespacedConfigMap({ name: 'meshgate', namespace: NS });
    const config = compileConfig(buildConfig(parseYaml(cm.data!['config.yaml']), 'ConfigMap meshgate'));
    const server = await startServer({
      config,
      port: 0,
      host: '127.0.0.1',
      tlsSans: [`meshgate.${NS}.svc`, `meshgate.${NS}.svc.cluster.local`],
      kube: daemonClient(impersonate(cp.kc, sa('meshgate'))),
      certSecret: { namespace: NS, name: 'meshgate-tls' },
      webhookConfigName: 'meshgate',
      markKeys: withMark
        ? { dir: mkdtempSync(join(tmp, 'mark-')), createSecret: { namespace: NS, name: 'meshgate-admission-mark' } }
        : undefined,
      drainSeconds: 1,
      logger: pino({ level: process.env.MESHGATE_E2E_LOG ?? 'warn' }),
    });
    await server.synced;
    webhooks.push(server);
    return server;
  }

  beforeAll(async () => {
    egress = startEgressProxy((host, port) => (host === clusterIp && port === 443 ? backend : undefined));
    cp = await startControlPlane({
      nodes: [{ name: 'node-a' }, { name: 'node-b' }, { name: 'node-c' }],
      apiserverArgs: [egress.apiserverArg],
    });
    core = cp.kc.makeApiClient(CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: NS } } });
    await core.createNamespace({ body: { metadata: { name: APP, labels: { 'meshgate.io/inject': 'enabled' } } } });
    await waitFor(`ServiceAccount ${APP}/default`, () =>
      core.readNamespacedServiceAccount({ name: 'default', namespace: APP }),
    );
  }, 300_000);

  afterAll(async () => {
    for (const w of webhooks) await w.shutdown().catch(() => undefined);
    await cp?.stop();
    await egress?.stop();
    rmSync(tmp, { recursive: true, force: true });
  });

  it(`installs chart ${PREVIOUS_CHART.version} (${PREVIOUS_CHART.ref}); meshgate makes its run-time objects`, async () => {
    const old = mkdtempSync(join(tmp, 'previous-'));
    const archive = spawnSync(
      'sh',
      ['-c', `git -C "$1" archive "$2" charts/meshgate | tar -x -C "$3"`, 'sh', repoRoot, PREVIOUS_CHART.ref, old],
      {
        encoding: 'utf8',
      },
    );
    expect(
      archive.status,
      `git archive ${PREVIOUS_CHART.ref} (a checkout with history is needed): ${archive.stderr}`,
    ).toBe(0);
    const installed = await cp.helm([
      'install',
      'meshgate',
      join(old, 'charts', 'meshgate'),
      '-n',
      NS,
      '-f',
      valuesFile('v0.yaml', VALUES),
    ]);
    expect(installed.code, installed.stderr).toBe(0);
    clusterIp = (await core.readNamespacedService({ name: 'meshgate', namespace: NS })).spec!.clusterIP!;

    // The node agents, each on its own Node (the node-name claim of its pod-bound token).
    const agent = sa('meshgate-node-agent');
    await new KubeNodePublisher(daemonClient(impersonate(cp.kc, agent, 'node-a'))).publish(
      'node-a',
      testVerdict(true),
      false,
    );
    await new KubeNodePublisher(daemonClient(impersonate(cp.kc, agent, 'node-b'))).publish(
      'node-b',
      testVerdict(false),
      false,
    );
    await new KubeNodePublisher(daemonClient(impersonate(cp.kc, agent, 'node-c'))).publish(
      'node-c',
      testVerdict(false),
      true,
    );
    // The repair controller: its Lease, and a quarantine of node-c.
    const repair = daemonClient(impersonate(cp.kc, sa('meshgate-repair-controller')));
    await kubeLeaseStore(repair, NS, 'meshgate-repair-controller').create({
      holderIdentity: 'meshgate-repair-controller-0',
      leaseDurationSeconds: 15,
      acquireTime: Date.now(),
      renewTime: Date.now(),
      leaseTransitions: 0,
    });
    const quarantine = kubeQuarantineApi(repair, {} as never, {} as never);
    const now = new Date().toISOString();
    await quarantine.withdraw(
      nodeView(await core.readNode({ name: 'node-c' })),
      {
        since: now,
        lastFailureAt: now,
        holdUntil: now,
        hold: 'hold_off',
        level: 0,
        taint: true,
        failureCount: 3,
        failures: [],
      },
      { withdrawals: [Date.now()] },
    );

    // The webhook, as chart 0.1.0 ran it (no admission mark then): its TLS Secret, and the CA in both configurations.
    backend = (await startWebhook(false)).port;
    const admission = cp.kc.makeApiClient(AdmissionregistrationV1Api);
    await waitFor('caBundle in both webhook configurations', async () => {
      const m = await admission.readMutatingWebhookConfiguration({ name: 'meshgate' });
      const v = await admission.readValidatingWebhookConfiguration({ name: 'meshgate' });
      return Boolean(m.webhooks?.[0]?.clientConfig.caBundle && v.webhooks?.[0]?.clientConfig.caBundle);
    });

    // A DaemonSet in an opted-in namespace: node-a's pod runs, node-b's is pinned Pending to verified nodes.
    const apps = cp.kc.makeApiClient(AppsV1Api);
    await apps.createNamespacedDaemonSet({
      namespace: APP,
      body: daemonSet('ds', {
        containers: [{ name: 'app', image: 'registry.example/app:1', securityContext: restricted }],
      }),
    });
    const pinned = await waitFor('the DaemonSet pod of node-b, pinned Pending', async () => {
      const pods = (await core.listNamespacedPod({ namespace: APP, labelSelector: 'app=ds' })).items;
      return pods.find(
        (p) =>
          JSON.stringify(p.spec?.affinity ?? {}).includes(VERIFIED_LABEL) &&
          p.status?.phase === 'Pending' &&
          JSON.stringify(p.spec?.affinity).includes('node-b'),
      );
    });
    expect(pinned.spec?.nodeName).toBeUndefined();
    const nodes = (await core.listNode()).items;
    expect(nodes.map((n) => [n.metadata!.name, meshgateKeys(n).length > 0])).toEqual([
      ['node-a', true],
      ['node-b', true],
      ['node-c', true],
    ]);
    expect(meshgateKeys(nodes[2])).toEqual(
      expect.arrayContaining([
        VERIFIED_LABEL,
        EVIDENCE_ANNOTATION,
        QUARANTINE_ANNOTATION,
        CONDITION_TYPE,
        UNVERIFIED_TAINT.key,
      ]),
    );
  }, 240_000);

  it('helm upgrade to this chart, then the webhook rolled to the new chart’s, with 0 of a steady stream of pod creates refused', async () => {
    // docs/install.md "Upgrading": plain --reuse-values keeps the previous chart's defaults, which lack this chart's
    // keys; the schema refuses it before anything changes.
    const reused = await cp.helm(['upgrade', 'meshgate', chartDir, '-n', NS, '--reuse-values']);
    expect(reused.code).not.toBe(0);
    expect(reused.stderr).toContain("missing properties 'nriPlugin', 'admissionMark', 'enforcement', 'uninstall'");
    const admission = cp.kc.makeApiClient(AdmissionregistrationV1Api);
    const caBefore = (await admission.readMutatingWebhookConfiguration({ name: 'meshgate' })).webhooks![0].clientConfig
      .caBundle;
    const refused: string[] = [];
    let created = 0;
    let stop = false;
    const phases: Record<string, number> = {};
    let phase = 'before';
    const stream = (async () => {
      for (let i = 0; !stop; i++) {
        try {
          await core.createNamespacedPod({ namespace: APP, body: appPod(`load-${i}`) });
          created++;
          phases[phase] = (phases[phase] ?? 0) + 1;
        } catch (err) {
          refused.push(`load-${i} (${phase}): ${describeError(err)}`);
        }
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    const until = (n: number) => waitFor(`${n} pods created`, () => created >= n, { timeoutMs: 60_000 });
    await until(5);
    phase = 'helm upgrade';
    const upgraded = await cp.helm(
      [
        'upgrade',
        'meshgate',
        chartDir,
        '-n',
        NS,
        '-f',
        valuesFile('v1.yaml', { ...VALUES, uninstall: { nodeSelector: HOOK_NODE_SELECTOR } }),
      ],
      { timeoutMs: 180_000 },
    );
    phase = 'after upgrade';
    await until(created + 5);
    // The new chart's webhook (it creates the admission mark's Secret under the upgraded RBAC), then the Service
    // moves to it and the old one drains and stops: what a rolling update does to the endpoints.
    phase = 'rollout';
    const next = await startWebhook(true);
    const old = webhooks[0];
    await waitFor(
      'the new webhook ready',
      // As the kubelet probes: without verifying the certificate.
      async () => (await httpGet(`${next.url}/readyz`, { insecure: true })).status === 200,
    );
    backend = next.port;
    await old.shutdown();
    phase = 'after rollout';
    await until(created + 10);
    stop = true;
    await stream;
    console.log(
      `pod creates during the upgrade: ${created} created (${JSON.stringify(phases)}), ${refused.length} refused`,
    );
    expect(upgraded.code, upgraded.stderr).toBe(0);
    expect(refused).toEqual([]);
    for (const p of ['before', 'helm upgrade', 'after upgrade', 'after rollout'])
      expect(phases[p] ?? 0, p).toBeGreaterThan(0);
    // Helm's three-way merge kept the caBundle meshgate wrote (the chart renders none).
    const m = await admission.readMutatingWebhookConfiguration({ name: 'meshgate' });
    expect(m.webhooks![0].clientConfig.caBundle).toBe(caBefore);
    expect(m.metadata!.labels!['helm.sh/chart']).toBe('meshgate-0.2.0');
    await waitFor('the admission mark Secret, made by the new webhook', () =>
      core.readNamespacedSecret({ name: 'meshgate-admission-mark', namespace: NS }),
    );
    // Every call went the way users' calls go: the apiserver dialled the Service's ClusterIP.
    expect(egress.connects.length).toBeGreaterThan(0);
    expect(egress.connects.filter((c) => c.to === 'refused' || !c.target.startsWith(`${clusterIp}:443`))).toEqual([]);
  }, 360_000);

  it('helm uninstall: the post-delete hook runs meshgate uninstall; nothing of meshgate is left', async () => {
    // An admin promoted the app namespace: uninstall keeps that decision and says how to undo it (issue 34 §8).
    await core.patchNamespace(
      { name: APP, body: { metadata: { labels: { 'meshgate.io/enforcement': 'enforce' } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    const uninstalling = cp.helm(['uninstall', 'meshgate', '-n', NS, '--timeout', '4m'], { timeoutMs: 300_000 });
    const hookPod = await waitFor(
      'the uninstall hook Job’s pod',
      async () =>
        (await core.listNamespacedPod({ namespace: NS, labelSelector: 'app.kubernetes.io/component=uninstall' }))
          .items[0],
      { timeoutMs: 120_000 },
    );
    // The webhook's Deployment is gone by now: its pods (this process's server) stop, as the kubelet would stop them.
    for (const w of webhooks) await w.shutdown();
    const c = hookPod.spec!.containers[0];
    const token = await core.createNamespacedServiceAccountToken({
      name: hookPod.spec!.serviceAccountName!,
      namespace: NS,
      body: {
        spec: {
          audiences: [],
          expirationSeconds: 600,
          boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: hookPod.metadata!.name!, uid: hookPod.metadata!.uid! },
        },
      },
    });
    const kubeconfig = join(tmp, 'hook.kubeconfig');
    writeFileSync(
      kubeconfig,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [
          {
            name: 'c',
            cluster: { server: cp.server, 'certificate-authority-data': Buffer.from(cp.ca.certPem).toString('base64') },
          },
        ],
        users: [{ name: 'hook', user: { token: token.status!.token } }],
        contexts: [{ name: 'c', context: { cluster: 'c', user: 'hook' } }],
        'current-context': 'c',
      }),
    );
    const runHook = (extra: string[]) =>
      new Promise<{ code: number | null; out: string }>((resolve) => {
        const child = spawn(process.execPath, [BIN, ...c.args!, ...extra, `--kubeconfig=${kubeconfig}`], {
          env: { PATH: process.env.PATH },
        });
        let out = '';
        child.stdout.on('data', (d) => (out += d));
        child.stderr.on('data', (d) => (out += d));
        child.on('close', (code) => resolve({ code, out }));
      });

    const dry = await runHook(['--dry-run']);
    console.log(dry.out);
    expect(dry.code, dry.out).toBe(0);
    expect(dry.out).toContain(`node node-a: would remove label ${VERIFIED_LABEL}`);
    expect((await core.readNode({ name: 'node-a' })).metadata!.labels![VERIFIED_LABEL]).toBe('true');

    const real = await runHook([]);
    console.log(real.out);
    expect(real.code, real.out).toBe(0);
    expect(real.out).toContain('node node-c: removed');
    expect(real.out).toMatch(
      /pod app\/ds-\w+: deleted \(Pending on meshgate's verified-node affinity; its DaemonSet ds recreates it without\)/,
    );
    expect(real.out).toContain('Secret meshgate/meshgate-tls: deleted (made by meshgate)');
    expect(real.out).toContain('Secret meshgate/meshgate-admission-mark: deleted (made by meshgate)');
    expect(real.out).toContain('Lease meshgate/meshgate-repair-controller: deleted (made by meshgate)');
    expect(real.out).toContain(
      `kept: label meshgate.io/enforcement on 1 namespace(s) (${APP}=enforce): the levels your admins set; a ` +
        `reinstall starts these namespaces at them, not at the default. To start over at the default: kubectl label ` +
        `namespace ${APP} meshgate.io/enforcement-`,
    );
    // The Job's container exited 0: tell the Job controller, as the kubelet would.
    await core.patchNamespacedPodStatus(
      {
        name: hookPod.metadata!.name!,
        namespace: NS,
        body: {
          status: {
            phase: 'Succeeded',
            containerStatuses: [
              {
                name: c.name,
                image: c.image!,
                imageID: '',
                ready: false,
                restartCount: 0,
                state: {
                  terminated: { exitCode: 0, reason: 'Completed', startedAt: new Date(), finishedAt: new Date() },
                },
              },
            ],
          },
        },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    const done = await uninstalling;
    expect(done.code, done.stderr).toBe(0);

    // Nothing of meshgate left, in its namespace or cluster-wide.
    await waitFor(
      'the hook pod gone with its Job',
      async () => (await core.listNamespacedPod({ namespace: NS })).items.length === 0,
      { timeoutMs: 60_000 },
    );
    const rbac = cp.kc.makeApiClient(RbacAuthorizationV1Api);
    const admission = cp.kc.makeApiClient(AdmissionregistrationV1Api);
    const named = (items: Array<{ metadata?: { name?: string } }>) =>
      items.map((i) => i.metadata!.name!).filter((n) => n.startsWith('meshgate'));
    expect({
      secrets: (await core.listNamespacedSecret({ namespace: NS })).items.map((s) => s.metadata!.name),
      configMaps: (await core.listNamespacedConfigMap({ namespace: NS })).items.map((s) => s.metadata!.name),
      serviceAccounts: (await core.listNamespacedServiceAccount({ namespace: NS })).items.map((s) => s.metadata!.name),
      services: (await core.listNamespacedService({ namespace: NS })).items.map((s) => s.metadata!.name),
      leases: (await cp.kc.makeApiClient(CoordinationV1Api).listNamespacedLease({ namespace: NS })).items.map(
        (s) => s.metadata!.name,
      ),
      jobs: (await cp.kubectl(['get', 'jobs', '-n', NS, '-o', 'name'])).stdout.trim(),
      roles: (await rbac.listNamespacedRole({ namespace: NS })).items.map((s) => s.metadata!.name),
      roleBindings: (await rbac.listNamespacedRoleBinding({ namespace: NS })).items.map((s) => s.metadata!.name),
      clusterRoles: named((await rbac.listClusterRole()).items),
      clusterRoleBindings: named((await rbac.listClusterRoleBinding()).items),
      policies: (await admission.listValidatingAdmissionPolicy()).items.map((s) => s.metadata!.name),
      policyBindings: (await admission.listValidatingAdmissionPolicyBinding()).items.map((s) => s.metadata!.name),
      mutating: named((await admission.listMutatingWebhookConfiguration()).items),
      validating: named((await admission.listValidatingWebhookConfiguration()).items),
      nodeKeys: (await core.listNode()).items.flatMap(meshgateKeys),
    }).toEqual({
      secrets: [],
      configMaps: ['kube-root-ca.crt'],
      serviceAccounts: ['default'],
      services: [],
      leases: [],
      jobs: '',
      roles: [],
      roleBindings: [],
      clusterRoles: [],
      clusterRoleBindings: [],
      policies: [],
      policyBindings: [],
      mutating: [],
      validating: [],
      nodeKeys: [],
    });
    // The DaemonSet, recreated without meshgate, runs on every node (node-c's taint is gone too).
    const apps = cp.kc.makeApiClient(AppsV1Api);
    await daemonSetReady(apps, APP, 'ds', 3, { timeoutMs: 60_000 });

    // Idempotent: once more, as the admin, it finds nothing.
    const again = spawnSync(process.execPath, [BIN, 'uninstall', '-n', NS, `--kubeconfig=${cp.kubeconfigPath}`], {
      encoding: 'utf8',
    });
    expect(again.status, again.stdout + again.stderr).toBe(0);
    expect(again.stdout).toContain('nothing of meshgate was left to remove; left on purpose');
    expect((await core.readNamespace({ name: APP })).metadata!.labels!['meshgate.io/enforcement']).toBe('enforce');
    // Asked to, it removes the levels too, so a reinstall starts every namespace at the default.
    const levels = spawnSync(
      process.execPath,
      [BIN, 'uninstall', '-n', NS, '--remove-enforcement-labels', `--kubeconfig=${cp.kubeconfigPath}`],
      { encoding: 'utf8' },
    );
    expect(levels.status, levels.stdout + levels.stderr).toBe(0);
    expect(levels.stdout).toContain(`namespace ${APP}: removed label meshgate.io/enforcement=enforce`);
    expect((await core.readNamespace({ name: APP })).metadata!.labels!['meshgate.io/enforcement']).toBeUndefined();
  }, 420_000);
});
