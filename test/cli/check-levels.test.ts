/**
 * `meshgate check` at enforcement levels: each guarded namespace's level read from the route of the entry that
 * selects it (the chart renders one per level), the warning while any is below enforce with the promote command
 * where nothing would be refused, and the audit report — pods admitted below enforce (meshgate.io/would-deny) and
 * pods the current rules would refuse there, reported as "would be refused", not as failures, with what to fix.
 */
import jsonpatch from 'fast-json-patch';
import { describe, expect, it } from 'vitest';
import type { NamespaceFacts, WebhookConfig, WebhookEntry } from '../../src/check/facts.ts';
import { judgeEnforcement } from '../../src/check/judge-levels.ts';
import { entryLevel, optedInNamespaces } from '../../src/check/judge-namespaces.ts';
import { PodTally } from '../../src/check/judge-pods.ts';
import type { PodRecord } from '../../src/check/facts.ts';
import { auditReport, type Names, type Report } from '../../src/check/report.ts';
import { renderTable } from '../../src/check/render.ts';
import { NodeFactStore } from '../../src/facts/node-facts.ts';
import { decide } from '../../src/policy/mutate/decide.ts';
import type { Pod } from '../../src/contract/pod.ts';
import { testConfig } from '../support/config.ts';

const cfg = testConfig('custom');
const entry = (name: string, level: string, path: string): WebhookEntry => ({
  name,
  service: { namespace: 'meshgate', name: 'meshgate', port: 443, path },
  namespaceSelector: {
    matchExpressions: [
      { key: 'meshgate.io/inject', operator: 'In', values: ['enabled'] },
      level === 'audit'
        ? { key: 'meshgate.io/enforcement', operator: 'NotIn', values: ['enforce', 'warn'] }
        : { key: 'meshgate.io/enforcement', operator: 'In', values: [level] },
    ],
  },
});
const entries = [
  entry('ns-meshgate', 'enforce', '/mutate'),
  entry('ns-meshgate-warn', 'warn', '/mutate/warn'),
  entry('ns-meshgate-audit', 'audit', '/mutate/audit'),
];
const config = (kind: 'mutating' | 'validating'): WebhookConfig => ({ kind, name: 'meshgate', webhooks: entries });
const inject = { 'meshgate.io/inject': 'enabled' };
const namespaces: NamespaceFacts[] = [
  { name: 'shop', labels: { ...inject, 'meshgate.io/enforcement': 'enforce' } },
  { name: 'blog', labels: { ...inject, 'meshgate.io/enforcement': 'warn' } },
  { name: 'new', labels: inject },
  { name: 'quiet', labels: inject },
];
const opted = optedInNamespaces(namespaces, config('mutating'), config('validating'));
const facts = new NodeFactStore();
facts.markSynced();

const plain = (name: string): Pod => ({
  metadata: { name, labels: { app: name } },
  spec: { containers: [{ name: 'app', image: 'app:1' }] },
});
const record = (namespace: string, pod: Pod, name = pod.metadata!.name!): PodRecord => ({
  namespace,
  name,
  object: pod,
  labels: pod.metadata?.labels,
  annotations: pod.metadata?.annotations,
  phase: 'Running',
  deleting: false,
  owner: { kind: 'StatefulSet', name: name.replace(/-\d+$/, '') },
});

describe('enforcement levels in meshgate check', () => {
  it('a namespace’s level is the route of the entries that select it', () => {
    expect(opted.map((o) => [o.namespace, o.level])).toEqual([
      ['shop', 'enforce'],
      ['blog', 'warn'],
      ['new', 'audit'],
      ['quiet', 'audit'],
    ]);
    expect(entryLevel({ name: 'x', url: 'https://10.0.0.1/validate/selected-pods/warn' })).toBe('warn');
    expect(entryLevel({ name: 'x', url: 'https://10.0.0.1/validate' })).toBe('enforce');
    expect(entryLevel({ name: 'x', service: { namespace: 'n', name: 's', port: 443 } })).toBe('enforce');
  });

  it('below enforce, what the rules refuse is reported as would-be-refused (warn) with the fix, not as a failure', () => {
    const tally = new PodTally(opted, facts, cfg);
    expect(tally.add(record('shop', plain('a-0')))).toBe(true);
    expect(tally.add(record('blog', plain('b-0')))).toBe(true);
    const recorded = plain('c-0');
    recorded.metadata!.labels!['meshgate.io/would-deny'] = 'audit';
    recorded.metadata!.annotations = {
      'meshgate.io/would-deny': 'impostor_container: container meshgate-proxy is not the real proxy',
    };
    expect(tally.add(record('new', recorded))).toBe(true);
    const [redirected, would] = tally.results(new Map(), true);
    expect(redirected).toMatchObject({ status: 'fail' });
    expect(redirected.items!.map((i) => i.name)).toEqual(['shop/statefulset/a']);
    expect(would).toMatchObject({
      code: 'pods_would_be_refused',
      status: 'warn',
      message: '2 workloads run pods meshgate admitted below enforce or would refuse at enforce',
    });
    expect(would.items!.map((i) => [i.name, i.reason, i.command])).toEqual([
      ['blog/statefulset/b', 'proxy_missing', undefined],
      ['new/statefulset/c', 'proxy_missing', undefined],
    ]);
    // The advice of the reason: what to change, not a restart.
    expect(would.items![0].message).toMatch(/; to fix: the mesh's injector did not inject it: /);
    expect(tally.wouldRefuse()).toEqual(
      new Map([
        ['blog', 1],
        ['new', 1],
      ]),
    );

    const levels = judgeEnforcement(opted, tally.wouldRefuse(), 'audit');
    expect(levels).toMatchObject({
      code: 'enforcement_level',
      status: 'warn',
      message:
        '3 of 4 guarded namespaces are below enforce (pods meshgate would refuse run there); unlabelled guarded ' +
        'namespaces are at audit (config.enforcement.default)',
    });
    expect(levels.items!.map((i) => [i.name, i.command])).toEqual([
      ['blog', undefined],
      ['new', undefined],
      ['quiet', 'kubectl label namespace quiet meshgate.io/enforcement=enforce --overwrite'],
    ]);
    expect(levels.items![0].message).toMatch(/^at warn: .*1 running pod would be refused at enforce/);
  });

  it('a pod admitted below enforce is reported with its recorded refusal even when the rules pass it now', () => {
    const tally = new PodTally(opted, facts, cfg);
    const pod = plain('d-0');
    const d = decide({ pod, namespace: 'quiet' }, facts, cfg);
    if (d.kind !== 'patch') throw new Error(`expected a patch, got ${d.kind}`);
    const meshed: Pod = jsonpatch.applyPatch(
      structuredClone(pod),
      structuredClone(d.ops) as jsonpatch.Operation[],
    ).newDocument;
    expect(tally.add(record('quiet', meshed))).toBe(false);
    meshed.metadata!.labels!['meshgate.io/would-deny'] = 'warn';
    meshed.metadata!.annotations!['meshgate.io/would-deny'] = 'node_unverified: node n-1 has no verified CNI chain';
    expect(tally.add(record('quiet', meshed))).toBe(true);
    const would = tally.results(new Map(), true)[1];
    expect(would.items![0]).toMatchObject({
      name: 'quiet/statefulset/d',
      status: 'warn',
      reason: 'node_unverified',
      message: expect.stringContaining(
        'admitted at level warn, refused at enforce: node n-1 has no verified CNI chain',
      ),
    });
  });

  it('all at enforce: ok, saying the default', () => {
    const enforced = optedInNamespaces(
      [{ name: 'shop', labels: { ...inject, 'meshgate.io/enforcement': 'enforce' } }],
      config('mutating'),
      config('validating'),
    );
    expect(judgeEnforcement(enforced, new Map(), 'audit')).toMatchObject({
      status: 'ok',
      message:
        'all 1 guarded namespaces are at enforce; unlabelled guarded namespaces are at audit (config.enforcement.default)',
    });
    expect(judgeEnforcement([], new Map(), 'enforce').status).toBe('skip');
  });

  it('--audit keeps the audit report only', () => {
    const report: Report = {
      context: {
        mesh: 'istio',
        names: { namespace: 'meshgate', webhookConfig: 'm', nodeAgent: 'a', tlsSecret: 't', repairController: 'r' },
        configSource: 'test',
        checkedAt: 'now',
      },
      results: [
        { code: 'webhook_endpoints_ready', status: 'fail', message: 'x' },
        { code: 'namespaces_opted_in', status: 'ok', message: 'y' },
        { code: 'enforcement_level', status: 'warn', message: 'z' },
        { code: 'pods_would_be_refused', status: 'warn', message: 'w' },
        { code: 'pods_held', status: 'ok', message: 'v' },
      ],
    };
    const a = auditReport(report);
    expect(a.context.view).toBe('audit');
    expect(a.results.map((r) => r.code)).toEqual(['namespaces_opted_in', 'enforcement_level', 'pods_would_be_refused']);
  });
});

describe('the audit report is a checklist per workload (issue 31 §4)', () => {
  it("lists every change of all a workload's pods once, and the table prints one line each", () => {
    const restricted = testConfig('custom', { apps: { privileges: 'restricted' } });
    const tally = new PodTally(opted, facts, restricted);
    // Two pods of one StatefulSet, each refused for something else: one pass must fix both.
    const meshed = (pod: Pod) => {
      const d = decide({ pod, namespace: 'new' }, facts, testConfig('custom'));
      if (d.kind !== 'patch') throw new Error(`expected a patch, got ${d.kind}`);
      return jsonpatch.applyPatch(structuredClone(pod), structuredClone(d.ops), true, false).newDocument;
    };
    const a = meshed(plain('web-0'));
    const b = meshed(plain('web-1'));
    // Admitted at audit with its refusal recorded (the webhook admits below enforce).
    b.spec.containers[0].securityContext = { runAsUser: 1000, runAsGroup: 1000, capabilities: { add: ['NET_ADMIN'] } };
    expect(tally.add(record('new', a))).toBe(true);
    expect(tally.add(record('new', b))).toBe(true);
    const would = tally.results(new Map(), true).find((r) => r.code === 'pods_would_be_refused')!;
    expect(would.items).toHaveLength(1);
    expect(would.items![0]).toMatchObject({
      name: 'new/statefulset/web',
      changes: [
        'container app: securityContext.runAsUser: set a UID (not 1337) [proxy_escalation]',
        'container app: securityContext.runAsGroup: set a GID (not 1337) [proxy_escalation]',
        'container app: securityContext.allowPrivilegeEscalation: set false [proxy_escalation]',
        'container app: securityContext.capabilities.drop: add ALL (SETUID, SETGID and NET_RAW must not be held; add back only what it needs) [proxy_escalation]',
        "meshgate's config: apps.baselineNamespaces: or list new while its workloads cannot comply (admitted with a warning) [proxy_escalation]",
        'container app: securityContext.capabilities.add: remove NET_ADMIN [redirect_tamper]',
      ],
    });
    const report: Report = auditReport({
      context: { mesh: 'custom', names: { namespace: 'meshgate' } as Names, configSource: 'test', checkedAt: '' },
      results: [would],
    });
    expect(renderTable(report)).toContain(
      '          change container app: securityContext.capabilities.add: remove NET_ADMIN [redirect_tamper]\n',
    );
  });
});
