// The chart's PrometheusRule, ServiceMonitors and PodMonitor as helm renders them: shaped like the Prometheus
// Operator's own Go types (strict decode, monitoring-check), the rules accepted by the real promtool (check rules) and
// every alert's behaviour pinned by promtool's unit tests (test/monitoring/alerts.test.yaml), each alert firing in one
// test and quiet in another; every meshgate metric they use exists in meshgate's registries; every alert links a
// runbook in docs/runbooks that exists.
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseYaml, stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { render, type Obj, type Rendered } from '../chart/helm.ts';
import { profileValues } from '../chart/profiles.ts';
import { meshgateFamilies, namesIn, seriesNames } from './names.ts';
import { runTool } from './tools.ts';

const UNIT_TESTS = new URL('./alerts.test.yaml', import.meta.url);
/** The chart's default metrics.prometheusRule.runbookBaseURL. */
const RUNBOOK_BASE = 'https://github.com/meshgate/meshgate/blob/main/docs/runbooks';
const ALL_ON = {
  metrics: { serviceMonitor: { enabled: true }, podMonitor: { enabled: true }, prometheusRule: { enabled: true } },
};

type Rule = {
  alert: string;
  expr: string;
  for?: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
};
const rulesOf = (r: Rendered): Rule[] => r.one('PrometheusRule').spec.groups.flatMap((g: Obj) => g.rules);

let dir: string;
let rendered: Rendered;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'meshgate-rules-'));
  rendered = await render(profileValues('istio', ALL_ON));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('Prometheus Operator resources', () => {
  it('none by default: their CRDs may not exist', async () => {
    const r = await render(profileValues('istio'));
    expect(r.docs.filter((d) => String(d.apiVersion).startsWith('monitoring.coreos.com/'))).toEqual([]);
  });

  it("decode strictly into the Operator's Go types (an unknown or misplaced field fails)", () => {
    const docs = rendered.docs.filter((d) => String(d.apiVersion).startsWith('monitoring.coreos.com/'));
    expect(docs.map((d) => `${d.kind}/${d.metadata.name}`).sort()).toEqual([
      'PodMonitor/meshgate-node-agent',
      'PrometheusRule/meshgate',
      'ServiceMonitor/meshgate',
      'ServiceMonitor/meshgate-repair-controller',
    ]);
    const res = runTool('monitoring-check', ['crd'], docs.map((d) => stringify(d)).join('\n---\n'));
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout.trim().split('\n')).toHaveLength(4);
    // The checker does refuse what the Operator would not know.
    const bad = structuredClone(rendered.one('ServiceMonitor', 'meshgate'));
    bad.spec.endpoints[0].tlsConfig.caFile2 = '/x';
    const refused = runTool('monitoring-check', ['crd'], stringify(bad));
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('unknown field "caFile2"');
  });

  it("the webhook's ServiceMonitor selects its Service, scrapes its HTTPS port and trusts meshgate's CA for its own name", () => {
    const sm = rendered.one('ServiceMonitor', 'meshgate').spec;
    const svc = rendered.one('Service', 'meshgate');
    expect(Object.entries(sm.selector.matchLabels).every(([k, v]) => svc.metadata.labels[k] === v)).toBe(true);
    expect(sm.namespaceSelector.matchNames).toEqual(['meshgate']);
    const ep = sm.endpoints[0];
    expect(svc.spec.ports.map((p: Obj) => p.name)).toContain(ep.port);
    expect(ep).toMatchObject({
      scheme: 'https',
      path: '/metrics',
      tlsConfig: { ca: { secret: { name: 'meshgate-tls', key: 'ca.crt' } } },
    });
    const args: string[] = rendered.one('Deployment', 'meshgate').spec.template.spec.containers[0].args;
    expect(args).toContain(`--tls-san=${ep.tlsConfig.serverName}`);
  });

  it('the repair controller gets a metrics Service and ServiceMonitor on its HTTP port', () => {
    const svc = rendered.one('Service', 'meshgate-repair-controller');
    const pod = rendered.one('Deployment', 'meshgate-repair-controller').spec.template;
    expect(Object.entries(svc.spec.selector).every(([k, v]) => pod.metadata.labels[k] === v)).toBe(true);
    expect(pod.spec.containers[0].ports.map((p: Obj) => p.name)).toContain(svc.spec.ports[0].targetPort);
    const sm = rendered.one('ServiceMonitor', 'meshgate-repair-controller').spec;
    expect(Object.entries(sm.selector.matchLabels).every(([k, v]) => svc.metadata.labels[k] === v)).toBe(true);
    expect(sm.endpoints[0].port).toBe(svc.spec.ports[0].name);
  });

  it("the node agents' PodMonitor selects their pods, scrapes the metrics port, names the node and the job", () => {
    const pm = rendered.one('PodMonitor').spec;
    const pod = rendered.one('DaemonSet').spec.template;
    expect(Object.entries(pm.selector.matchLabels).every(([k, v]) => pod.metadata.labels[k] === v)).toBe(true);
    expect(pod.spec.containers[0].ports).toContainEqual({ name: 'metrics', containerPort: 9477, protocol: 'TCP' });
    expect(pm.podMetricsEndpoints[0].port).toBe('metrics');
    expect(pm.podMetricsEndpoints[0].relabelings).toEqual([
      { sourceLabels: ['__meta_kubernetes_pod_node_name'], targetLabel: 'node' },
      { targetLabel: 'job', replacement: 'meshgate-node-agent' },
    ]);
  });

  it('monitor labels (what Prometheus selects monitors by) and scrape intervals come from the values', async () => {
    const r = await render(
      profileValues('istio', {
        metrics: {
          serviceMonitor: { enabled: true, labels: { release: 'kps' }, interval: '15s' },
          podMonitor: { enabled: true, labels: { release: 'kps' } },
        },
      }),
    );
    expect(r.one('ServiceMonitor', 'meshgate').metadata.labels.release).toBe('kps');
    expect(r.one('ServiceMonitor', 'meshgate').spec.endpoints[0].interval).toBe('15s');
    expect(r.one('PodMonitor').metadata.labels.release).toBe('kps');
  });
});

describe('alerts', () => {
  it('promtool check rules accepts the rendered rules', () => {
    writeFileSync(join(dir, 'rules.yaml'), stringify(rendered.one('PrometheusRule').spec));
    const res = runTool('promtool', ['check', 'rules', 'rules.yaml'], undefined, dir);
    expect(res.code, res.stdout + res.stderr).toBe(0);
    expect(res.stdout).toContain(`SUCCESS: ${rulesOf(rendered).length} rules found`);
  });

  it('promtool test rules: every alert behaves as alerts.test.yaml says', () => {
    writeFileSync(join(dir, 'rules.yaml'), stringify(rendered.one('PrometheusRule').spec));
    copyFileSync(UNIT_TESTS, join(dir, 'alerts.test.yaml'));
    const res = runTool('promtool', ['test', 'rules', 'alerts.test.yaml'], undefined, dir);
    expect(res.code, res.stdout + res.stderr).toBe(0);
    expect(res.stdout).toContain('SUCCESS');
  });

  it('every alert is tested firing and tested quiet', () => {
    const tests = parseYaml(readFileSync(UNIT_TESTS, 'utf8')).tests as Obj[];
    const cases = tests.flatMap((t) => t.alert_rule_test as Obj[]);
    for (const name of new Set(rulesOf(rendered).map((r) => r.alert))) {
      expect(
        cases.some((c) => c.alertname === name && c.exp_alerts.length > 0),
        `${name} fires in a test`,
      ).toBe(true);
      expect(
        cases.some((c) => c.alertname === name && c.exp_alerts.length === 0),
        `${name} stays quiet in a test`,
      ).toBe(true);
    }
  });

  it("every meshgate metric the alerts use exists in meshgate's registries", async () => {
    const known = seriesNames(await meshgateFamilies());
    const used = rulesOf(rendered).flatMap((r) => namesIn(r.expr));
    expect(used.length).toBeGreaterThan(5);
    expect(used.filter((n) => !known.has(n))).toEqual([]);
  });

  it('every alert links its runbook in docs/runbooks: what it means, how to investigate, how to fix', () => {
    const names = new Set(rulesOf(rendered).map((r) => r.alert));
    expect(names.size).toBeGreaterThan(12);
    for (const rule of rulesOf(rendered)) {
      expect(rule.annotations.runbook_url, rule.alert).toBe(`${RUNBOOK_BASE}/${rule.alert}.md`);
      const file = new URL(`../../docs/runbooks/${rule.alert}.md`, import.meta.url);
      expect(existsSync(file), `docs/runbooks/${rule.alert}.md`).toBe(true);
      const text = readFileSync(file, 'utf8');
      expect(text.split('\n')[0], rule.alert).toBe(`# ${rule.alert}`);
      for (const section of ['## Meaning', '## Investigate', '## Fix'])
        expect(text, `${rule.alert}: ${section}`).toContain(`\n${section}\n`);
      // Investigating means commands to run.
      expect(text, rule.alert).toMatch(/```sh\n[^`]*\b(kubectl|meshgate)\b/);
    }
    // And no runbook for an alert that does not exist.
    const files = readdirSync(new URL('../../docs/runbooks/', import.meta.url)).filter((f) => f !== 'README.md');
    expect(files.sort()).toEqual([...names].map((n) => `${n}.md`).sort());
  });

  it('runbook links follow metrics.prometheusRule.runbookBaseURL', async () => {
    const r = await render(
      profileValues('istio', {
        metrics: { prometheusRule: { enabled: true, runbookBaseURL: 'https://wiki.example.com/meshgate/' } },
      }),
    );
    for (const rule of rulesOf(r))
      expect(rule.annotations.runbook_url).toBe(`https://wiki.example.com/meshgate/${rule.alert}.md`);
  });

  it("has a severity on every alert and the values' alertLabels on each", async () => {
    const r = await render(
      profileValues('istio', { metrics: { prometheusRule: { enabled: true, alertLabels: { team: 'platform' } } } }),
    );
    for (const rule of rulesOf(r))
      expect(rule.labels, rule.alert).toMatchObject({
        team: 'platform',
        severity: expect.stringMatching(/^(info|warning|critical)$/),
      });
  });

  it('thresholds come from the values', async () => {
    const r = await render(
      profileValues('istio', {
        metrics: {
          prometheusRule: {
            enabled: true,
            certificateExpiryWarningDays: 30,
            certificateExpiryCriticalDays: 3,
            validatorFailuresThreshold: 10,
            validatorFailuresWindow: '1h',
            nodesUnverifiedFor: '1h',
            refusalsPerMinute: 30,
          },
        },
      }),
    );
    const rules = rulesOf(r);
    const expiring = rules
      .filter((x) => x.alert === 'MeshgateCertificateExpiring')
      .map((x) => [x.labels.severity, x.expr.split('<')[1].trim()]);
    expect(expiring.sort()).toEqual([
      ['critical', '3 * 86400'],
      ['warning', '30 * 86400'],
    ]);
    const failures = rules.find((x) => x.alert === 'MeshgateValidatorFailuresRising')!;
    expect(failures.expr).toContain('[1h]');
    expect(failures.expr.trim().endsWith('> 10')).toBe(true);
    expect(rules.find((x) => x.alert === 'MeshgateNodesUnverified')!.for).toBe('1h');
    expect(
      rules
        .find((x) => x.alert === 'MeshgateRefusalSpike')!
        .expr.trim()
        .endsWith('* 60 > 30'),
    ).toBe(true);
  });

  it("selects this release's jobs in its namespace, and leaves out the alerts of disabled components", async () => {
    const r = await render(
      profileValues('istio', {
        nodeAgent: { enabled: false },
        repairController: { enabled: false },
        metrics: { prometheusRule: { enabled: true } },
      }),
      { release: 'mg', namespace: 'mesh-system' },
    );
    const rules = rulesOf(r);
    expect(rules.find((x) => x.alert === 'MeshgateWebhookDown')!.expr).toBe(
      'absent(up{job="mg-meshgate",namespace="mesh-system"} == 1)',
    );
    const names = rules.map((x) => x.alert);
    expect(names).not.toContain('MeshgateNodeAgentDown');
    expect(names).not.toContain('MeshgateRepairNoLeader');
    expect(names).not.toContain('MeshgateRepairReplicaDown');
    expect(names).not.toContain('MeshgateAmbientCaptureLost');
    expect(names).not.toContain('MeshgateAmbientCaptureLostRepeatedly');
    expect(rules.find((x) => x.alert === 'MeshgateWebhookReplicaDown')!.expr).toContain(
      'kube_deployment_spec_replicas{namespace="mesh-system",deployment="mg-meshgate"}',
    );
    expect(names).toContain('MeshgateNodeVerdictsStale');
  });
});
