/**
 * Runbooks and the README's rollout, run as pasted (issue 34 §7), on a real kube-apiserver with kwok nodes and the
 * chart installed by the real helm, each line through bash with the real kubectl, helm, jq and meshgate (bin/meshgate.js)
 * on PATH, from a directory where `charts/meshgate` and `meshgate-istio.yaml` are what the README names:
 *   1. the README's rollout, its lines in order (check --pre, install, check --audit, explain, promote, the default);
 *   2. every line of every sh block of docs/runbooks/*.md, the capitalised words (NODE, POD, …) replaced by what this
 *      cluster has; every line of the NOTES helm printed at install.
 * What stands in for what a real cluster has, and why:
 *   - the chart's pods run on kwok nodes (no kubelet, no container): meshgate's webhook, repair controller and the
 *     node agent of node-a run here instead — the webhook and repair controller in this process, as their chart
 *     service accounts, the node agent as `meshgate node-agent` with its service account and a pod-bound token's node
 *     claim — and kwok serves what they log as their pods' logs (ClusterLogs: the same file for both replicas of a
 *     Deployment), so `kubectl logs` goes kubectl → apiserver → kwok's kubelet API for real;
 *   - the apiserver reaches the webhook through the chart's Service as in a cluster, by an egress proxy that maps the
 *     Service's ClusterIP to this process (test/e2e/harness/egress.ts): no packet leaves loopback;
 *   - the kube-controller-manager's node-monitor grace is 15 minutes (see beforeAll);
 *   - some lines need what this cluster lacks; each is run and must fail for exactly that reason: `kubectl top`
 *     (metrics-server), `kubectl describe certificates` (cert-manager's CRDs), the apiserver's pod proxy to /readyz and
 *     the agent's /healthz (kwok's pods have no address the apiserver may dial here); NOTES' `kubectl debug node … -it`
 *     (a kubelet) is not run.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import {
  appendFileSync,
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppsV1Api, CoreV1Api } from '@kubernetes/client-node';
import { parse as parseYaml, stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { corpus, nodeDirs, type NodeDirs } from '../cni/helpers.ts';
import { compileConfig } from '../../src/config/compile.ts';
import { buildConfig } from '../../src/config/load.ts';
import { createLogger } from '../../src/log/logger.ts';
import { startRepair, type RunningRepair } from '../../src/repair/run.ts';
import { startServer, type RunningServer } from '../../src/server/start.ts';
import { chartDir } from '../chart/helm.ts';
import { repoRoot } from './harness/binaries.ts';
import { startEgressProxy, type EgressProxy } from './harness/egress.ts';
import { startControlPlane, waitFor, type ControlPlane } from './harness/index.ts';
import { daemonClient } from './daemon-client.ts';
import { impersonate, NODE_CLAIM } from './impersonate.ts';
import { deployment } from './workloads.ts';

const NS = 'meshgate';
const work = mkdtempSync(join(tmpdir(), 'meshgate-docs-'));
const logs = { webhook: join(work, 'webhook.log'), repair: join(work, 'repair.log'), agent: join(work, 'agent.log') };
const previous = join(work, 'previous.log');
const bin = join(work, 'bin');
const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
const istioGuide = readFileSync(join(repoRoot, 'docs/istio.md'), 'utf8');

let cp: ControlPlane;
let egress: EgressProxy;
let clusterIp = '';
let server: RunningServer | undefined;
let repair: RunningRepair | undefined;
let agent: ChildProcess | undefined;
let dirs: NodeDirs;
let notes = '';
const ran: string[] = [];

/** A line of a log as the kubelet (here kwok) stores it: CRI format, what `kubectl logs` reads back. */
const cri = (file: string) => (text: string) => {
  const lines = text.split('\n').filter(Boolean);
  if (lines.length) appendFileSync(file, lines.map((l) => `${new Date().toISOString()} stdout F ${l}\n`).join(''));
};

/** The sh blocks of a markdown text, as command lines (continuations joined, comments and blank lines dropped). */
function shLines(text: string): string[] {
  return [...text.matchAll(/```sh\n([\s\S]*?)```/g)].flatMap((m) =>
    m[1]
      .replace(/\\\n\s*/g, ' ')
      .split('\n')
      .map((l) => l.replace(/\s+#\s.*$/, '').trim())
      .filter((l) => l && !l.startsWith('#')),
  );
}

/**
 * Runs a documented line with bash, as pasted into a shell (no pipefail: a pipeline's status is its last command's).
 * Asynchronously: the webhook, the repair controller and the egress proxy the apiserver dials through live in this
 * process, and must answer while the line runs.
 */
function sh(line: string): Promise<{ code: number; out: string; err: string }> {
  ran.push(line);
  return new Promise((resolve) => {
    execFile(
      'bash',
      ['-c', line],
      {
        cwd: work,
        timeout: 120_000,
        maxBuffer: 64 << 20,
        env: { ...process.env, PATH: `${bin}:${process.env.PATH}`, KUBECONFIG: cp.kubeconfigPath, HOME: work },
      },
      (err, out, errOut) =>
        resolve({
          code: err ? (typeof err.code === 'number' ? err.code : -1) : 0,
          out: String(out),
          err: String(errOut),
        }),
    );
  });
}

/** What makes a line fail whatever its exit code: an error from kubectl, helm, jq or meshgate on stderr. */
const FAILED = /error|unknown (flag|command|shorthand)|invalid|cannot|not found|unable to/i;

/** A line that works: exit 0 (meshgate check/explain: their answers, not usage errors) and no error on stderr. */
async function works(line: string): Promise<string> {
  const r = await sh(line);
  const answers = line.startsWith('meshgate check') ? [0, 1] : line.startsWith('meshgate explain') ? [0, 3, 4, 5] : [0];
  expect(answers, `${line}\nexit ${r.code}\n${r.err}${r.out.slice(0, 2000)}`).toContain(r.code);
  expect(FAILED.test(r.err) ? r.err : '', line).toBe('');
  return r.out;
}

/** The lines that need what this cluster lacks: the reason they must fail with. */
const LACKS: Array<[RegExp, RegExp]> = [
  // The apiserver's pod proxy dials the pod's address: 127.0.0.1 for kwok's host-network pods, which it refuses
  // ("address not allowed"), or a pod IP no test may reach (the egress proxy refuses it without a dial).
  [
    /^kubectl get --raw "\/api\/v1\/namespaces\/meshgate\/pods\/.*\/proxy\//,
    /address not allowed|error trying to reach service/,
  ],
  [/^kubectl .*\btop pods\b/, /Metrics API not available/],
  [/^kubectl .*describe certificates/, /doesn't have a resource type "certificates"/],
];

/** Capitalised words of the runbooks, by page, and what they are here. */
async function placeholders(page: string): Promise<Record<string, string>> {
  const core = cp.kc.makeApiClient(CoreV1Api);
  const pod = async (component: string, node?: string) =>
    (
      await core.listNamespacedPod({
        namespace: NS,
        labelSelector: `app.kubernetes.io/component=${component}`,
        fieldSelector: node ? `spec.nodeName=${node}` : undefined,
      })
    ).items[0]!.metadata!.name!;
  const rs = (await cp.kc.makeApiClient(AppsV1Api).listNamespacedReplicaSet({ namespace: 'shop' })).items[0]!.metadata!
    .name!;
  const component = /NodeAgent|NodeVerdicts/.test(page)
    ? 'node-agent'
    : /Repair/.test(page)
      ? 'repair-controller'
      : 'webhook';
  return {
    NODE_IP: '127.0.0.1',
    NODE: 'node-a',
    POD: await pod(component, component === 'node-agent' ? 'node-a' : undefined),
    NAMESPACE: 'shop',
    NAME: 'web',
    OWNER: rs,
  };
}

const fill = (line: string, p: Record<string, string>) =>
  Object.entries(p).reduce((l, [k, v]) => l.replace(new RegExp(`\\b${k}\\b`, 'g'), v), line);

beforeAll(async () => {
  for (const f of [...Object.values(logs), previous]) writeFileSync(f, '');
  const logsConfig = join(work, 'kwok-logs.yaml');
  writeFileSync(
    logsConfig,
    stringify({
      apiVersion: 'kwok.x-k8s.io/v1alpha1',
      kind: 'ClusterLogs',
      metadata: { name: 'meshgate' },
      spec: {
        selector: { matchNamespaces: [NS] },
        logs: [
          { containers: ['webhook'], logsFile: logs.webhook, previousLogsFile: previous },
          { containers: ['repair-controller'], logsFile: logs.repair, previousLogsFile: previous },
          { containers: ['node-agent'], logsFile: logs.agent, previousLogsFile: previous },
        ],
      },
    }),
  );
  // Loopback targets (kwok's kubelet API, the pods' host-network ports) as they are; the Service to the webhook.
  egress = startEgressProxy((host, port) =>
    host === '127.0.0.1' ? port : host === clusterIp && port === 443 ? 8443 : undefined,
  );
  cp = await startControlPlane({
    nodes: [
      { name: 'node-a', kubeletVersion: 'v1.34.2' },
      { name: 'node-b', kubeletVersion: 'v1.34.2' },
    ],
    apiserverArgs: [egress.apiserverArg],
    kwokLogs: { configs: [logsConfig] },
    // In this suite the Nodes' Ready heartbeats from kwok stop being taken once the chart is installed (why is not
    // yet known; the other suites end before the grace runs out): without a longer grace the node lifecycle
    // controller marks them unreachable a minute later, and the apiserver then serves no more logs from them.
    controllerManagerArgs: ['--node-monitor-grace-period=15m'],
  });
  mkdirSync(bin);
  for (const tool of ['kubectl', 'helm']) symlinkSync(join(cp.binDir, tool), join(bin, tool));
  writeFileSync(
    join(bin, 'meshgate'),
    `#!/bin/sh\nexec "${join(repoRoot, 'node_modules/.bin/node')}" "${join(repoRoot, 'bin/meshgate.js')}" "$@"\n`,
  );
  chmodSync(join(bin, 'meshgate'), 0o755);
  mkdirSync(join(work, 'charts'));
  symlinkSync(chartDir, join(work, 'charts', 'meshgate'));
  // The guide's values file, as it is.
  const guideValues = /```yaml\n(# meshgate-istio\.yaml:[\s\S]*?)```/.exec(istioGuide)![1];
  writeFileSync(join(work, 'meshgate-istio.yaml'), guideValues);
  writeFileSync(
    join(work, 'pod.yaml'),
    stringify({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p' },
      spec: { containers: [{ name: 'a', image: 'a' }] },
    }),
  );
  // A crashed replica's last words, as `logs --previous` shows them.
  cri(previous)(
    JSON.stringify({
      level: 'fatal',
      time: new Date().toISOString(),
      msg: 'cannot start: config: redirect.mode: must be one of auto, required, off',
    }),
  );
}, 300_000);

afterAll(async () => {
  agent?.kill('SIGTERM');
  await server?.shutdown().catch(() => undefined);
  await repair?.stop().catch(() => undefined);
  await cp?.stop();
  await egress?.stop();
  dirs?.cleanup();
  console.log(`[docs] ${ran.length} documented lines run`);
  rmSync(work, { recursive: true, force: true });
});

/** meshgate's three daemons for the chart just installed, as the chart's pods would run them. */
async function startMeshgate(): Promise<void> {
  const core = cp.kc.makeApiClient(CoreV1Api);
  clusterIp = (await core.readNamespacedService({ name: 'meshgate', namespace: NS })).spec!.clusterIP!;
  const cm = await core.readNamespacedConfigMap({ name: 'meshgate', namespace: NS });
  const config = buildConfig(parseYaml(cm.data!['config.yaml']), `ConfigMap ${NS}/meshgate`);
  const sa = (name: string) => ({ user: `system:serviceaccount:${NS}:${name}`, group: 'system:serviceaccounts' });
  server = await startServer({
    config: compileConfig(config),
    port: 8443,
    host: '127.0.0.1',
    tlsSans: [`meshgate.${NS}.svc`, `meshgate.${NS}.svc.cluster.local`, '127.0.0.1'],
    kube: daemonClient(impersonate(cp.kc, sa('meshgate'))),
    certSecret: { namespace: NS, name: 'meshgate-tls' },
    webhookConfigName: 'meshgate',
    markKeys: {
      dir: mkdtempSync(join(work, 'mark-')),
      createSecret: { namespace: NS, name: 'meshgate-admission-mark' },
    },
    drainSeconds: 0,
    logger: createLogger({ level: 'info' }, { write: cri(logs.webhook) }),
  });
  await server.synced;
  repair = await startRepair({
    kube: daemonClient(impersonate(cp.kc, sa('meshgate-repair-controller'))),
    config,
    maxDeletesPerMinute: 10,
    dryRun: false,
    markKeyDir: mkdtempSync(join(work, 'repair-mark-')),
    // Its Lease, as the chart's Deployment runs it (--lease-name, the pod's name as its identity).
    lease: {
      namespace: NS,
      name: 'meshgate-repair-controller',
      identity: 'meshgate-repair-controller-0',
      leaseDurationMs: 15_000,
      renewDeadlineMs: 10_000,
      retryPeriodMs: 2_000,
    },
    logger: createLogger({ level: 'info' }, { write: cri(logs.repair) }),
  });
  // The node agent of node-a, with its service account and the node claim of a pod-bound token.
  dirs = nodeDirs('meshgate-docs-agent-');
  dirs.conf('10-calico.conflist', corpus('istio__10-calico.conflist-istioconfig'));
  for (const b of ['calico', 'portmap', 'istio-cni']) dirs.bin(b);
  const kubeconfig = parseYaml(readFileSync(cp.kubeconfigPath, 'utf8'));
  for (const u of kubeconfig.users)
    Object.assign(u.user, {
      as: sa('meshgate-node-agent').user,
      'as-groups': ['system:serviceaccounts'],
      'as-user-extra': { [NODE_CLAIM]: ['node-a'] },
    });
  writeFileSync(join(work, 'agent.kubeconfig'), stringify(kubeconfig));
  const args = [
    'node-agent',
    '--mesh',
    'istio',
    '--node-name',
    'node-a',
    '--kubeconfig',
    join(work, 'agent.kubeconfig'),
  ];
  args.push('--cni-conf-dir', dirs.confDir, '--cni-bin-dir', dirs.binDir, '--port', '9477', '--host', '127.0.0.1');
  agent = spawn(join(repoRoot, 'node_modules/.bin/node'), [join(repoRoot, 'bin/meshgate.js'), ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  agent.stdout!.on('data', (d: Buffer) => cri(logs.agent)(d.toString()));
  agent.stderr!.on('data', (d: Buffer) => cri(logs.agent)(d.toString()));
  await waitFor(
    'node-a verified by its agent',
    async () => (await core.readNode({ name: 'node-a' })).metadata?.labels?.['meshgate.io/cni-verified'] === 'true',
    {
      timeoutMs: 60_000,
      describe: () => readFileSync(logs.agent, 'utf8').slice(-2000),
    },
  );
}

describe('the README’s rollout, line by line', () => {
  const section = readme.slice(
    readme.indexOf('## Rollout: audit first, then enforce'),
    readme.indexOf('## The two commands'),
  );
  const path = shLines(section);

  it('runs as printed: preflight, install at audit, check --audit and explain, promote, the default', async () => {
    const install = path.findIndex((l) => l.startsWith('helm install'));
    for (const line of path.slice(0, install)) await works(line);
    notes = await works(path[install]);
    await startMeshgate();
    // A workload in a namespace Istio's label opts in: its pods reach meshgate through the chart's own webhooks.
    const core = cp.kc.makeApiClient(CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: 'shop', labels: { 'istio-injection': 'enabled' } } } });
    await waitFor('shop/default ServiceAccount', () =>
      core.readNamespacedServiceAccount({ name: 'default', namespace: 'shop' }),
    );
    await cp.kc.makeApiClient(AppsV1Api).createNamespacedDeployment({
      namespace: 'shop',
      body: deployment('web', { containers: [{ name: 'web', image: 'registry.example/web:1' }] }),
    });
    await waitFor(
      'a pod of web admitted',
      async () => (await core.listNamespacedPod({ namespace: 'shop' })).items.length > 0,
      { timeoutMs: 60_000 },
    );
    for (const line of path.slice(install + 1)) await works(line);
    expect((await core.readNamespace({ name: 'shop' })).metadata?.labels?.['meshgate.io/enforcement']).toBe('enforce');
    // The upgrade rolled the chart's pods; the runbooks read a settled release, as after `rollout status`.
    for (const d of ['meshgate', 'meshgate-repair-controller'])
      await works(`kubectl -n meshgate rollout status deploy/${d} --timeout=300s`);
    await works('kubectl -n meshgate rollout status ds/meshgate-node-agent --timeout=300s');
  }, 600_000);

  it('kubectl logs reads every replica’s log, served by kwok from this test’s processes', async () => {
    const out = await works('kubectl -n meshgate logs -l app.kubernetes.io/component=webhook --tail=-1');
    const admissions = out.split('\n').filter((l) => l.includes('"msg":"admission"'));
    const inFile = readFileSync(logs.webhook, 'utf8')
      .split('\n')
      .filter((l) => l.includes('"msg":"admission"'));
    // Two replicas, each served the same file: every line twice.
    expect(inFile.length).toBeGreaterThan(0);
    expect(admissions.length).toBe(2 * inFile.length);
    // `logs deploy/…` reads one replica: the runbooks never do that for a workload of more than one.
    const one = await works('kubectl -n meshgate logs deploy/meshgate --tail=-1');
    expect(one.split('\n').filter((l) => l.includes('"msg":"admission"')).length).toBe(inFile.length);
  });
});

describe('docs/runbooks: every line of every page', () => {
  const pages = readdirSync(join(repoRoot, 'docs/runbooks')).filter((f) => f.startsWith('Meshgate'));

  it.each(pages)(
    '%s',
    async (page) => {
      const p = await placeholders(page);
      const lines = shLines(readFileSync(join(repoRoot, 'docs/runbooks', page), 'utf8'));
      expect(lines.length, page).toBeGreaterThan(0);
      for (const raw of lines) {
        const line = fill(raw, p);
        const lacks = LACKS.find(([re]) => re.test(line));
        if (lacks) {
          const r = await sh(line);
          // Its error, whatever the exit code (a trailing `; echo` ends 0).
          expect(r.err, line).toMatch(lacks[1]);
          continue;
        }
        await works(line);
      }
    },
    300_000,
  );
});

describe('the NOTES helm printed', () => {
  it('every command line in it works', async () => {
    expect(notes).toContain('NOTES:');
    const lines = notes
      .replace(/\\\n\s*/g, ' ')
      .split('\n')
      .filter((l) => /^ {5}(kubectl|helm|meshgate) /.test(l))
      .map((l) => l.trim());
    expect(lines.length).toBeGreaterThanOrEqual(5);
    const p = { NAMESPACE: 'shop', NODE: 'node-a', CHART: 'charts/meshgate', NAME: 'web' };
    for (const raw of lines) {
      if (/kubectl debug node\/.* -it/.test(raw)) continue; // needs a kubelet: see the header
      await works(fill(raw, p));
    }
  }, 300_000);
});
