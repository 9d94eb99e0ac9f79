/**
 * Kyverno (github.com/kyverno/kyverno, cmd/kyverno, built by scripts/build-kyverno.sh) as a benchmark peer: the
 * real admission controller, run out of cluster against the harness control plane (--kubeconfig, --serverIP) with
 * its own CRDs installed, one ClusterPolicy whose mutate rule adds a sidecar and an init container (meshgate's own
 * templates under mesh custom, so both inject the same containers), its certificates made by its own certificate
 * controller, and the chart's default of not emitting PolicyApplied/PolicySkipped events. Pinned like every peer:
 * GOMAXPROCS=1 and every thread on the server CPU. POST /mutate/fail is the path its webhook configuration gives
 * the apiserver for a policy with failurePolicy Fail.
 */
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { CoreV1Api } from '@kubernetes/client-node';
import type { ControlPlane } from '../../test/e2e/harness/index.ts';
import { freePort, waitFor } from '../../test/e2e/harness/index.ts';
import { buildCacheDir } from '../../test/support/build-cache.ts';
import { httpGet } from '../../test/e2e/harness/net.ts';
import * as procs from '../../test/e2e/harness/procs.ts';
import { testConfig } from '../../test/support/config.ts';
import type { Review } from '../corpus.ts';
import { SERVER_CPU } from '../procs.ts';
import type { Peer } from './peers.ts';

export type KyvernoUnavailable = { unavailable: string };

const NAMESPACE = 'kyverno';
const SERVICE = 'kyverno-svc';
const CA_SECRET = `${SERVICE}.${NAMESPACE}.svc.kyverno-tls-ca`;
const TLS_SECRET = `${SERVICE}.${NAMESPACE}.svc.kyverno-tls-pair`;

/** scripts/build-kyverno.sh's dir: its key inputs, in its order (test/support/build-cache.ts). */
export function kyvernoDir(): string {
  return buildCacheDir('kyverno', ['test/kyverno/go.mod', 'test/kyverno/go.sum', 'scripts/build-kyverno.sh']);
}

/** Kyverno reads `$(…)` in a policy as a reference to substitute; Kubernetes' own `$(VAR)` must be escaped `\$(`. */
function escapeReferences(v: unknown): unknown {
  if (typeof v === 'string') return v.replaceAll('$(', '\\$(');
  if (Array.isArray(v)) return v.map(escapeReferences);
  if (typeof v === 'object' && v !== null)
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, escapeReferences(x)]));
  return v;
}

/** The policy: meshgate's proxy as a sidecar and its init container, added to every pod created. */
function sidecarPolicy(): Record<string, unknown> {
  const own = escapeReferences(testConfig('custom').own) as { init: unknown; proxy: unknown };
  return {
    apiVersion: 'kyverno.io/v1',
    kind: 'ClusterPolicy',
    metadata: { name: 'add-sidecar' },
    spec: {
      background: false,
      rules: [
        {
          name: 'add-sidecar',
          match: { any: [{ resources: { kinds: ['Pod'], operations: ['CREATE'] } }] },
          mutate: {
            patchStrategicMerge: {
              metadata: { labels: { 'bench.meshgate.io/sidecar': 'kyverno' } },
              spec: { initContainers: [own.init], containers: [own.proxy] },
            },
          },
        },
      ],
    },
  };
}

export async function kyvernoPeer(
  cp: ControlPlane,
  reviews: Review[],
  log: (s: string) => void,
): Promise<Peer | KyvernoUnavailable> {
  const dir = kyvernoDir();
  if (!existsSync(join(dir, '.complete'))) {
    return {
      unavailable: `not built (${dir}/.complete missing): run \`bash scripts/build-kyverno.sh\` — a cold build took 757 s here, after ~4 min of module downloads`,
    };
  }
  const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as {
    kyvernoVersion: string;
    binary: string;
    crdDir: string;
  };
  const work = mkdtempSync(join(cp.dir, 'kyverno-'));
  const apply = async (file: string, what: string) => {
    const r = await cp.kubectl(['apply', '--server-side', '-f', file]);
    if (r.code !== 0) throw new Error(`kubectl apply ${what} failed: ${r.stderr}`);
  };
  await apply(manifest.crdDir, 'Kyverno CRDs');
  const r = await cp.kubectl(['wait', '--for=condition=Established', '--timeout=60s', 'crd', '--all']);
  if (r.code !== 0) throw new Error(`Kyverno CRDs not established: ${r.stderr}`);
  const objects = [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } },
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'kyverno', namespace: NAMESPACE }, data: {} },
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'kyverno-metrics', namespace: NAMESPACE }, data: {} },
    // Kyverno owns its webhook configurations through its Deployment; none of its pods run here (replicas 0).
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'kyverno', namespace: NAMESPACE },
      spec: {
        replicas: 0,
        selector: { matchLabels: { app: 'kyverno' } },
        template: {
          metadata: { labels: { app: 'kyverno' } },
          spec: { containers: [{ name: 'kyverno', image: `ghcr.io/kyverno/kyverno:${manifest.kyvernoVersion}` }] },
        },
      },
    },
    sidecarPolicy(),
  ];
  const file = join(work, 'objects.yaml');
  writeFileSync(file, objects.map((o) => stringify(o)).join('---\n'));
  await apply(file, 'Kyverno namespace, config and policy');

  const port = await freePort();
  const logPath = join(work, 'kyverno.log');
  const proc = procs.startComponent(
    'kyverno',
    'taskset',
    [
      '-c',
      String(SERVER_CPU),
      manifest.binary,
      `--kubeconfig=${cp.kubeconfigPath}`,
      '--serverIP=127.0.0.1',
      '--webhookServerHost=127.0.0.1',
      `--webhookServerPort=${port}`,
      `--caSecretName=${CA_SECRET}`,
      `--tlsSecretName=${TLS_SECRET}`,
      '--omitEvents=PolicyApplied,PolicySkipped',
      '--disableMetrics',
      '--controllerRuntimeMetricsAddress=0',
      '--v=1',
    ],
    {
      logPath,
      pgidFile: join(cp.dir, 'pgids'),
      cwd: work,
      env: {
        ...process.env,
        GOMAXPROCS: '1',
        KYVERNO_NAMESPACE: NAMESPACE,
        KYVERNO_SERVICEACCOUNT_NAME: 'kyverno-admission-controller',
        KYVERNO_DEPLOYMENT: 'kyverno',
        KYVERNO_POD_NAME: 'kyverno-bench',
        KYVERNO_SVC: SERVICE,
        INIT_CONFIG: 'kyverno',
        METRICS_CONFIG: 'kyverno-metrics',
      },
    },
  );
  const stop = () => procs.stopComponent(proc);
  try {
    const url = `https://127.0.0.1:${port}`;
    // Serving starts once its certificate controller has written the TLS Secret and the policy cache is loaded.
    await waitFor(
      'kyverno /health/liveness',
      async () => {
        procs.assertRunning(proc);
        return (
          (await httpGet(`${url}/health/liveness`, { insecure: true }).catch(() => ({ status: 0 }))).status === 200
        );
      },
      { timeoutMs: 180_000, intervalMs: 1000, describe: () => procs.tail(logPath, 40) },
    );
    const core = cp.kc.makeApiClient(CoreV1Api);
    const caSecret = await core.readNamespacedSecret({ name: CA_SECRET, namespace: NAMESPACE });
    const ca = Buffer.from(caSecret.data?.['tls.crt'] ?? '', 'base64').toString('utf8');
    await waitFor(
      'ClusterPolicy add-sidecar Ready',
      async () => {
        const g = await cp.kubectl([
          'get',
          'clusterpolicy',
          'add-sidecar',
          '-o',
          'jsonpath={.status.conditions[?(@.type=="Ready")].status}',
        ]);
        return g.stdout.trim() === 'True';
      },
      { timeoutMs: 120_000, intervalMs: 1000, describe: () => procs.tail(logPath, 40) },
    );
    log(`kyverno ${manifest.kyvernoVersion}: serving on ${url}, policy add-sidecar Ready (log ${logPath})`);
    return {
      name: 'kyverno',
      what: `Kyverno ${manifest.kyvernoVersion}, ClusterPolicy adding a sidecar, /mutate/fail`,
      url,
      path: '/mutate/fail',
      ca,
      servername: `${SERVICE}.${NAMESPACE}.svc`,
      pid: proc.pid,
      reviews,
      bodies: reviews.map((x) => JSON.stringify(x)),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
