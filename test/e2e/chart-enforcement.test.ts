// Who may change a namespace's enforcement level (charts/meshgate/templates/enforcement-policy.yaml) on a real
// kube-apiserver, each request made as the user it is about (impersonation): a namespace admin whose RoleBinding lets
// them edit their own Namespace may raise its level but not lower it — not by the namespace, its status or finalize
// subresource, not by removing the label, not by creating a namespace below the default; no one may set a value that
// is no level; enforcement.admins may lower. Then the chart's default level: audit for a new install, kept by an
// upgrade that does not set it (also from a release whose config has no level, as 0.1 had: enforce), and the
// policy's notion of "no label" following config.enforcement.default.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api, PatchStrategy, RbacAuthorizationV1Api, setHeaderOptions } from '@kubernetes/client-node';
import { parse as parseYaml } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chartDir } from '../chart/helm.ts';
import { startControlPlane, waitFor, type ControlPlane } from './harness/index.ts';
import { kubeconfig } from './harness/pki.ts';
import { grantClusterRole, impersonate, outcome as apiOutcome, type Identity } from './impersonate.ts';

const NS = 'meshgate';
const LABEL = 'meshgate.io/enforcement';
const TEAM: Identity = { user: 'team-a-admin' };
const CREATOR: Identity = { user: 'namespace-creator' };
const PLATFORM: Identity = { user: 'platform@example.com' };
const PLATFORM_GROUP: Identity = { user: 'alice', group: 'platform-admins' };
const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
/** 'allowed', or the refusal with its quotes as the apiserver wrote them (outcome() shows the Status as JSON). */
const outcome = async (call: Promise<unknown>) => (await apiOutcome(call)).replace(/\\"/g, '"');
const ADMINS = '{"groups":["system:masters","platform-admins"],"users":["platform@example.com"]}';
/** The fields of an apiserver audit event (audit.k8s.io/v1 Event) read here. */
interface AuditEvent {
  verb: string;
  user: { username: string };
  impersonatedUser?: { username: string };
  objectRef?: { name?: string };
  annotations?: Record<string, string>;
}
/** Break-glass (issue 34 §8): who may act as the chart's break-glass account, by impersonation. */
const ONCALL = 'oncall-alice';
const BREAK_GLASS = `system:serviceaccount:${NS}:meshgate-break-glass`;
const BREAK_GLASS_VALUES = JSON.stringify({
  enabled: true,
  subjects: [{ kind: 'User', name: ONCALL, apiGroup: 'rbac.authorization.k8s.io' }],
});

describe('the enforcement policy on a real apiserver', () => {
  let cp: ControlPlane;
  let core: CoreV1Api;
  /** The apiserver's audit log (namespaces at Metadata level), to show each break-glass use is recorded. */
  let audit: string;
  const api = (who: Identity): CoreV1Api => impersonate(cp.kc, who).makeApiClient(CoreV1Api);
  const label = (who: Identity, ns: string, value: string | null) =>
    outcome(api(who).patchNamespace({ name: ns, body: { metadata: { labels: { [LABEL]: value } } } }, merge));
  const level = async (ns: string) => (await core.readNamespace({ name: ns })).metadata?.labels?.[LABEL];
  const configLevel = async () => {
    const cm = await core.readNamespacedConfigMap({ name: 'meshgate', namespace: NS });
    return (parseYaml(cm.data?.['config.yaml'] ?? '') as { enforcement?: { default?: string } }).enforcement?.default;
  };
  const helm = async (...args: string[]) => {
    const r = await cp.helm([...args, 'meshgate', chartDir, '--namespace', NS]);
    expect(r.code, r.stderr).toBe(0);
    return r;
  };
  /** Policies take effect a moment after they change: wait until an invalid value is refused for `ns`'s default. */
  const enforced = async (expectDefault: string) => {
    let n = 0;
    await waitFor(`the enforcement policy at default ${expectDefault}`, async () => {
      const probe = `probe-${expectDefault}-${n++}`;
      // Creating below the default is refused exactly when the policy's default is `expectDefault` (enforce), and an
      // invalid value is refused at any default: both tell a policy in force.
      const r = await outcome(
        api(CREATOR).createNamespace({
          body: { metadata: { name: probe, labels: { [LABEL]: expectDefault === 'enforce' ? 'warn' : 'bogus' } } },
        }),
      );
      return (
        r.includes('ValidatingAdmissionPolicy') &&
        r.includes(expectDefault === 'enforce' ? 'below the default enforce' : 'not "bogus"')
      );
    });
  };

  beforeAll(async () => {
    audit = mkdtempSync(join(tmpdir(), 'meshgate-audit-'));
    writeFileSync(
      join(audit, 'policy.yaml'),
      'apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n' +
        '  - level: Metadata\n    resources: [{group: "", resources: ["namespaces"]}]\n  - level: None\n',
    );
    cp = await startControlPlane({
      withKwok: false,
      withScheduler: false,
      apiserverArgs: [
        `--audit-policy-file=${join(audit, 'policy.yaml')}`,
        `--audit-log-path=${join(audit, 'audit.log')}`,
      ],
    });
    core = cp.kc.makeApiClient(CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: NS } } });
    await helm(
      'install',
      '--set',
      'mesh=istio',
      '--set-json',
      `enforcement.admins=${ADMINS}`,
      '--set-json',
      `enforcement.breakGlass=${BREAK_GLASS_VALUES}`,
    );
    for (const name of ['team-a', 'team-b']) await core.createNamespace({ body: { metadata: { name } } });
    // team-a's admin may edit the Namespace object team-a itself (a RoleBinding in it: the apiserver treats
    // /api/v1/namespaces/team-a as in namespace team-a), as platform tooling often grants.
    const rbac = cp.kc.makeApiClient(RbacAuthorizationV1Api);
    await rbac.createNamespacedRole({
      namespace: 'team-a',
      body: {
        metadata: { name: 'edit-own-namespace' },
        rules: [
          {
            apiGroups: [''],
            resources: ['namespaces', 'namespaces/status', 'namespaces/finalize'],
            verbs: ['get', 'patch', 'update'],
          },
        ],
      },
    });
    await rbac.createNamespacedRoleBinding({
      namespace: 'team-a',
      body: {
        metadata: { name: 'edit-own-namespace' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'edit-own-namespace' },
        subjects: [{ kind: 'User', name: TEAM.user, apiGroup: 'rbac.authorization.k8s.io' }],
      },
    });
    await grantClusterRole(
      cp.kc,
      'create-namespaces',
      [{ apiGroups: [''], resources: ['namespaces'], verbs: ['create'] }],
      CREATOR,
    );
    for (const who of [PLATFORM, PLATFORM_GROUP])
      await grantClusterRole(
        cp.kc,
        `edit-namespaces-${who.user.replace(/[^a-z]/g, '')}`,
        [{ apiGroups: [''], resources: ['namespaces'], verbs: ['get', 'patch'] }],
        who,
      );
    await enforced('audit');
  }, 300_000);

  afterAll(async () => {
    await cp?.stop();
    if (audit) rmSync(audit, { recursive: true, force: true });
  });

  it('a new install is at audit: the config says so', async () => {
    expect(await configLevel()).toBe('audit');
  });

  it('a namespace admin may raise their namespace’s level, step by step or at once', async () => {
    expect(await label(TEAM, 'team-a', 'warn')).toBe('allowed');
    expect(await label(TEAM, 'team-a', 'enforce')).toBe('allowed');
    expect(await level('team-a')).toBe('enforce');
  });

  it('…but not lower it: not to warn, not by removing the label, not through the status subresource', async () => {
    const down = await label(TEAM, 'team-a', 'warn');
    expect(down).toContain('HTTP 403');
    expect(down).toContain(
      'only group system:masters or group platform-admins or user platform@example.com or break-glass account ' +
        `${NS}/meshgate-break-glass may lower the meshgate enforcement level of namespace team-a (enforce to warn; ` +
        'team-a-admin may not): a lower level admits pods meshgate would refuse.',
    );
    // No label reads as the default (audit): removing it lowers too.
    expect(await label(TEAM, 'team-a', null)).toContain('(enforce to audit; team-a-admin may not)');
    const viaStatus = await outcome(
      api(TEAM).patchNamespaceStatus({ name: 'team-a', body: { metadata: { labels: { [LABEL]: 'audit' } } } }, merge),
    );
    expect(viaStatus).toContain('(enforce to audit; team-a-admin may not)');
    expect(await level('team-a')).toBe('enforce');
  });

  it('other changes to the namespace pass; a value that is no level is refused, even for a cluster admin', async () => {
    expect(
      await outcome(api(TEAM).patchNamespace({ name: 'team-a', body: { metadata: { labels: { team: 'a' } } } }, merge)),
    ).toBe('allowed');
    for (const who of [TEAM, { user: 'admin', group: 'system:masters' }]) {
      const r = await label(who, 'team-a', 'off');
      expect(r).toContain(
        'label meshgate.io/enforcement of namespace team-a must be enforce, warn or audit, not "off"',
      );
    }
  });

  it('enforcement.admins may lower: a listed user, a listed group, system:masters', async () => {
    expect(await label(PLATFORM, 'team-a', 'warn')).toBe('allowed');
    expect(await label(PLATFORM_GROUP, 'team-a', 'audit')).toBe('allowed');
    expect(await label(TEAM, 'team-a', 'enforce')).toBe('allowed');
    expect(await label({ user: 'root', group: 'system:masters' }, 'team-a', null)).toBe('allowed');
    expect(await level('team-a')).toBeUndefined();
  });

  it('break-glass: an on-call user in no admin group lowers a level as the break-glass account, audited; nothing else', async () => {
    expect(await label(TEAM, 'team-a', 'enforce')).toBe('allowed');
    // The on-call engineer authenticates as themself (a client certificate: no system:masters), with no RBAC of
    // their own on namespaces: as in a managed cluster whose admins no group of enforcement.admins names.
    const path = join(audit, 'oncall.kubeconfig');
    writeFileSync(
      path,
      kubeconfig(cp.server, cp.ca.certPem, cp.ca.issue({ commonName: ONCALL, usage: 'client' }), ONCALL),
    );
    const kubectl = (...args: string[]) => cp.kubectl(args, { env: { KUBECONFIG: path } });
    const lower = ['label', 'namespace', 'team-a', `${LABEL}=audit`, '--overwrite'];
    const alone = await kubectl(...lower);
    expect(alone.code).not.toBe(0);
    expect(alone.stderr).toContain('forbidden');
    // The documented command (docs/security.md, "Break-glass"; values.yaml enforcement.breakGlass):
    const glass = await kubectl(...lower, `--as=${BREAK_GLASS}`);
    expect(glass.code, glass.stderr).toBe(0);
    expect(await level('team-a')).toBe('audit');
    // The account changes levels only: not another label, not a namespace of its own.
    const other = await kubectl('label', 'namespace', 'team-a', 'istio-injection=disabled', `--as=${BREAK_GLASS}`);
    expect(other.stderr).toContain(
      `the meshgate break-glass account may change only the label ${LABEL} of namespace team-a`,
    );
    // RBAC gives it no create; its policy would refuse one too.
    const create = await kubectl('create', 'namespace', 'glass-made', `--as=${BREAK_GLASS}`);
    expect(create.stderr).toContain('cannot create resource "namespaces"');
    // Someone not named in enforcement.breakGlass.subjects cannot act as it.
    const stranger = await outcome(
      impersonate(cp.kc, { user: 'stranger' }).makeApiClient(CoreV1Api).readNamespace({ name: 'team-a' }),
    );
    expect(stranger).toContain('HTTP 403');
    const strangerPath = join(audit, 'stranger.kubeconfig');
    writeFileSync(
      strangerPath,
      kubeconfig(cp.server, cp.ca.certPem, cp.ca.issue({ commonName: 'stranger', usage: 'client' }), 'stranger'),
    );
    const imp = await cp.kubectl([...lower, `--as=${BREAK_GLASS}`], { env: { KUBECONFIG: strangerPath } });
    expect(imp.stderr).toContain('cannot impersonate resource "serviceaccounts"');
    // Audited: the apiserver's audit log names the real user, the account it acted as, and the change.
    const events = await waitFor('the break-glass change in the audit log', async () => {
      const lines = readFileSync(join(audit, 'audit.log'), 'utf8').split('\n').filter(Boolean);
      const found = lines
        .map((l) => JSON.parse(l) as AuditEvent)
        .filter((e) => e.impersonatedUser?.username === BREAK_GLASS && e.objectRef?.name === 'team-a');
      return found.some((e) => e.annotations?.['meshgate-break-glass/level']) && found;
    });
    const used = events.find((e) => e.annotations?.['meshgate-break-glass/level']) as AuditEvent;
    console.log(`audit event of the break-glass use: ${JSON.stringify(used)}`);
    expect(used.user.username).toBe(ONCALL);
    expect(used.verb).toBe('patch');
    expect(used.annotations?.['meshgate-break-glass/level']).toBe(
      `break-glass: ${BREAK_GLASS} set ${LABEL} of namespace team-a from enforce to audit`,
    );
    expect(await label({ user: 'root', group: 'system:masters' }, 'team-a', null)).toBe('allowed');
  });

  it('config.enforcement.default=enforce: unlabelled namespaces are at enforce, and nobody else may create one below it', async () => {
    await helm('upgrade', '--reuse-values', '--set', 'config.enforcement.default=enforce');
    expect(await configLevel()).toBe('enforce');
    await enforced('enforce');
    expect(await label(TEAM, 'team-a', 'warn')).toContain('(enforce to warn; team-a-admin may not)');
    const below = await outcome(
      api(CREATOR).createNamespace({ body: { metadata: { name: 'sneaky', labels: { [LABEL]: 'audit' } } } }),
    );
    expect(below).toContain('(created at audit, below the default enforce; namespace-creator may not)');
    expect(await outcome(api(CREATOR).createNamespace({ body: { metadata: { name: 'plain' } } }))).toBe('allowed');
    expect(
      await outcome(
        api(CREATOR).createNamespace({ body: { metadata: { name: 'strict', labels: { [LABEL]: 'enforce' } } } }),
      ),
    ).toBe('allowed');
  });

  it('an upgrade that does not set the level keeps it; one from a release without levels (0.1) keeps enforce', async () => {
    await helm('upgrade', '--reset-values', '--set', 'mesh=istio', '--set-json', `enforcement.admins=${ADMINS}`);
    expect(await configLevel()).toBe('enforce');
    await helm('upgrade', '--reset-values', '--set', 'mesh=istio', '--set', 'config.enforcement.default=audit');
    expect(await configLevel()).toBe('audit');
    // A 0.1 release's ConfigMap: no enforcement key (it always enforced).
    const cm = await core.readNamespacedConfigMap({ name: 'meshgate', namespace: NS });
    const config = parseYaml(cm.data?.['config.yaml'] ?? '') as Record<string, unknown>;
    delete config.enforcement;
    await core.patchNamespacedConfigMap(
      { name: 'meshgate', namespace: NS, body: { data: { 'config.yaml': JSON.stringify(config) } } },
      merge,
    );
    await helm('upgrade', '--reset-values', '--set', 'mesh=istio');
    expect(await configLevel()).toBe('enforce');
  });
});
