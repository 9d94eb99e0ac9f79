// The chart's production knobs and the node agent's probes against a real kube-apiserver (test/e2e/harness):
// - every object rendered with every knob set (OpenShift security contexts, hostNetwork, topology spread, extras,
//   NetworkPolicies, dashboard, helm test pod) passes server-side dry-run with strict field validation, so no field
//   is misspelt or misplaced; then `helm install` with them succeeds;
// - the real `meshgate node-agent` process with --port: /readyz turns 200 once the Node carries its verdict, /metrics
//   says that verdict, and /readyz turns 503 while the apiserver does not answer (liveness stays 200).
// The Prometheus Operator's CRDs are not installed here: their kinds are checked by test/monitoring/alerts.test.ts.
// `helm test` is not run: kwok only pretends to run pods; the test script itself runs against a real webhook in
// test/chart/helm-test-script.test.ts.
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { CoreV1Api, type V1Node } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chartDir, helmWithValues, parseManifests, templateArgs } from '../chart/helm.ts';
import { profileValues } from '../chart/profiles.ts';
import { ALL_KNOBS } from '../chart/knobs.ts';
import { corpus, nodeDirs, type NodeDirs } from '../cni/helpers.ts';
import { repoRoot } from './harness/binaries.ts';
import { freePort, startControlPlane, waitFor, type ControlPlane } from './harness/index.ts';

const NS = 'meshgate';
const NODE = 'kwok-knobs-0';
let cp: ControlPlane;

beforeAll(async () => {
  cp = await startControlPlane({ nodes: [{ name: NODE }], withScheduler: false });
  await cp.kc.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: NS } } });
}, 300_000);
afterAll(async () => {
  await cp?.stop();
});

describe('the node agent process: probes and metrics', () => {
  let agent: ChildProcess | undefined;
  let dirs: NodeDirs;
  let base: string;
  let log = '';
  afterAll(() => {
    agent?.kill('SIGTERM');
    dirs?.cleanup();
  });

  const get = async (path: string) => {
    const res = await fetch(`${base}${path}`);
    return { status: res.status, body: await res.text() };
  };

  it('ready once the Node carries its verdict, which /metrics reports', async () => {
    dirs = nodeDirs('meshgate-e2e-agent-http-');
    dirs.conf('10-calico.conflist', corpus('istio__10-calico.conflist-istioconfig'));
    for (const b of ['calico', 'portmap', 'istio-cni']) dirs.bin(b);
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    agent = spawn(
      join(repoRoot, 'node_modules', '.bin', 'node'),
      [
        join(repoRoot, 'bin', 'meshgate.js'),
        'node-agent',
        '--mesh',
        'istio',
        '--node-name',
        NODE,
        '--kubeconfig',
        cp.kubeconfigPath,
        '--cni-conf-dir',
        dirs.confDir,
        '--cni-bin-dir',
        dirs.binDir,
        '--port',
        String(port),
        '--host',
        '127.0.0.1',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    agent.stdout!.on('data', (d) => (log += d));
    agent.stderr!.on('data', (d) => (log += d));
    await waitFor(
      'the node agent ready',
      async () => (await get('/readyz').catch(() => ({ status: 0 }))).status === 200,
      { timeoutMs: 60_000, describe: () => log.slice(-2000) },
    );
    const node: V1Node = await cp.kc.makeApiClient(CoreV1Api).readNode({ name: NODE });
    expect(node.status?.conditions?.find((c) => c.type === 'MeshCNIVerified')).toMatchObject({
      status: 'True',
      reason: 'verified',
    });
    const metrics = (await get('/metrics')).body;
    expect(metrics).toContain('meshgate_node_agent_verdict{reason="verified"} 1');
    expect(metrics).toContain('meshgate_node_agent_publishes_total{verified="true"} 1');
    expect(metrics).toMatch(/^process_cpu_seconds_total \d/m);
    expect((await get('/healthz')).status).toBe(200);
  }, 120_000);

  it('not ready while the apiserver does not answer, still alive; ready again after', async () => {
    const apiserver = cp.pids()['kube-apiserver']!;
    process.kill(-apiserver, 'SIGSTOP');
    try {
      // A change of the files makes the agent publish, which now fails (the stopped apiserver accepts no requests).
      dirs.conf('10-calico.conflist', corpus('istio__calico.conflist'));
      // A stopped apiserver accepts connections but never answers: the client's call fails after its own connect
      // timeout (undici: 10 s), or, without one, the check has waited 30 s. Either way: not ready.
      await waitFor('readiness off while the apiserver is stopped', async () => (await get('/readyz')).status === 503, {
        timeoutMs: 90_000,
      });
      expect((await get('/readyz')).body).toMatch(
        /^not ok: (a check has been waiting for \d+ s \(is the apiserver answering\?\)|the last check failed at (read_node|publish): )/,
      );
      expect((await get('/healthz')).status).toBe(200);
    } finally {
      process.kill(-apiserver, 'SIGCONT');
    }
    await waitFor('ready again once the apiserver is back', async () => (await get('/readyz')).status === 200, {
      timeoutMs: 120_000,
      describe: () => log.slice(-2000),
    });
    expect((await get('/metrics')).body).toContain('meshgate_node_agent_verdict{reason="mesh_plugin_missing"} 1');
  }, 300_000);
});

// Last: the release's admission policies then hold the Node to the agent's service account, which the process above
// (admin credentials) is not.
describe('every knob on a real apiserver', () => {
  it('server-side dry-run with strict field validation accepts every rendered object', async () => {
    const res = await helmWithValues(templateArgs({ namespace: NS }), profileValues('istio', ALL_KNOBS));
    expect(res.code, res.stderr).toBe(0);
    const docs = parseManifests(res.stdout).docs;
    expect(docs.map((d) => d.kind)).toEqual(expect.arrayContaining(['NetworkPolicy', 'Pod', 'ConfigMap']));
    const applied = await cp.kubectl(['apply', '--dry-run=server', '--validate=strict', '-f', '-'], {
      input: docs.map((d) => stringify(d)).join('---\n'),
    });
    expect(applied.code, applied.stderr).toBe(0);
    expect(applied.stderr).not.toMatch(/unknown field|duplicate field/);
    expect(applied.stdout.trim().split('\n')).toHaveLength(docs.length);
  });

  it('strict validation does catch a misplaced field (the check above can fail)', async () => {
    const res = await helmWithValues(
      templateArgs({ namespace: NS }),
      profileValues('istio', {
        webhook: {
          extraVolumeMounts: [{ name: 'x', mountPath: '/x', readonlyy: true }],
          extraVolumes: [{ name: 'x', emptyDir: {} }],
        },
      }),
    );
    const dep = parseManifests(res.stdout).one('Deployment', 'meshgate');
    const applied = await cp.kubectl(['apply', '--dry-run=server', '--validate=strict', '-f', '-'], {
      input: stringify(dep),
    });
    expect(applied.code).not.toBe(0);
    expect(applied.stderr).toMatch(
      /strict decoding error: unknown field "spec\.template\.spec\.containers\[0\]\.volumeMounts\[\d+\]\.readonlyy"/,
    );
  });

  it('helm install with every knob', async () => {
    const res = await helmWithValues(
      ['install', 'knobs', chartDir, '--namespace', NS, '--kubeconfig', cp.kubeconfigPath],
      profileValues('istio', ALL_KNOBS),
    );
    expect(res.code, res.stderr).toBe(0);
    const nps = await cp.kubectl(['get', 'networkpolicy', '-n', NS, '-o', 'name']);
    expect(nps.stdout.trim().split('\n').sort()).toEqual([
      'networkpolicy.networking.k8s.io/knobs-meshgate',
      'networkpolicy.networking.k8s.io/knobs-meshgate-repair-controller',
    ]);
    const dep = JSON.parse((await cp.kubectl(['get', 'deployment', 'knobs-meshgate', '-n', NS, '-o', 'json'])).stdout);
    expect(dep.spec.template.spec.hostNetwork).toBe(true);
    expect(dep.spec.template.spec.securityContext.runAsUser).toBeUndefined();
    expect(dep.spec.template.metadata.labels).toMatchObject({ team: 'mesh', tier: 'control' });
  });
});
