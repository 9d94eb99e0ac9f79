// `meshgate uninstall` against a small in-memory cluster: what it removes and keeps, in which order, its refusals,
// its dry run and its idempotency; and the pure decisions of src/uninstall/plan.ts as tables. The same command on a
// real apiserver, run by the chart's post-delete hook: test/e2e/chart-lifecycle.test.ts.
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { CONDITION_TYPE, EVIDENCE_ANNOTATION, UNVERIFIED_TAINT, VERIFIED_LABEL } from '../../src/contract/node.ts';
import { QUARANTINE_ANNOTATION, QUARANTINE_HISTORY_ANNOTATION } from '../../src/node/quarantine.ts';
import {
  chartNames,
  madeByMeshgate,
  nodeCleanup,
  ownBarePod,
  pinnedByMeshgate,
  meshgateWorkloadOf,
} from '../../src/uninstall/plan.ts';
import { uninstall } from '../../src/uninstall/run.ts';
import { apiError, type FakeCluster, fakeCluster } from './fake-api.ts';

const N = chartNames('mg-system', 'mg');
const MADE = { 'app.kubernetes.io/managed-by': 'meshgate' };

function meshgateNode(name: string, extra: Partial<V1Node['spec']> = {}): V1Node {
  return {
    metadata: {
      name,
      resourceVersion: '1',
      labels: { [VERIFIED_LABEL]: 'false', 'kubernetes.io/hostname': name },
      annotations: { [EVIDENCE_ANNOTATION]: '{}', [QUARANTINE_ANNOTATION]: '{}', 'other/keep': 'x' },
    },
    spec: {
      taints: [{ ...UNVERIFIED_TAINT }, { key: 'dedicated', value: 'db', effect: 'NoSchedule' }],
      ...extra,
    },
    status: {
      conditions: [
        { type: 'Ready', status: 'True' },
        { type: CONDITION_TYPE, status: 'False', reason: 'mesh_plugin_missing' },
      ],
    },
  };
}

const PIN = {
  nodeAffinity: {
    requiredDuringSchedulingIgnoredDuringExecution: {
      nodeSelectorTerms: [
        {
          matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n2'] }],
          matchExpressions: [{ key: VERIFIED_LABEL, operator: 'In', values: ['true'] }],
        },
      ],
    },
  },
};

function pod(ns: string, name: string, o: { owner?: [string, string]; labels?: object; pinned?: boolean } = {}): V1Pod {
  return {
    metadata: {
      namespace: ns,
      name,
      uid: `uid-${name}`,
      labels: { ...(o.labels ?? {}) } as Record<string, string>,
      ownerReferences: o.owner
        ? [{ kind: o.owner[0], name: o.owner[1], controller: true, apiVersion: 'v1', uid: 'u' }]
        : [],
    },
    spec: { containers: [{ name: 'c' }], ...(o.pinned ? { affinity: PIN } : {}) },
    status: { phase: o.pinned ? 'Pending' : 'Running' },
  };
}

function cluster(): FakeCluster {
  const c = fakeCluster();
  c.nodes.set('n1', meshgateNode('n1'));
  c.nodes.set('n2', { metadata: { name: 'n2', resourceVersion: '5', labels: { a: 'b' } }, spec: {} });
  c.pods.push(
    pod('app', 'ds-x', { owner: ['DaemonSet', 'ds'], pinned: true }),
    pod('app', 'bare', { pinned: true }),
    pod('app', 'running', { owner: ['ReplicaSet', 'web-1'] }),
    pod('mg-system', 'mg-node-probe-n1', { labels: { 'meshgate.io/probe': 'true' } }),
  );
  c.secrets.set('mg-system/mg-tls', { metadata: { name: 'mg-tls', uid: '1', labels: MADE } });
  c.secrets.set('mg-system/mg-admission-mark', { metadata: { name: 'mg-admission-mark', uid: '2', labels: MADE } });
  c.leases.set('mg-system/mg-repair-controller', {
    metadata: { name: 'mg-repair-controller', uid: '3', labels: MADE },
  });
  return c;
}

async function run(c: FakeCluster, o: { dryRun?: boolean; timeoutMs?: number; removeLevels?: boolean } = {}) {
  const lines: string[] = [];
  let clock = 0;
  const code = await uninstall(c.api, {
    names: N,
    dryRun: o.dryRun ?? false,
    timeoutMs: o.timeoutMs ?? 10_000,
    removeEnforcementLabels: o.removeLevels,
    pollMs: 1_000,
    out: (l) => lines.push(l),
    sleep: async (ms) => {
      clock += ms;
    },
    now: () => clock,
  });
  return { code, out: lines.join('\n') };
}

describe('meshgate uninstall', () => {
  it('removes meshgate’s Node keys, pinned pods with a controller, its probe pod, Secrets and Lease; nothing else', async () => {
    const c = cluster();
    const r = await run(c);
    expect(r.code, r.out).toBe(0);
    const n1 = c.nodes.get('n1')!;
    expect(n1.metadata!.labels).toEqual({ 'kubernetes.io/hostname': 'n1' });
    expect(n1.metadata!.annotations).toEqual({ 'other/keep': 'x' });
    expect(n1.spec!.taints).toEqual([{ key: 'dedicated', value: 'db', effect: 'NoSchedule' }]);
    expect(n1.status!.conditions!.map((x) => x.type)).toEqual(['Ready']);
    expect(c.nodes.get('n2')!.metadata!.labels).toEqual({ a: 'b' });
    expect(c.pods.map((p) => p.metadata!.name)).toEqual(['bare', 'running']);
    expect([...c.secrets.keys(), ...c.leases.keys()]).toEqual([]);
    expect(r.out).toContain(
      `node n1: removed label ${VERIFIED_LABEL}, annotation ${EVIDENCE_ANNOTATION}, annotation ${QUARANTINE_ANNOTATION}, taint ${UNVERIFIED_TAINT.key}, condition ${CONDITION_TYPE}`,
    );
    expect(r.out).toContain('pod app/ds-x: deleted (Pending on meshgate');
    expect(r.out).toContain('its DaemonSet ds recreates it without)');
    expect(r.out).toContain('needs you: 1 pod(s) without a controller stay Pending');
    expect(r.out).toContain('app/bare');
    expect(r.out).toContain('done: 6 removed, nothing of meshgate is left');
    // The condition goes before the label: a node without the label but with the condition True reads as verified.
    expect(c.writes.indexOf('patch node status n1')).toBeLessThan(c.writes.indexOf('patch node n1'));
  });

  it('says what it leaves and how to remove it: the namespaces’ levels, the pods’ records; deletes its PolicyReports', async () => {
    const c = cluster();
    c.namespaces.set('team-a', { 'meshgate.io/enforcement': 'enforce', team: 'a' });
    c.namespaces.set('team-b', { 'meshgate.io/enforcement': 'warn' });
    c.namespaces.set('other', { team: 'c' });
    c.pods.push(pod('team-b', 'legacy-1', { labels: { 'meshgate.io/would-deny': 'warn' } }));
    c.reports.set('team-b/meshgate', { name: 'meshgate', namespace: 'team-b', uid: 'r1', labels: MADE });
    c.reports.set('team-b/kyverno', { name: 'kyverno', namespace: 'team-b', uid: 'r2', labels: { x: 'y' } });
    const r = await run(c);
    expect(r.code, r.out).toBe(0);
    expect([...c.reports.keys()]).toEqual(['team-b/kyverno']);
    expect(r.out).toContain("PolicyReport team-b/meshgate: deleted (meshgate's audit findings)");
    expect(c.namespaces.get('team-a')).toEqual({ 'meshgate.io/enforcement': 'enforce', team: 'a' });
    expect(r.out).toContain('done: 7 removed; left on purpose, with how to remove it:');
    expect(r.out).not.toContain('nothing of meshgate is left');
    expect(r.out).toContain(
      'kept: label meshgate.io/enforcement on 2 namespace(s) (team-a=enforce, team-b=warn): the levels your admins ' +
        'set; a reinstall starts these namespaces at them, not at the default. To start over at the default: ' +
        'kubectl label namespace team-a team-b meshgate.io/enforcement-',
    );
    expect(r.out).toContain('kept: label and annotation meshgate.io/would-deny on 1 pod(s) admitted below enforce');
  });

  it('--remove-enforcement-labels removes the levels, waiting out an enforcement policy that still refuses', async () => {
    const c = cluster();
    c.namespaces.set('team-a', { 'meshgate.io/enforcement': 'enforce', team: 'a' });
    let refusals = 2;
    c.beforeNamespacePatch = () => {
      if (refusals-- > 0)
        throw apiError(403, 'Forbidden', "ValidatingAdmissionPolicy 'mg-enforcement' denied request: only ...");
    };
    const dry = await run(c, { dryRun: true, removeLevels: true });
    expect(dry.out).toContain('namespace team-a: would remove label meshgate.io/enforcement=enforce');
    expect(c.namespaces.get('team-a')).toEqual({ 'meshgate.io/enforcement': 'enforce', team: 'a' });
    const r = await run(c, { removeLevels: true });
    expect(r.code, r.out).toBe(0);
    expect(c.namespaces.get('team-a')).toEqual({ team: 'a' });
    expect(r.out).toContain('namespace team-a: removed label meshgate.io/enforcement=enforce');
    expect(r.out).toContain('nothing of meshgate is left');
  });

  it('is idempotent: a second run finds nothing and writes nothing', async () => {
    const c = cluster();
    await run(c);
    c.writes.length = 0;
    const again = await run(c);
    expect(again.code).toBe(0);
    expect(again.out).toContain('nothing of meshgate was left');
    expect(c.writes).toEqual([]);
  });

  it('--dry-run says what it would remove and writes nothing', async () => {
    const c = cluster();
    c.pods.push(pod('mg-system', 'mg-node-agent-abc', { owner: ['DaemonSet', 'mg-node-agent'] }));
    const r = await run(c, { dryRun: true });
    expect(r.code, r.out).toBe(0);
    expect(c.writes).toEqual([]);
    expect(r.out).toContain('(dry run)');
    expect(r.out).toContain('would wait for 1 pod(s) to stop: mg-node-agent-abc (mg-node-agent)');
    expect(r.out).toContain('node n1: would remove label');
    expect(r.out).toContain('Secret mg-system/mg-tls: would delete (made by meshgate)');
    expect(r.out).toContain('would remove 6; nothing was changed');
  });

  it('refuses while meshgate is installed: webhook configurations or live workloads', async () => {
    const c = cluster();
    c.webhookConfigs = ['MutatingWebhookConfiguration'];
    c.workloads.set('DaemonSet mg-system/mg-node-agent', { deleting: false });
    c.workloads.set('Deployment mg-system/mg', { deleting: true });
    const r = await run(c);
    expect(r.code).toBe(1);
    expect(r.out).toContain(
      'failed: meshgate is still installed (MutatingWebhookConfiguration mg, DaemonSet mg-system/mg-node-agent)',
    );
    expect(c.writes).toEqual([]);
  });

  it('waits for the workloads’ pods to go; after the timeout it stops before touching any Node', async () => {
    const c = cluster();
    const agent = pod('mg-system', 'mg-node-agent-abc', { owner: ['DaemonSet', 'mg-node-agent'] });
    c.pods.push(agent);
    const r = await run(c, { timeoutMs: 3_000 });
    expect(r.code).toBe(1);
    expect(r.out).toContain('waiting for 1 pod(s) of meshgate to stop: mg-node-agent-abc (mg-node-agent)');
    expect(r.out).toContain("failed: meshgate's pods are still there after 3s: mg-node-agent-abc (mg-node-agent)");
    expect(c.writes.filter((w) => w.startsWith('patch node'))).toEqual([]);
  });

  it('a Node changed meanwhile (409) is read again; a policy still refusing is retried, then named', async () => {
    const c = cluster();
    let once = true;
    c.beforeNodePatch = (name) => {
      if (!once) return;
      once = false;
      const n = c.nodes.get(name)!;
      n.spec!.taints!.push({ key: 'late', effect: 'NoExecute' });
      n.metadata!.resourceVersion = '9';
    };
    expect((await run(c)).code).toBe(0);
    expect(c.nodes.get('n1')!.spec!.taints!.map((t) => t.key)).toEqual(['dedicated', 'late']);

    const refused = cluster();
    refused.beforeNodePatch = () => {
      throw apiError(403, 'Forbidden', 'nodes "n1" is forbidden: ValidatingAdmissionPolicy \'x-node-verdict\' denied');
    };
    const r = await run(refused);
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/failed: node n1: 403 Forbidden: .*ValidatingAdmissionPolicy 'x-node-verdict' denied/);
  });

  it('keeps Secrets and Leases it did not make, and says so', async () => {
    const c = cluster();
    c.secrets.set('mg-system/mg-admission-mark', { metadata: { name: 'mg-admission-mark', uid: '2' } });
    const r = await run(c);
    expect(c.secrets.has('mg-system/mg-admission-mark')).toBe(true);
    expect(r.out).toContain(
      'Secret mg-system/mg-admission-mark: not made by meshgate (no label app.kubernetes.io/managed-by=meshgate): yours, kept',
    );
  });
});

describe('plan', () => {
  it('nodeCleanup: nothing for a Node without meshgate’s keys; the history annotation alone counts', () => {
    expect(nodeCleanup({ metadata: { name: 'x', labels: { a: 'b' } } })).toBeUndefined();
    expect(nodeCleanup({ metadata: { name: 'x', annotations: { [QUARANTINE_HISTORY_ANNOTATION]: '[]' } } })).toEqual({
      removes: [`annotation ${QUARANTINE_HISTORY_ANNOTATION}`],
      node: { metadata: { annotations: { [QUARANTINE_HISTORY_ANNOTATION]: null } } },
      status: undefined,
    });
  });

  it.each([
    ['pinned by meshgate, unbound, Pending', {}, true],
    ['bound already', { nodeName: 'n2' }, false],
    ['running', { phase: 'Running' }, false],
    ['another term without meshgate’s key (ORed: schedulable without it)', { extraTerm: true }, false],
  ])('pinnedByMeshgate: %s', (_n, o: { nodeName?: string; phase?: string; extraTerm?: boolean }, want) => {
    const p = pod('app', 'p', { pinned: true });
    if (o.nodeName) p.spec!.nodeName = o.nodeName;
    if (o.phase) p.status!.phase = o.phase;
    if (o.extraTerm)
      p.spec!.affinity!.nodeAffinity!.requiredDuringSchedulingIgnoredDuringExecution!.nodeSelectorTerms.push({
        matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }],
      });
    expect(pinnedByMeshgate(p)).toBe(want);
  });

  it('workloadOf tells meshgate’s Deployments apart by their ReplicaSet and the pod-template-hash', () => {
    const rs = (name: string, hash: string) =>
      pod('mg-system', 'p', { owner: ['ReplicaSet', name], labels: { 'pod-template-hash': hash } });
    expect(meshgateWorkloadOf(rs('mg-7d9f', '7d9f'), N)).toBe('mg');
    expect(meshgateWorkloadOf(rs('mg-repair-controller-5c4b', '5c4b'), N)).toBe('mg-repair-controller');
    expect(meshgateWorkloadOf(rs('mg-canary-5c4b', '5c4b'), N)).toBeUndefined();
    expect(meshgateWorkloadOf(pod('mg-system', 'p', { owner: ['DaemonSet', 'mg-node-agent'] }), N)).toBe(
      'mg-node-agent',
    );
    expect(meshgateWorkloadOf(pod('mg-system', 'p', { owner: ['DaemonSet', 'other'] }), N)).toBeUndefined();
    expect(ownBarePod(pod('mg-system', 'mg-test'), N)).toBe(true);
    expect(ownBarePod(pod('mg-system', 'mg-test', { owner: ['Job', 'x'] }), N)).toBe(false);
  });

  it('madeByMeshgate: its label, or cert-manager’s Secret for meshgate’s Certificate', () => {
    expect(madeByMeshgate({ metadata: { name: 'mg-tls', labels: MADE } }, N)).toEqual({ ours: true, by: 'meshgate' });
    expect(
      madeByMeshgate(
        { metadata: { name: 'mg-tls', annotations: { 'cert-manager.io/certificate-name': 'mg-serving' } } },
        N,
      ),
    ).toEqual({ ours: true, by: "cert-manager, for meshgate's Certificate mg-serving" });
    expect(
      madeByMeshgate({ metadata: { name: 'mg-tls', annotations: { 'cert-manager.io/certificate-name': 'other' } } }, N)
        .ours,
    ).toBe(false);
  });
});
