/**
 * Day one for a platform team (issue 34 §2, §3, §4), on one real kube-apiserver next to Istio's REAL injector
 * (istio.io/istio 1.27.0's pkg/kube/inject), with the chart's own webhook configurations (rendered by real helm,
 * pointed at meshgate's server in this process), its repair controller in this process, kubectl as built by the
 * harness, and the wg-policy PolicyReport CRD as Kyverno's module ships it (scripts/build-policyreport.sh):
 *   §2 audit cannot hurt: at audit meshgate pins and holds nothing (a DaemonSet runs on its unverified node too; the
 *      pod on the verified node is swapped to the validator); with meshgate's server down, then hung, 0 pod creates
 *      are refused and each is delayed at most by the audit entries' budget (figures printed, not asserted); at
 *      enforce the same create is refused (failurePolicy Fail);
 *   §3 `kubectl apply` of a Deployment shows meshgate's refusal (enforce) or warning (warn, audit) with the fix; a
 *      CronJob's template too; pods opting in by their template's labels in an unlabelled namespace too (the chart's
 *      CEL condition on the template); what is fine, or an update that keeps the template, says nothing;
 *   §4 pods admitted at audit are counted once each (meshgate_audited_pods_total), their bindings keep the pod's own
 *      reason, and `kubectl get polr` shows the findings, one result per workload, gone with the workload.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { request } from 'node:https';
import { join } from 'node:path';
import { AppsV1Api, type V1Pod } from '@kubernetes/client-node';
import { stringify } from 'yaml';
import { describe, expect, it } from 'vitest';
import type { Verdict } from '../../src/admission/review.ts';
import type { RunningRepair } from '../../src/repair/run.ts';
import type { RunningServer } from '../../src/server/start.ts';
import { kubeUninstallApi } from '../../src/uninstall/kube-api.ts';
import { waitFor, type ControlPlane } from './harness/index.ts';
import { policyReportCrds } from './harness/policy-report.ts';
import { chartConfig, installChart, serveChart, startConfigRepair } from './harness/suite.ts';
import { startMeshedCluster } from './harness/clusters.ts';
import { apiError, createNamespace, pointChartWebhooksAt, restrictedPod } from './meshgate.ts';
import { scratchDir, shared } from './harness/shared.ts';
import { daemonSet, daemonSetReady, deployment } from './workloads.ts';

const NS = 'meshgate';
/** Namespaces by level: shop at the default (audit), trial at warn, strict at enforce; plain opts pods in by label. */
const SHOP = 'shop';
const TRIAL = 'trial';
const STRICT = 'strict';
const PLAIN = 'plain';
/** The chart's webhook.audit.timeoutSeconds (values.yaml), and the most calls a pod create makes there. */
const AUDIT_TIMEOUT_S = 2;
const CALLS_PER_CREATE = 3;

let server: RunningServer | undefined;
let repair: RunningRepair | undefined;
const reviews: Array<{ route: string; body: unknown; verdict: Verdict }> = [];
/** A pod create's median time with meshgate down (its calls refused at once): the create's own work. */
let createdAlone = 0;

/** An app container running as the proxy's UID, which the redirect exempts: refused on every pod (proxy_identity). */
function asProxy(name: string): V1Pod {
  const p = restrictedPod(name);
  p.spec!.containers[0].securityContext = {
    ...p.spec!.containers[0].securityContext,
    runAsUser: 1337,
    runAsGroup: 1337,
  };
  return p;
}

/** meshgate's server from the chart's ConfigMap, in this process; the chart's webhooks pointed at it. */
async function startMeshgate(cp: ControlPlane): Promise<void> {
  ({ server } = await serveChart(cp, NS, {
    onReview: (route, body, verdict) => void reviews.push({ route, body, verdict }),
  }));
}

function metrics(): Promise<string> {
  return new Promise((resolve, reject) => {
    request(`${server!.url}/metrics`, { ca: server!.ca }, (res) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve(body));
    })
      .on('error', reject)
      .end();
  });
}
/** The sum of a counter's samples whose labels contain every one of `labels`. */
function sample(text: string, name: string, labels: Record<string, string>): number {
  return text
    .split('\n')
    .filter((l) => l.startsWith(`${name}{`) && Object.entries(labels).every(([k, v]) => l.includes(`${k}="${v}"`)))
    .reduce((n, l) => n + Number(l.split(' ').at(-1)), 0);
}

/** `kubectl apply -f` of one manifest written to a file, as a user would. */
async function apply(namespace: string, manifest: object, ...extra: string[]) {
  const file = join(s.work, `${namespace}-${(manifest as { metadata: { name: string } }).metadata.name}.yaml`);
  writeFileSync(file, stringify(manifest));
  const r = await s.cp.kubectl(['apply', '-n', namespace, '-f', file, ...extra]);
  console.log(
    `--- kubectl apply -n ${namespace} -f ${file} ${extra.join(' ')} (exit ${r.code})\n${r.stdout}${r.stderr}`,
  );
  return r;
}

/** Creates `count` pods one after the other; how many were refused and how long each create took. */
async function createPods(namespace: string, prefix: string, count: number) {
  const ms: number[] = [];
  const refused: string[] = [];
  for (let i = 0; i < count; i++) {
    const t0 = performance.now();
    await s.core.createNamespacedPod({ namespace, body: restrictedPod(`${prefix}-${i}`) }).catch((e) => {
      refused.push(apiError(e));
    });
    ms.push(performance.now() - t0);
  }
  return { refused, ms, max: Math.max(...ms), median: [...ms].sort((a, b) => a - b)[Math.floor(ms.length / 2)] };
}

const podsOf = async (namespace: string, app: string) =>
  (await s.core.listNamespacedPod({ namespace, labelSelector: `app=${app}` })).items;

/**
 * The cluster this file's tests share: a verified and an unverified node, Istio's real injector, the PolicyReport CRD,
 * the chart, meshgate's server (restarted by the tests: startMeshgate) and repair controller in this process, and a
 * namespace per level; the server and repair controller stopped first at the end.
 */
const s = shared(async (stopLater) => {
  const work = scratchDir(stopLater, 'meshgate-day-one-');
  const { cp, core, istio } = await startMeshedCluster(stopLater, { 'node-a': true, 'node-b': false });
  stopLater(async () => {
    await repair?.stop();
    await server?.shutdown();
  });
  const apps = cp.kc.makeApiClient(AppsV1Api);
  for (const crd of policyReportCrds()) {
    const r = await cp.kubectl(['create', '-f', crd]);
    expect(r.code, r.stderr).toBe(0);
  }
  await installChart(cp, NS);
  await startMeshgate(cp);
  repair = await startConfigRepair(cp, await chartConfig(cp, NS), mkdtempSync(join(work, 'mark-')));
  await createNamespace(cp, SHOP, { 'istio-injection': 'enabled' });
  await createNamespace(cp, TRIAL, { 'istio-injection': 'enabled', 'meshgate.io/enforcement': 'warn' });
  await createNamespace(cp, STRICT, { 'istio-injection': 'enabled', 'meshgate.io/enforcement': 'enforce' });
  await createNamespace(cp, PLAIN);
  return { cp, core, istio, apps, work };
}, 400_000);

describe('§2 audit cannot hurt', () => {
  it('meshgate up: a DaemonSet runs on both nodes — swapped to the validator on the verified one, unpinned on the other', async () => {
    await s.apps.createNamespacedDaemonSet({ namespace: SHOP, body: daemonSet('agent', restrictedPod('agent').spec) });
    await daemonSetReady(s.apps, SHOP, 'agent', 2, { timeoutMs: 90_000 });
    const byNode = Object.fromEntries((await podsOf(SHOP, 'agent')).map((p) => [p.spec!.nodeName!, p]));
    const inits = (p: V1Pod) => (p.spec!.initContainers ?? []).map((c) => c.name);
    console.log(`DaemonSet at audit: node-a ${inits(byNode['node-a'])}, node-b ${inits(byNode['node-b'])}`);
    // Istio 1.27 injects its proxy as a native sidecar (an init container with restartPolicy Always), after.
    expect(inits(byNode['node-a'])).toEqual(['istio-validation', 'istio-proxy']);
    expect(inits(byNode['node-b'])).toContain('istio-init');
    expect(JSON.stringify(byNode['node-b'].spec!.affinity)).not.toContain('meshgate.io/cni-verified');
    expect(JSON.parse(byNode['node-b'].metadata!.annotations!['meshgate.io/status']).reason).toBe('audit_unpinned');
    // A Deployment's pods are not pinned to verified nodes either: they keep Istio's istio-init.
    await s.apps.createNamespacedDeployment({ namespace: SHOP, body: deployment('web', restrictedPod('web').spec, 2) });
    const web = await waitFor('web running', async () => {
      const pods = (await podsOf(SHOP, 'web')).filter((p) => p.status?.phase === 'Running');
      return pods.length === 2 && pods;
    });
    for (const p of web) {
      expect(JSON.stringify(p.spec!.affinity ?? {})).not.toContain('meshgate.io/cni-verified');
      expect(inits(p)).toContain('istio-init');
    }
  });

  it('meshgate down: 0 pod creates refused at audit, none delayed beyond the budget; at enforce refused', async () => {
    await server!.shutdown();
    server = undefined;
    const budgetMs = CALLS_PER_CREATE * AUDIT_TIMEOUT_S * 1000;
    const down = await createPods(SHOP, 'down', 10);
    console.log(
      `audit, meshgate down (connection refused): ${down.ms.length} creates, ${down.refused.length} refused, ` +
        `median ${down.median.toFixed(0)} ms, max ${down.max.toFixed(0)} ms (budget ${budgetMs} ms)`,
    );
    expect(down.refused).toEqual([]);
    createdAlone = down.median;
    // A Deployment's ReplicaSet creates all its pods: no FailedCreate.
    await s.apps.createNamespacedDeployment({
      namespace: SHOP,
      body: deployment('burst', restrictedPod('burst').spec, 5),
    });
    await waitFor('5 burst pods created', async () => (await podsOf(SHOP, 'burst')).length === 5);
    const failed = (await s.core.listNamespacedEvent({ namespace: SHOP, fieldSelector: 'reason=FailedCreate' })).items;
    expect(failed.map((e) => e.message)).toEqual([]);
    // The DaemonSet rolled while meshgate is down: both pods come back.
    const restarted = await s.cp.kubectl(['-n', SHOP, 'rollout', 'restart', 'ds/agent']);
    expect(restarted.code, restarted.stderr).toBe(0);
    await daemonSetReady(s.apps, SHOP, 'agent', 2, { updated: true, timeoutMs: 90_000 });
    // At enforce the same outage refuses: the validating entries there fail closed.
    const strict = await createPods(STRICT, 'down', 1);
    expect(strict.refused[0]).toMatch(/failed calling webhook "ns-istio-injection\.(mutate|validate)\.meshgate\.io"/);
  });

  it('meshgate hung (accepts, never answers): 0 pod creates refused at audit; each waits at most the budget', async () => {
    const sockets = new Set<Socket>();
    const hung: Server = createServer((s) => {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
    });
    await new Promise<void>((r) => hung.listen(0, '127.0.0.1', r));
    const port = (hung.address() as { port: number }).port;
    // A valid CA bundle (an invalid one fails the call at once): the apiserver connects, then waits.
    await pointChartWebhooksAt(s.cp, `https://127.0.0.1:${port}`, s.cp.ca.certPem);
    const budgetMs = CALLS_PER_CREATE * AUDIT_TIMEOUT_S * 1000;
    try {
      const slow = await createPods(SHOP, 'hung', 3);
      console.log(
        `audit, meshgate hung: ${slow.ms.length} creates, ${slow.refused.length} refused, median ` +
          `${slow.median.toFixed(0)} ms, max ${slow.max.toFixed(0)} ms (budget ${budgetMs} ms: ${CALLS_PER_CREATE} calls ` +
          `x webhook.audit.timeoutSeconds ${AUDIT_TIMEOUT_S} s; beyond it ${(slow.max - budgetMs).toFixed(0)} ms, the ` +
          "create's own work: a create took a median of " +
          `${createdAlone.toFixed(0)} ms with meshgate down)`,
      );
      expect(slow.refused).toEqual([]);
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise((r) => hung.close(r));
      await startMeshgate(s.cp);
    }
  });
});

describe('§3 refusals where people deploy: kubectl apply', () => {
  const legacy = () => deployment('legacy', asProxy('legacy').spec, 3);

  it('enforce refuses the Deployment with the fix; warn and audit warn with it; what is fine says nothing', async () => {
    const refused = await apply(STRICT, legacy());
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain(
      'admission webhook "ns-istio-injection.workloads.meshgate.io" denied the request: meshgate: Deployment ' +
        'strict/legacy: its pods would be refused:',
    );
    expect(refused.stderr).toMatch(
      /; to fix: run the container as a UID and GID other than the proxy's .*\[proxy_identity\]/,
    );
    // A server-side dry run, as CI runs it, gets the same answer.
    expect((await apply(STRICT, legacy(), '--dry-run=server')).stderr).toContain('denied the request: meshgate:');
    for (const [ns, level] of [
      [TRIAL, 'warn'],
      [SHOP, 'audit'],
    ]) {
      const warned = await apply(ns, legacy());
      expect(warned.code, warned.stderr).toBe(0);
      expect(warned.stdout).toContain('deployment.apps/legacy created');
      expect(warned.stderr).toMatch(
        new RegExp(
          `^Warning: meshgate: Deployment ${ns}/legacy: its pods would be refused at enforce \\[proxy_identity\\]: .*; ` +
            `to fix: .*Namespace ${ns} is at ${level}: they are admitted`,
        ),
      );
    }
    const fine = await apply(STRICT, deployment('fine', restrictedPod('fine').spec));
    expect(fine.code, fine.stderr).toBe(0);
    expect(fine.stderr).toBe('');
    // Scaling keeps the template: not judged again, no warning.
    const scaled = await apply(TRIAL, { ...legacy(), spec: { ...legacy().spec, replicas: 2 } });
    expect(scaled.code, scaled.stderr).toBe(0);
    expect(scaled.stderr).toBe('');
  });

  it('a CronJob’s template, and pods opting in by their template’s labels in an unlabelled namespace', async () => {
    const cron = {
      apiVersion: 'batch/v1',
      kind: 'CronJob',
      metadata: { name: 'nightly' },
      spec: {
        schedule: '0 3 * * *',
        jobTemplate: {
          spec: {
            template: {
              metadata: { labels: { app: 'nightly' } },
              spec: { ...restrictedPod('nightly').spec, hostNetwork: true, restartPolicy: 'OnFailure' },
            },
          },
        },
      },
    };
    const refused = await apply(STRICT, cron);
    expect(refused.stderr).toMatch(/denied the request: meshgate: CronJob strict\/nightly: .*\[host_network\]/);
    // plain has no namespace label: istiod injects pods labelled sidecar.istio.io/inject=true there, and so the
    // chart's pod-istio-inject entry sends the templates carrying that label (a CEL condition on the template).
    const optedIn = await apply(
      PLAIN,
      deployment('legacy', asProxy('legacy').spec, 1, { 'sidecar.istio.io/inject': 'true' }),
    );
    expect(optedIn.stderr).toContain(
      'Warning: meshgate: Deployment plain/legacy: its pods would be refused at enforce',
    );
    const other = await apply(PLAIN, deployment('other', asProxy('other').spec));
    expect(other.code, other.stderr).toBe(0);
    expect(other.stderr).toBe('');
  });
});

describe('§4 an audit signal people can trust', () => {
  it('pods counted once each; their bindings keep the pod’s own reason; kubectl get polr shows the findings', async () => {
    const recorded = await waitFor('3 legacy pods in shop admitted with a record, bound', async () => {
      const pods = (await podsOf(SHOP, 'legacy')).filter(
        (p) => p.metadata?.labels?.['meshgate.io/would-deny'] === 'audit' && p.spec?.nodeName,
      );
      return pods.length === 3 && pods;
    });
    await waitFor('plain/legacy’s pod admitted with a record', async () =>
      (await podsOf(PLAIN, 'legacy')).some((p) => p.metadata?.labels?.['meshgate.io/would-deny'] === 'audit'),
    );
    // Since this server started (after §2): shop/legacy's 3 pods and plain/legacy's 1 at audit, trial/legacy's 3 at
    // warn (scaled to 2 since: a pod deleted is not uncounted; the counter counts admissions).
    const text = await metrics();
    const pods = sample(text, 'meshgate_audited_pods_total', { level: 'audit', reason: 'proxy_identity' });
    const warned = sample(text, 'meshgate_audited_pods_total', { level: 'warn', reason: 'proxy_identity' });
    const calls = sample(text, 'meshgate_admission_decisions_total', { decision: 'audit', reason: 'proxy_identity' });
    console.log(
      `4 pods admitted at audit, 3 at warn: meshgate_audited_pods_total audit ${pods}, warn ${warned}; ` +
        `audited calls about them ${calls}`,
    );
    expect(pods).toBe(4);
    expect(warned).toBe(3);
    expect(calls).toBeGreaterThan(4);
    // Every binding of these pods carries the pod's reason, not binding_unmeshed ("has no real mesh proxy").
    const names = new Set(recorded.map((p) => p.metadata!.name));
    const bindings = reviews.filter((r) => {
      const req = (r.body as { request: { subResource?: string; name?: string } }).request;
      return req.subResource === 'binding' && names.has(req.name);
    });
    expect(bindings.map((b) => b.verdict.reason)).toEqual(['proxy_identity', 'proxy_identity', 'proxy_identity']);

    const report = await waitFor(
      'the PolicyReport of shop',
      async () => {
        const r = await s.cp.kubectl(['get', 'polr', 'meshgate', '-n', SHOP, '-o', 'json']);
        if (r.code !== 0) return undefined;
        const polr = JSON.parse(r.stdout) as { results?: Array<Record<string, unknown>> };
        return polr.results?.some((x) => (x.properties as Record<string, string>).pods === '3') && polr;
      },
      { timeoutMs: 90_000 },
    );
    const listed = await s.cp.kubectl(['get', 'polr', '-A']);
    console.log(`--- kubectl get polr -A\n${listed.stdout}`);
    expect(listed.stdout).toMatch(/\nshop\s+meshgate\s+(\S+\s+)?0\s+1\s+0\s+0\s+0\s/);
    expect(listed.stdout).toMatch(/\ntrial\s+meshgate\s/);
    expect(report.results).toEqual([
      expect.objectContaining({
        policy: 'meshgate-audit',
        rule: 'proxy_identity',
        result: 'fail',
        source: 'meshgate',
        resources: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'legacy', namespace: SHOP }],
        message: expect.stringMatching(/^3 pods admitted only because namespace shop is at audit; .*To fix: /),
      }),
    ]);
    // meshgate uninstall finds meshgate's reports by their label, and deletes them (src/uninstall/kube-api.ts).
    const uninstallApi = kubeUninstallApi(s.cp.kc);
    const ours = await waitFor('the reports of shop, trial and plain', async () => {
      const found = await uninstallApi.policyReports('app.kubernetes.io/managed-by=meshgate');
      return found.length === 3 && found;
    });
    expect(ours.map((r) => `${r.metadata?.namespace}/${r.metadata?.name}`).sort()).toEqual([
      'plain/meshgate',
      'shop/meshgate',
      'trial/meshgate',
    ]);
    const trial = ours.find((r) => r.metadata?.namespace === TRIAL)!;
    await uninstallApi.deletePolicyReport(TRIAL, 'meshgate', trial.metadata?.uid);
    expect((await s.cp.kubectl(['get', 'polr', 'meshgate', '-n', TRIAL])).code).not.toBe(0);
    // The workload fixed (here: gone), the report goes with its last finding.
    await s.apps.deleteNamespacedDeployment({ name: 'legacy', namespace: SHOP, propagationPolicy: 'Foreground' });
    await waitFor(
      'the PolicyReport of shop deleted',
      async () => (await s.cp.kubectl(['get', 'polr', 'meshgate', '-n', SHOP])).code !== 0,
      { timeoutMs: 90_000 },
    );
  });
});
