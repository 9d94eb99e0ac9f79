/**
 * Audit findings as wg-policy PolicyReports (issue 34 §4, src/repair/reports/): one report per namespace, one result
 * per workload, level and reason whatever the replicas, bounded in results and message size, written by the leader
 * only, coalesced, deleted with the last finding, and quiet (one log line, retried later) without the CRD. A small
 * hand-written ReportApi stands in for the apiserver; the real one, with Kyverno's CRD, is in test/e2e/day-one.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { KubeApiError } from '../../src/kube/errors.ts';
import type { PodForRepair } from '../../src/repair/failed/decide.ts';
import { MAX_MESSAGE, MAX_RESULTS, policyReport } from '../../src/repair/reports/report.ts';
import { PolicyReports, type ReportApi, reportedWorkloadOf } from '../../src/repair/reports/reports.ts';

type Written = { op: 'apply' | 'remove'; namespace: string; report?: Record<string, unknown> };

function fakeApi(o: { noCrd?: boolean; existing?: string[] } = {}): ReportApi & { writes: Written[] } {
  const writes: Written[] = [];
  const noCrd = () => new KubeApiError(404, 'NotFound', 'the server could not find the requested resource');
  return {
    writes,
    async apply(namespace, report) {
      if (o.noCrd) throw noCrd();
      writes.push({ op: 'apply', namespace, report });
    },
    async remove(namespace) {
      if (o.noCrd) throw noCrd();
      writes.push({ op: 'remove', namespace });
    },
    async list() {
      if (o.noCrd) throw noCrd();
      return o.existing ?? [];
    },
  };
}

let uid = 0;
/** A Deployment's pod admitted at `level` with a record of `reason`. */
function recorded(
  deployment: string,
  reason = 'proxy_escalation',
  o: { namespace?: string; level?: string; message?: string } = {},
): PodForRepair {
  const hash = '5c9fdd9778';
  return {
    metadata: {
      name: `${deployment}-${hash}-${uid}`,
      namespace: o.namespace ?? 'shop',
      uid: `u${uid++}`,
      labels: { app: deployment, 'pod-template-hash': hash, 'meshgate.io/would-deny': o.level ?? 'audit' },
      annotations: { 'meshgate.io/would-deny': `${reason}: ${o.message ?? 'a container could become the proxy'}` },
      ownerReferences: [{ controller: true, kind: 'ReplicaSet', name: `${deployment}-${hash}` }],
    },
  };
}

const results = (r: Record<string, unknown> | undefined) => (r?.results ?? []) as Array<Record<string, unknown>>;

describe('the PolicyReport of a namespace', () => {
  it('one result per workload and reason, however many pods; the fix in its message; a workload as its resource', async () => {
    const api = fakeApi();
    const reports = new PolicyReports(api, { excludedNamespaces: ['meshgate'] });
    for (let i = 0; i < 6; i++) reports.observe(recorded('legacy'));
    reports.observe(recorded('other', 'host_network'));
    await reports.flush();
    expect(api.writes.map((w) => [w.op, w.namespace])).toEqual([['apply', 'shop']]);
    const r = api.writes[0].report!;
    expect(r).toMatchObject({
      apiVersion: 'wgpolicyk8s.io/v1alpha2',
      kind: 'PolicyReport',
      metadata: { name: 'meshgate', namespace: 'shop', labels: { 'app.kubernetes.io/managed-by': 'meshgate' } },
      summary: { pass: 0, fail: 2, warn: 0, error: 0, skip: 0 },
    });
    expect(results(r)).toEqual([
      expect.objectContaining({
        source: 'meshgate',
        policy: 'meshgate-audit',
        rule: 'proxy_escalation',
        result: 'fail',
        resources: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'legacy', namespace: 'shop' }],
        properties: expect.objectContaining({ pods: '6', level: 'audit' }),
        message: expect.stringMatching(
          /^6 pods admitted only because namespace shop is at audit; at enforce they would be refused \[proxy_escalation\]: .*To fix: remove SETUID\/SETGID from capabilities\.add/,
        ),
      }),
      expect.objectContaining({ rule: 'host_network', properties: expect.objectContaining({ pods: '1' }) }),
    ]);
  });

  it('pods of meshgate’s own and system namespaces, deleting pods and records of no known reason are left out', async () => {
    const api = fakeApi();
    const reports = new PolicyReports(api, { excludedNamespaces: ['meshgate', 'kube-system'] });
    reports.observe(recorded('a', 'proxy_escalation', { namespace: 'kube-system' }));
    reports.observe({ ...recorded('b'), metadata: { ...recorded('b').metadata, deletionTimestamp: 'now' } });
    reports.observe(recorded('c', 'not_a_code'));
    await reports.flush();
    expect(api.writes).toEqual([]);
  });

  it('deleted with its last finding; a pod whose record went is forgotten; a relist forgets pods gone meanwhile', async () => {
    const api = fakeApi();
    const reports = new PolicyReports(api, { excludedNamespaces: [] });
    const a = recorded('a');
    const b = recorded('b', 'host_network', { namespace: 'blog' });
    reports.observe(a);
    reports.observe(b);
    await reports.flush();
    // b's record removed (a new pod spec would not be a modification; its labels changed), a deleted while the
    // watch was down: the relist has neither.
    reports.observe({ metadata: { ...b.metadata, labels: {}, annotations: {} } });
    reports.replace([]);
    await reports.flush();
    expect(api.writes.map((w) => `${w.op} ${w.namespace}`).sort()).toEqual([
      'apply blog',
      'apply shop',
      'remove blog',
      'remove shop',
    ]);
    expect(reports.findings('shop')).toEqual([]);
  });

  it('only the leader writes; on becoming leader it writes what is due and removes reports left from before', async () => {
    const api = fakeApi({ existing: ['old'] });
    let leader = false;
    const reports = new PolicyReports(api, { excludedNamespaces: [], isLeader: () => leader });
    reports.observe(recorded('a'));
    await reports.flush();
    expect(api.writes).toEqual([]);
    leader = true;
    await reports.resync();
    expect(api.writes.map((w) => `${w.op} ${w.namespace}`).sort()).toEqual(['apply shop', 'remove old']);
  });

  it('changes within the flush interval make one write', async () => {
    const api = fakeApi();
    const reports = new PolicyReports(api, { excludedNamespaces: [], flushMs: 20 });
    for (let i = 0; i < 50; i++) reports.observe(recorded(`w${i % 5}`));
    await new Promise((r) => setTimeout(r, 80));
    await reports.flush();
    reports.stop();
    expect(api.writes.length).toBe(1);
    expect(results(api.writes[0].report)).toHaveLength(5);
  });

  it('without the PolicyReport CRD: nothing written, said once, tried again later', async () => {
    const api = fakeApi({ noCrd: true });
    const logged: string[] = [];
    const logger = { warn: (...a: unknown[]) => logged.push(String(a.at(-1))) } as never;
    let now = 1_000_000;
    const counts: string[] = [];
    const reports = new PolicyReports(api, {
      excludedNamespaces: [],
      logger,
      now: () => now,
      onWrite: (r) => counts.push(r),
    });
    reports.observe(recorded('a'));
    await reports.flush();
    await reports.flush();
    now += 6 * 60_000;
    await reports.flush();
    reports.stop();
    expect(logged).toEqual([expect.stringMatching(/^the apiserver serves no PolicyReports/)]);
    expect(counts).toEqual(['no_crd', 'no_crd']);
  });
});

describe('bounds', () => {
  it(`at most ${MAX_RESULTS} results, each message at most ${MAX_MESSAGE} characters; the summary counts all`, () => {
    const findings = Array.from({ length: MAX_RESULTS + 50 }, (_, i) => ({
      workload: { apiVersion: 'apps/v1', kind: 'Deployment', name: `w${String(i).padStart(4, '0')}` },
      level: 'audit' as const,
      reason: 'exclusion_refused' as const,
      message: 'x'.repeat(60_000),
      pods: 1,
      example: 'p',
      since: 0,
    }));
    const r = policyReport('shop', findings);
    expect(results(r)).toHaveLength(MAX_RESULTS);
    expect(r.summary).toMatchObject({ fail: MAX_RESULTS + 50 });
    expect(r.metadata).toMatchObject({ annotations: { 'meshgate.io/results-left-out': '50' } });
    for (const res of results(r)) expect((res.message as string).length).toBeLessThanOrEqual(MAX_MESSAGE);
    expect(JSON.stringify(r).length).toBeLessThan(400 * 1024);
  });

  it('names the workload: a Deployment for its ReplicaSet’s pods, else the controller, else the pod', () => {
    expect(reportedWorkloadOf(recorded('web'))).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' });
    expect(
      reportedWorkloadOf({
        metadata: {
          name: 'db-0',
          ownerReferences: [{ controller: true, kind: 'StatefulSet', name: 'db', apiVersion: 'apps/v1' } as never],
        },
      }),
    ).toEqual({ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'db' });
    expect(reportedWorkloadOf({ metadata: { name: 'bare' } })).toEqual({ apiVersion: 'v1', kind: 'Pod', name: 'bare' });
  });
});
