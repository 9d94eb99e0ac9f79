/**
 * `meshgate check` as a whole without a cluster: the orchestration over a hand-written reader (one check per code,
 * in the catalogue's order), the table and the JSON, and the command line's exit 2 for usage, configuration and
 * connection errors. The real apiserver runs in test/e2e/check.test.ts.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type {
  AgentPod,
  NamespaceFacts,
  Owner,
  Read,
  ReadError,
  SecretCerts,
  ServiceEndpoints,
  TlsProbe,
  WebhookConfig,
  WebhookKind,
  WorkloadStatus,
} from '../../src/check/facts.ts';
import type { PodRecord } from '../../src/check/facts.ts';
import type { KubeReader } from '../../src/check/kube-reader.ts';
import { renderJson, renderTable, TABLE_ITEMS } from '../../src/check/render.ts';
import {
  AUDIT_CODES,
  auditReport,
  CHECK_CODES,
  CHECKS,
  exitCode,
  SECTIONS,
  type InstalledNames,
  type Report,
} from '../../src/check/report.ts';
import { runCheck } from '../../src/check/run.ts';
import { checkCommand } from '../../src/cli/check.ts';
import { memoryIO } from '../../src/cli/io.ts';
import { CONDITION_TYPE, EVIDENCE_ANNOTATION, VERIFIED_LABEL } from '../../src/contract/node.ts';
import { testConfig } from '../support/config.ts';
import { judgeAppPrivileges } from '../../src/check/run.ts';
import { issueCA, issueLeaf } from '../../src/tls/authority.ts';
import { freePort } from '../e2e/harness/net.ts';

const NAMES: InstalledNames = {
  namespace: 'meshgate',
  webhookConfig: 'meshgate',
  nodeAgent: 'meshgate-node-agent',
  tlsSecret: 'meshgate-tls',
  repairController: 'meshgate-repair-controller',
};
const DAY = 86_400_000;
const HOST = 'meshgate.meshgate.svc';
// meshgate's own issuer: a ten-year CA and a one-year serving certificate, as the webhook makes them.
const ca = issueCA(3650 * DAY, Date.now());
const leaf = issueLeaf(ca, [HOST], 365 * DAY, Date.now());

/** A cluster as plain data, served through the reader's interface (no API, no module mocks). */
class FakeCluster implements Omit<KubeReader, 'read' | 'node' | 'nodeLease'> {
  webhooks: Partial<Record<WebhookKind, Read<WebhookConfig>>> = {};
  svc: Read<ServiceEndpoints> = {
    namespace: 'meshgate',
    name: 'meshgate',
    ports: [{ name: 'https', port: 443 }],
    ready: 2,
    notReady: 0,
  };
  tls: Read<SecretCerts> = { namespace: 'meshgate', name: 'meshgate-tls', tlsCrt: leaf.cert };
  ds: Read<WorkloadStatus & { selector: Record<string, string> }> = {
    namespace: 'meshgate',
    name: 'meshgate-node-agent',
    selector: { app: 'agent' },
    desired: 1,
    ready: 1,
    available: 1,
    updated: 1,
  };
  agents: AgentPod[] = [{ name: 'agent-a', node: 'node-a', ready: true }];
  nodeList: unknown[] = [];
  nsList: NamespaceFacts[] = [{ name: 'shop', labels: { 'meshgate.io/inject': 'enabled' } }];
  podList: PodRecord[] = [];
  repair: Read<WorkloadStatus> = {
    namespace: 'meshgate',
    name: 'meshgate-repair-controller',
    desired: 2,
    ready: 2,
    available: 2,
    updated: 2,
  };
  async serverVersion() {
    return 'v1.34.2';
  }
  async webhookConfig(kind: WebhookKind) {
    return this.webhooks[kind];
  }
  async service() {
    return this.svc;
  }
  async secret() {
    return this.tls;
  }
  async configMapKey() {
    return undefined;
  }
  async daemonSet() {
    return this.ds;
  }
  async deployment() {
    return this.repair;
  }
  async agentPods(): Promise<AgentPod[] | ReadError> {
    return this.agents;
  }
  async nodes(each: (n: never) => void) {
    for (const n of this.nodeList) each(n as never);
    return undefined;
  }
  leases: Map<string, number> | ReadError = new Map();
  async nodeLeases() {
    return this.leases;
  }
  async namespaces() {
    return this.nsList;
  }
  /** The label selectors asked for, by namespace. */
  podQueries: string[] = [];
  async pods(namespace: string, each: (p: PodRecord) => void, labelSelector?: string) {
    this.podQueries.push(`${namespace}${labelSelector ? ` ${labelSelector}` : ''}`);
    // Existence requirements (`key`) only, as the audit asks them; other forms are not used here.
    const keys = (labelSelector ?? '').split(',').filter((k) => k && !/[=!()]/.test(k));
    for (const p of this.podList.filter((x) => x.namespace === namespace))
      if (keys.every((k) => p.labels?.[k] !== undefined)) each(p);
    return undefined;
  }
  async replicaSetOwner(): Promise<Owner | undefined> {
    return { kind: 'Deployment', name: 'web' };
  }
}

function healthy(): FakeCluster {
  const c = new FakeCluster();
  const entry = (name: string) => ({
    name,
    service: { namespace: 'meshgate', name: 'meshgate', port: 443 },
    caBundle: Buffer.from(ca.cert).toString('base64'),
    failurePolicy: 'Fail',
    namespaceSelector: { matchLabels: { 'meshgate.io/inject': 'enabled' } },
  });
  c.webhooks = {
    mutating: { kind: 'mutating', name: 'meshgate', webhooks: [entry('inject.meshgate.io')] },
    validating: { kind: 'validating', name: 'meshgate', webhooks: [entry('enforce.meshgate.io')] },
  };
  c.nodeList = [
    {
      metadata: {
        name: 'node-a',
        labels: { [VERIFIED_LABEL]: 'true' },
        annotations: {
          [EVIDENCE_ANNOTATION]: JSON.stringify({ pluginType: 'istio-cni', plugins: ['calico', 'istio-cni'] }),
        },
      },
      status: {
        conditions: [
          { type: CONDITION_TYPE, status: 'True', reason: 'verified', lastHeartbeatTime: new Date().toISOString() },
        ],
      },
    },
  ];
  return c;
}

const check = (c: FakeCluster, probe: TlsProbe | undefined = undefined) =>
  runCheck(c, {
    cfg: testConfig('custom', { apps: { privileges: 'restricted' } }),
    names: NAMES,
    configSource: 'test',
    meshPlugins: ['istio-cni', 'linkerd-cni'],
    probe: () => (probe ? Promise.resolve(probe) : undefined),
    now: Date.now,
  });

describe('the report', () => {
  it("has one result per check code, in the catalogue's order, sections in order", async () => {
    const report = await check(healthy());
    expect(report.results.map((r) => r.code)).toEqual(CHECK_CODES.filter((c) => CHECKS[c].section !== 'preflight'));
    const sections = report.results.map((r) => SECTIONS.indexOf(CHECKS[r.code].section));
    expect(sections).toEqual([...sections].sort((a, b) => a - b));
    expect(report.results.filter((r) => r.status !== 'ok').map((r) => [r.code, r.status, r.message])).toEqual([]);
    expect(exitCode(report)).toBe(0);
  });

  it('fails, with exit 1, what a broken cluster breaks; warnings alone keep exit 0', async () => {
    const broken = healthy();
    broken.svc = { ...(broken.svc as ServiceEndpoints), ready: 0, notReady: 2 };
    broken.tls = undefined;
    broken.podList = [
      {
        namespace: 'shop',
        name: 'web-1-a',
        object: { metadata: { name: 'web-1-a' }, spec: { containers: [{ name: 'app', image: 'app' }] } },
        phase: 'Running',
        deleting: false,
        owner: { kind: 'ReplicaSet', name: 'web-1' },
      },
    ];
    const report = await check(broken);
    const status = Object.fromEntries(report.results.map((r) => [r.code, r.status]));
    expect(status).toMatchObject({
      webhook_endpoints_ready: 'fail',
      serving_cert_trusted: 'warn',
      serving_cert_expiry: 'skip',
      pods_redirected: 'fail',
    });
    expect(report.results.find((r) => r.code === 'pods_redirected')!.items![0].command).toBe(
      'kubectl -n shop rollout restart deployment/web',
    );
    expect(exitCode(report)).toBe(1);
    const warnOnly = healthy();
    warnOnly.repair = undefined;
    expect(exitCode(await check(warnOnly))).toBe(0);
  });

  it('--audit reads only what the audit judges (no agent pods, DaemonSet, Secret or repair Deployment; Nodes only below enforce, at enforce only pods with a recorded refusal); progress counts every read', async () => {
    const c = healthy();
    const asked: string[] = [];
    for (const m of ['agentPods', 'daemonSet', 'deployment', 'secret', 'service'] as const) {
      const real = c[m].bind(c) as (...a: unknown[]) => Promise<unknown>;
      (c as unknown as Record<string, unknown>)[m] = (...a: unknown[]) => {
        asked.push(m);
        return real(...a);
      };
    }
    c.podList = Array.from({ length: 3 }, (_, i) => ({
      namespace: 'shop',
      name: `web-${i}`,
      object: { metadata: { name: `web-${i}` }, spec: { containers: [{ name: 'app', image: 'app' }] } },
      phase: 'Running',
      deleting: false,
      owner: { kind: 'ReplicaSet', name: 'web-1' },
    }));
    c.podList[2].labels = { 'meshgate.io/would-deny': 'audit' };
    const audit = async () => {
      const seen: string[] = [];
      c.podQueries = [];
      const report = await runCheck(c, {
        cfg: testConfig('custom', { apps: { privileges: 'restricted' } }),
        names: NAMES,
        configSource: 'test',
        meshPlugins: ['istio-cni'],
        probe: () => undefined,
        now: Date.now,
        audit: true,
        onProgress: (p) => void seen.push(`${p.nodes} ${p.pods} ${p.namespaces.done}/${p.namespaces.of}`),
      });
      return { report, seen };
    };
    // At enforce (the test config's default): no Node is read, and only pods with a recorded refusal are listed.
    const enforced = await audit();
    expect(asked).toEqual([]);
    expect(enforced.report.results.map((r) => r.code)).toEqual(AUDIT_CODES);
    expect(c.podQueries).toEqual(['shop meshgate.io/would-deny']);
    expect(enforced.seen.at(-1)).toBe('0 1 1/1');
    // Below enforce: the Nodes (the pods' posture reads them) and every pod.
    for (const kind of ['mutating', 'validating'] as const)
      for (const e of (c.webhooks[kind] as WebhookConfig).webhooks)
        e.service = { ...e.service!, path: `/${kind === 'mutating' ? 'mutate' : 'validate'}/audit` };
    const below = await audit();
    expect(asked).toEqual([]);
    expect(auditReport(below.report).results.map((r) => r.code)).toEqual(AUDIT_CODES);
    expect(below.report.results.map((r) => r.code)).toEqual(AUDIT_CODES);
    expect(c.podQueries).toEqual(['shop']);
    expect(below.seen.at(-1)).toBe('1 3 1/1');
    expect(below.seen).toContain('1 0 0/0');
  });

  it('renders a table: a line per check with its mark and code, the items, a hint under each problem', async () => {
    const c = healthy();
    c.ds = { ...(c.ds as WorkloadStatus & { selector: Record<string, string> }), ready: 0 };
    const report = await check(c);
    const table = renderTable(report);
    console.log(table);
    expect(table).toMatch(/^meshgate check: mesh custom, namespace meshgate, Kubernetes v1.34.2\n/);
    expect(table).toContain(
      '✖ DaemonSet meshgate/meshgate-node-agent: 0 of 1 pods ready  [node_agent_ready]\n    hint: kubectl -n meshgate describe daemonset meshgate-node-agent;',
    );
    expect(table).toContain('✔ all 1 nodes verified  [node_verified]');
    expect(table).toMatch(/\nStatus: 1 failed, 0 warnings, 20 passed, 0 not checked; exit 1 \(a check failed\)\n$/);
    for (const s of SECTIONS.filter((x) => x !== 'preflight'))
      expect(table).toContain(`\n${s}\n${'-'.repeat(s.length)}\n`);
    expect(table).not.toContain('\npreflight\n');
  });

  it('lists at most TABLE_ITEMS items per check in the table, all of them in the JSON, with hints and the exit code', () => {
    const items = Array.from({ length: TABLE_ITEMS + 5 }, (_, i) => ({
      name: `node-${i}`,
      status: 'fail' as const,
      reason: 'not_published',
      message: 'no verdict',
    }));
    const report: Report = {
      context: { mesh: 'istio', names: NAMES, configSource: 'test', checkedAt: 'now' },
      results: [{ code: 'node_verified', status: 'fail', message: '0 of 25 nodes verified', items }],
    };
    const table = renderTable(report);
    expect(table.match(/✖ node-\d+/g)).toHaveLength(TABLE_ITEMS);
    expect(table).toContain('… and 5 more (-o json lists all)');
    const json = JSON.parse(renderJson(report));
    expect(json.results[0].items).toHaveLength(TABLE_ITEMS + 5);
    expect(json.results[0].hint).toMatch(/meshgate check-node --plugin-type PLUGIN/);
    expect(json).toMatchObject({ exitCode: 1, summary: { fail: 1, warn: 0, ok: 0, skip: 0 } });
  });
});

describe('meshgate check: exit 2 for usage, configuration and connection errors, in one line', () => {
  const dir = mkdtempSync(join(tmpdir(), 'meshgate-check-cli-'));
  // A loopback port nothing listens on (bound, then closed): the connection is refused at once. (Port 1 would do,
  // but fetch refuses "bad ports" before it connects.)
  let closed = '';
  beforeAll(async () => {
    closed = `https://127.0.0.1:${await freePort()}`;
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const kubeconfig = (server: string, context = 'test') => {
    const file = join(dir, `${context}.kubeconfig`);
    writeFileSync(
      file,
      `apiVersion: v1\nkind: Config\ncurrent-context: ${context}\nclusters: [{name: c, cluster: {server: '${server}', insecure-skip-tls-verify: true}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: ${context}, context: {cluster: c, user: u}}]\n`,
    );
    return file;
  };
  const cli = async (args: string[], env: Record<string, string> = { HOME: dir }) => {
    const io = memoryIO('', env);
    const code = await checkCommand(args, io);
    return { code, out: io.out, err: io.err };
  };

  type Case = [string, () => { args: string[]; env?: Record<string, string> }, RegExp];
  const cases: Case[] = [
    ['an unknown flag', () => ({ args: ['--nope'] }), /^meshgate check: Unknown option '--nope'/],
    [
      'a bad output format',
      () => ({ args: ['-o', 'yaml'] }),
      /^meshgate check: --output must be table or json, not "yaml"/,
    ],
    [
      '--config with --mesh',
      () => ({ args: ['--config', 'x.yaml', '--mesh', 'istio'] }),
      /--config and --mesh go alone/,
    ],
    [
      'no credentials at all',
      () => ({ args: [], env: { HOME: join(dir, 'nowhere') } }),
      /^meshgate check: no cluster credentials: pass --kubeconfig FILE, set \$KUBECONFIG, or run in a cluster\n$/,
    ],
    [
      'a kubeconfig that does not exist',
      () => ({ args: ['--kubeconfig', join(dir, 'missing')] }),
      /kubeconfig .*missing does not exist/,
    ],
    [
      'an unknown context',
      () => ({ args: ['--kubeconfig', kubeconfig(closed), '--context', 'prod'] }),
      /--context prod: no such context \(known: test\)/,
    ],
    [
      'an apiserver nobody answers for (a closed loopback port)',
      () => ({ args: ['--kubeconfig', kubeconfig(closed)] }),
      /^meshgate check: cannot reach the apiserver at https:\/\/127.0.0.1:\d+ \(reading \/version\): connect ECONNREFUSED 127.0.0.1:\d+\n$/,
    ],
    [
      '$KUBECONFIG, its first file',
      () => ({ args: [], env: { HOME: dir, KUBECONFIG: `${kubeconfig(closed, 'env')}:/nonexistent` } }),
      /cannot reach the apiserver at https:\/\/127.0.0.1:\d+/,
    ],
  ];
  it.each(cases)('%s', async (_, make, message) => {
    const { args, env } = make();
    const r = await cli(args, env);
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(r.err).toMatch(message);
    expect(r.err).not.toMatch(/\n\s+at /);
  });

  it('--help: exit 0, the exit codes, every check code and an example', async () => {
    const r = await cli(['--help']);
    expect(r.code).toBe(0);
    expect(r.out).toContain(
      'exit codes: 0 no check failed (warnings allowed), 1 a check failed, 2 usage, configuration or connection error',
    );
    for (const code of CHECK_CODES) expect(r.out).toContain(`  ${code} `);
    expect(r.out).toMatch(/\nexamples:\n {2}meshgate check\n/);
  });
});

describe('app_privileges: a relaxed apps.privileges is reported where it applies', () => {
  it.each([
    [{ privileges: 'restricted', baselineNamespaces: [] }, 'ok', /restricted in every guarded namespace/],
    [
      { privileges: 'restricted', baselineNamespaces: ['legacy', 'batch'] },
      'warn',
      /relaxes 2 namespace\(s\) to baseline: legacy, batch/,
    ],
    [{ privileges: 'baseline', baselineNamespaces: [] }, 'warn', /apps.privileges is baseline/],
    [{ privileges: 'node', restrictedNamespaces: [], baselineNamespaces: [] }, 'ok', /node: admission refuses what/],
    [
      { privileges: 'node', restrictedNamespaces: ['pay'], baselineNamespaces: [] },
      'ok',
      /; restricted at admission in pay$/,
    ],
    [{ privileges: 'node', restrictedNamespaces: [], baselineNamespaces: ['old'] }, 'warn', /baseline: old/],
  ] as const)('%j → %s', (apps, status, message) => {
    const r = judgeAppPrivileges(apps);
    expect(r).toMatchObject({ code: 'app_privileges', status });
    expect(r.message).toMatch(message);
  });
});
