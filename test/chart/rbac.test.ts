// Least privilege, one role per component: exact verbs and resourceNames, bindings to the right service accounts,
// and the ValidatingAdmissionPolicies that narrow what RBAC cannot (their behaviour on a real apiserver:
// test/e2e/chart.test.ts and test/e2e/chart-policies.test.ts).
import { describe, expect, it } from 'vitest';
import { CONDITION_TYPE, EVIDENCE_ANNOTATION, UNVERIFIED_TAINT, VERIFIED_LABEL } from '../../src/contract/node.ts';
import { REDIRECT_LABEL } from '../../src/contract/names.ts';
import { keyRing } from '../../src/mark/keys.ts';
import { issueMark } from '../../src/mark/mark.ts';
import { render, type Obj } from './helm.ts';
import { profileValues } from './profiles.ts';

const rules = (r: Obj) => r.rules.map((x: Obj) => ({ ...x }));
const SA = (name: string) => `system:serviceaccount:mesh-system:${name}`;

describe('RBAC', () => {
  it('webhook: reads nodes and pods, patches only its own two webhook configurations (self-managed)', async () => {
    const r = await render(profileValues('istio'), { release: 'mesh', namespace: 'mesh-system' });
    expect(rules(r.one('ClusterRole', 'mesh-meshgate-webhook'))).toEqual([
      { apiGroups: [''], resources: ['nodes'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch'] },
      // One Event per kubectl exec or attach into a mesh container (issue 33 §1).
      { apiGroups: [''], resources: ['events'], verbs: ['create'] },
      // Which mesh ConfigMaps an installed injector reads (issue 33 §8): read-only, the configurations' clientConfig.
      {
        apiGroups: ['admissionregistration.k8s.io'],
        resources: ['mutatingwebhookconfigurations'],
        verbs: ['list', 'watch'],
      },
      {
        apiGroups: ['admissionregistration.k8s.io'],
        resources: ['mutatingwebhookconfigurations', 'validatingwebhookconfigurations'],
        resourceNames: ['mesh-meshgate'],
        verbs: ['get', 'patch'],
      },
    ]);
    expect(r.one('MutatingWebhookConfiguration').metadata.name).toBe('mesh-meshgate');
    expect(r.one('ValidatingWebhookConfiguration').metadata.name).toBe('mesh-meshgate');
    expect(r.one('ClusterRoleBinding', 'mesh-meshgate-webhook').subjects).toEqual([
      { kind: 'ServiceAccount', name: 'mesh-meshgate', namespace: 'mesh-system' },
    ]);
    expect(r.one('Deployment', 'mesh-meshgate').spec.template.spec.serviceAccountName).toBe('mesh-meshgate');
    const certs = r.one('Role', 'mesh-meshgate-webhook-certs');
    expect(rules(certs)).toEqual([
      { apiGroups: [''], resources: ['secrets'], resourceNames: ['mesh-meshgate-tls'], verbs: ['get', 'update'] },
      { apiGroups: [''], resources: ['secrets'], verbs: ['create'] },
    ]);
    // The admission mark's Secret: created once, never read or changed through the token (it is mounted).
    expect(rules(r.one('Role', 'mesh-meshgate-webhook-admission-mark'))).toEqual([
      { apiGroups: [''], resources: ['secrets'], verbs: ['create'] },
    ]);
    expect(r.one('RoleBinding', 'mesh-meshgate-webhook-admission-mark').subjects).toEqual([
      { kind: 'ServiceAccount', name: 'mesh-meshgate', namespace: 'mesh-system' },
    ]);
    expect(r.one('Deployment', 'mesh-meshgate').spec.template.spec.containers[0].args).toEqual(
      expect.arrayContaining(['--cert-secret=mesh-meshgate-tls', '--webhook-config=mesh-meshgate']),
    );
  });

  it('webhook: no list of MutatingWebhookConfigurations when it learns nothing (learnImages [] or mesh custom)', async () => {
    const readsWebhookConfigs = (r: Awaited<ReturnType<typeof render>>) =>
      r
        .one('ClusterRole', 'meshgate-webhook')
        .rules.some((x: Obj) => x.resources.includes('mutatingwebhookconfigurations') && x.verbs.includes('list'));
    expect(readsWebhookConfigs(await render(profileValues('linkerd')))).toBe(true);
    expect(
      readsWebhookConfigs(await render(profileValues('istio', { config: { learnImages: { namespaces: [] } } }))),
    ).toBe(false);
    expect(readsWebhookConfigs(await render(profileValues('custom')))).toBe(false);
  });

  it('webhook: watches namespaces only for Istio on OpenShift (proxy.idsFrom) or ambient', async () => {
    const namespaces = { apiGroups: [''], resources: ['namespaces'], verbs: ['list', 'watch'] };
    const openshift = await render(profileValues('istio', { config: { proxy: { idsFrom: 'openshift' } } }));
    expect(rules(openshift.one('ClusterRole', 'meshgate-webhook'))).toContainEqual(namespaces);
    const plain = await render(profileValues('istio', { config: { proxy: { idsFrom: 'config' } } }));
    expect(rules(plain.one('ClusterRole', 'meshgate-webhook'))).not.toContainEqual(namespaces);
  });

  it('webhook with cert-manager: no write access but creating the admission mark’s Secret (the CA injector fills caBundle)', async () => {
    const r = await render(profileValues('istio', { certs: { mode: 'cert-manager' } }));
    // Reads only, but the access Events (issue 33 §1: an Event on the pod per exec into a mesh container).
    for (const rule of r.one('ClusterRole', 'meshgate-webhook').rules)
      expect(rule.resources[0] === 'events' ? ['create'] : ['get', 'list', 'watch']).toEqual(
        expect.arrayContaining(rule.verbs),
      );
    expect(r.all('Role').map((x) => x.metadata.name)).toEqual([
      'meshgate-node-agent',
      'meshgate-repair-controller',
      'meshgate-webhook-node-leases',
      'meshgate-webhook-admission-mark',
      'meshgate-uninstall', // hooks come last
    ]);
    const none = await render(
      profileValues('istio', { certs: { mode: 'cert-manager' }, admissionMark: { create: false } }),
    );
    expect(none.all('Role').map((x) => x.metadata.name)).toEqual([
      'meshgate-node-agent',
      'meshgate-repair-controller',
      'meshgate-webhook-node-leases',
      'meshgate-uninstall',
    ]);
    expect(none.all('ValidatingAdmissionPolicy').map((p) => p.metadata.name)).not.toContain('meshgate-webhook-secret');
  });

  it('node agent: get/patch on nodes and nodes/status, bound to the agent’s service account only', async () => {
    const off = await render(profileValues('istio', { nodeAgent: { proxyGuard: { enabled: false } } }));
    expect(rules(off.one('ClusterRole', 'meshgate-node-agent'))).toEqual([
      { apiGroups: [''], resources: ['nodes', 'nodes/status'], verbs: ['get', 'patch'] },
    ]);
    expect(off.all('ValidatingAdmissionPolicy').map((p) => p.metadata.name)).not.toContain('meshgate-node-agent-pods');
    // The proxy guard (default on): its node's pods, their removal (narrowed by node-agent-pods-policy.yaml), Events.
    const r = await render(profileValues('istio'));
    expect(rules(r.one('ClusterRole', 'meshgate-node-agent'))).toEqual([
      { apiGroups: [''], resources: ['nodes', 'nodes/status'], verbs: ['get', 'patch'] },
      { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch', 'delete'] },
      { apiGroups: [''], resources: ['events'], verbs: ['create'] },
    ]);
    const policy = r.one('ValidatingAdmissionPolicy', 'meshgate-node-agent-pods');
    expect(policy.spec.matchConstraints.resourceRules).toEqual([
      { apiGroups: [''], apiVersions: ['v1'], operations: ['DELETE'], resources: ['pods'] },
    ]);
    expect(policy.spec.matchConditions[0].expression).toBe(
      'request.userInfo.username == "system:serviceaccount:meshgate:meshgate-node-agent"',
    );
    expect(r.one('ClusterRoleBinding', 'meshgate-node-agent').subjects).toEqual([
      { kind: 'ServiceAccount', name: 'meshgate-node-agent', namespace: 'meshgate' },
    ]);
  });

  it('node Leases: the agent gets, creates and renews them in the release namespace, the webhook lists and watches them', async () => {
    const r = await render(profileValues('istio'), { release: 'mesh', namespace: 'mesh-system' });
    const agent = r.one('Role', 'mesh-meshgate-node-agent');
    expect(agent.metadata.namespace).toBe('mesh-system');
    expect(rules(agent)).toEqual([
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'create', 'update'] },
    ]);
    expect(rules(r.one('Role', 'mesh-meshgate-webhook-node-leases'))).toEqual([
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['list', 'watch'] },
    ]);
    expect(r.one('RoleBinding', 'mesh-meshgate-node-agent').subjects).toEqual([
      { kind: 'ServiceAccount', name: 'mesh-meshgate-node-agent', namespace: 'mesh-system' },
    ]);
    expect(r.one('RoleBinding', 'mesh-meshgate-webhook-node-leases').subjects).toEqual([
      { kind: 'ServiceAccount', name: 'mesh-meshgate', namespace: 'mesh-system' },
    ]);
    const args = r.one('DaemonSet', 'mesh-meshgate-node-agent').spec.template.spec.containers[0].args;
    expect(args).toContain('--node-lease-namespace=mesh-system');
    // The policy that narrows the agent to its own node's Lease matches Leases of the release namespace only.
    const policy = r.one('ValidatingAdmissionPolicy', 'mesh-meshgate-node-leases');
    expect(policy.spec.matchConstraints.namespaceSelector).toEqual({
      matchLabels: { 'kubernetes.io/metadata.name': 'mesh-system' },
    });
  });

  it('repair controller: reads and deletes pods, writes Events, renews its own Lease; nodes only to withdraw verdicts', async () => {
    const r = await render(profileValues('linkerd'), { release: 'mesh', namespace: 'mesh-system' });
    expect(rules(r.one('ClusterRole', 'mesh-meshgate-repair-controller'))).toEqual([
      { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch', 'delete'] },
      { apiGroups: [''], resources: ['events'], verbs: ['create'] },
      // policyReports (the default): its own PolicyReports, held to them by the repair-controller-reports policy.
      {
        apiGroups: ['wgpolicyk8s.io'],
        resources: ['policyreports'],
        verbs: ['get', 'list', 'create', 'patch', 'delete'],
      },
      // unmeshedPods: report (the default) reads which namespaces are opted in (test/chart/repair-features.test.ts).
      { apiGroups: [''], resources: ['namespaces'], verbs: ['list', 'watch'] },
      {
        apiGroups: ['admissionregistration.k8s.io'],
        resources: ['mutatingwebhookconfigurations'],
        resourceNames: ['mesh-meshgate'],
        verbs: ['get'],
      },
    ]);
    const role = r.one('Role', 'mesh-meshgate-repair-controller');
    expect(role.metadata.namespace).toBe('mesh-system');
    expect(rules(role)).toEqual([
      {
        apiGroups: ['coordination.k8s.io'],
        resources: ['leases'],
        resourceNames: ['mesh-meshgate-repair-controller'],
        verbs: ['get', 'update'],
      },
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create'] },
    ]);
    for (const kind of ['ClusterRoleBinding', 'RoleBinding']) {
      expect(r.one(kind, 'mesh-meshgate-repair-controller').subjects).toEqual([
        { kind: 'ServiceAccount', name: 'mesh-meshgate-repair-controller', namespace: 'mesh-system' },
      ]);
    }
    expect(r.one('Deployment', 'mesh-meshgate-repair-controller').spec.template.spec.serviceAccountName).toBe(
      'mesh-meshgate-repair-controller',
    );
    const withdraw = await render(
      profileValues('linkerd', { repairController: { withdrawVerdicts: true, unmeshedPods: 'off' } }),
    );
    expect(rules(withdraw.one('ClusterRole', 'meshgate-repair-controller')).slice(3)).toEqual([
      { apiGroups: [''], resources: ['nodes'], verbs: ['get', 'list', 'watch', 'patch'] },
      { apiGroups: [''], resources: ['nodes/status'], verbs: ['patch'] },
    ]);
  });

  it('no role uses a wildcard, and every binding names one of meshgate’s own service accounts', async () => {
    const r = await render(profileValues('istio', { repairController: { withdrawVerdicts: true } }));
    for (const role of [...r.all('ClusterRole'), ...r.all('Role')]) {
      for (const rule of role.rules) expect(JSON.stringify(rule), role.metadata.name).not.toContain('"*"');
    }
    const accounts = r.all('ServiceAccount').map((s) => s.metadata.name);
    expect(accounts).toEqual([
      'meshgate-break-glass',
      'meshgate-node-agent',
      'meshgate-repair-controller',
      'meshgate',
      'meshgate-uninstall',
    ]);
    for (const b of [...r.all('ClusterRoleBinding'), ...r.all('RoleBinding')]) {
      for (const s of b.subjects) expect(accounts).toContain(s.name);
    }
  });
});

describe('the uninstall hook (post-delete)', () => {
  it('a Job with its own service account and roles, all hook objects that helm deletes when it succeeds', async () => {
    const r = await render(profileValues('istio'), { release: 'mesh', namespace: 'mesh-system' });
    const hooks = r.docs.filter((d) => d.metadata.annotations?.['helm.sh/hook'] === 'post-delete');
    expect(hooks.map((d) => `${d.kind}/${d.metadata.name}`).sort()).toEqual([
      'ClusterRole/mesh-meshgate-uninstall',
      'ClusterRoleBinding/mesh-meshgate-uninstall',
      'Job/mesh-meshgate-uninstall',
      'Role/mesh-meshgate-uninstall',
      'RoleBinding/mesh-meshgate-uninstall',
      'ServiceAccount/mesh-meshgate-uninstall',
    ]);
    for (const h of hooks) {
      expect(h.metadata.annotations['helm.sh/hook-delete-policy'], h.kind).toBe('before-hook-creation,hook-succeeded');
      // Its service account and roles exist before the Job starts.
      expect(h.metadata.annotations['helm.sh/hook-weight'], h.kind).toBe(h.kind === 'Job' ? '0' : '-10');
    }
    const job = r.one('Job', 'mesh-meshgate-uninstall');
    const pod = job.spec.template.spec;
    expect(pod.serviceAccountName).toBe('mesh-meshgate-uninstall');
    expect(pod.restartPolicy).toBe('Never');
    expect(pod.containers[0].args).toEqual([
      'uninstall',
      '--namespace=mesh-system',
      '--name=mesh-meshgate',
      '--mark-secret=mesh-meshgate-admission-mark',
      '--timeout=2m',
    ]);
    // Its own wait plus a minute.
    expect(job.spec.activeDeadlineSeconds).toBe(180);
    for (const kind of ['ClusterRoleBinding', 'RoleBinding'])
      expect(r.one(kind, 'mesh-meshgate-uninstall').subjects).toEqual([
        { kind: 'ServiceAccount', name: 'mesh-meshgate-uninstall', namespace: 'mesh-system' },
      ]);
  });

  it('RBAC: Node keys and pinned pods cluster-wide; only meshgate’s own Secrets, Lease, workloads and webhook configurations by name', async () => {
    const r = await render(profileValues('istio'), { release: 'mesh', namespace: 'mesh-system' });
    expect(rules(r.one('ClusterRole', 'mesh-meshgate-uninstall'))).toEqual([
      { apiGroups: [''], resources: ['nodes'], verbs: ['get', 'list', 'patch'] },
      { apiGroups: [''], resources: ['nodes/status'], verbs: ['patch'] },
      { apiGroups: [''], resources: ['pods'], verbs: ['list', 'delete'] },
      {
        apiGroups: ['admissionregistration.k8s.io'],
        resources: ['mutatingwebhookconfigurations', 'validatingwebhookconfigurations'],
        resourceNames: ['mesh-meshgate'],
        verbs: ['get'],
      },
      // What it leaves (the namespaces' levels, listed) and meshgate's PolicyReports (deleted).
      { apiGroups: [''], resources: ['namespaces'], verbs: ['list'] },
      { apiGroups: ['wgpolicyk8s.io'], resources: ['policyreports'], verbs: ['list', 'delete'] },
    ]);
    const removing = await render(profileValues('istio', { uninstall: { removeEnforcementLabels: true } }));
    expect(rules(removing.one('ClusterRole', 'meshgate-uninstall'))).toContainEqual({
      apiGroups: [''],
      resources: ['namespaces'],
      verbs: ['list', 'patch'],
    });
    expect(removing.one('Job', 'meshgate-uninstall').spec.template.spec.containers[0].args).toContain(
      '--remove-enforcement-labels',
    );
    expect(rules(r.one('Role', 'mesh-meshgate-uninstall'))).toEqual([
      {
        apiGroups: ['apps'],
        resources: ['deployments', 'daemonsets'],
        resourceNames: ['mesh-meshgate', 'mesh-meshgate-node-agent', 'mesh-meshgate-repair-controller'],
        verbs: ['get'],
      },
      {
        apiGroups: [''],
        resources: ['secrets'],
        resourceNames: ['mesh-meshgate-tls', 'mesh-meshgate-admission-mark'],
        verbs: ['get', 'delete'],
      },
      {
        apiGroups: ['coordination.k8s.io'],
        resources: ['leases'],
        resourceNames: ['mesh-meshgate-repair-controller'],
        verbs: ['get', 'delete'],
      },
    ]);
  });

  it('uninstall.enabled false: no hook at all', async () => {
    const r = await render(profileValues('istio', { uninstall: { enabled: false } }));
    expect(r.docs.filter((d) => d.metadata.annotations?.['helm.sh/hook'] === 'post-delete')).toEqual([]);
  });
});

describe('admission policies', () => {
  it('every policy fails closed and is bound with Deny', async () => {
    const r = await render(profileValues('istio'));
    const names = r
      .all('ValidatingAdmissionPolicy')
      .map((p) => p.metadata.name)
      .sort();
    expect(names).toEqual([
      'meshgate-break-glass',
      'meshgate-enforcement',
      'meshgate-node-agent-pods',
      'meshgate-node-leases',
      'meshgate-node-verdict',
      'meshgate-node-writers',
      'meshgate-repair-controller',
      'meshgate-repair-controller-reports',
      'meshgate-webhook-configs',
      'meshgate-webhook-secret',
    ]);
    for (const p of r.all('ValidatingAdmissionPolicy')) {
      expect(p.spec.failurePolicy).toBe('Fail');
      expect(r.one('ValidatingAdmissionPolicyBinding', p.metadata.name).spec).toEqual({
        policyName: p.metadata.name,
        validationActions: ['Deny'],
      });
    }
  });

  it('the node policies match nodes and nodes/status, name meshgate’s own writers, and the very keys of the Node contract', async () => {
    const r = await render(profileValues('istio'), { release: 'mesh', namespace: 'mesh-system' });
    const writers = r.one('ValidatingAdmissionPolicy', 'mesh-meshgate-node-writers');
    expect(writers.spec.matchConstraints.resourceRules).toEqual([
      { apiGroups: [''], apiVersions: ['v1'], operations: ['UPDATE'], resources: ['nodes', 'nodes/status'] },
    ]);
    expect(writers.spec.matchConditions[0].expression).toBe(
      `request.userInfo.username in ["${SA('mesh-meshgate-node-agent')}", "${SA('mesh-meshgate-repair-controller')}"]`,
    );
    expect(JSON.stringify(writers.spec)).toContain("request.userInfo.extra['authentication.kubernetes.io/node-name']");
    const verdict = r.one('ValidatingAdmissionPolicy', 'mesh-meshgate-node-verdict');
    expect(verdict.spec.matchConstraints.resourceRules).toEqual([
      { apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['nodes', 'nodes/status'] },
    ]);
    expect(verdict.spec.matchConditions).toEqual([
      { name: 'not-the-node-agent', expression: `request.userInfo.username != "${SA('mesh-meshgate-node-agent')}"` },
    ]);
    for (const p of [writers, verdict]) {
      const text = JSON.stringify(p.spec);
      for (const key of [VERIFIED_LABEL, EVIDENCE_ANNOTATION, UNVERIFIED_TAINT.key, CONDITION_TYPE])
        expect(text).toContain(`'${key}'`);
    }
    expect(JSON.stringify(verdict.spec)).toContain(SA('mesh-meshgate-repair-controller'));
  });

  it('the webhook policies: its two configurations (caBundle only) and its own TLS Secret', async () => {
    const r = await render(profileValues('istio'), { release: 'mesh', namespace: 'mesh-system' });
    const configs = r.one('ValidatingAdmissionPolicy', 'mesh-meshgate-webhook-configs');
    expect(configs.spec.matchConstraints.resourceRules[0].resources).toEqual([
      'mutatingwebhookconfigurations',
      'validatingwebhookconfigurations',
    ]);
    expect(configs.spec.matchConditions[0].expression).toBe(`request.userInfo.username == "${SA('mesh-meshgate')}"`);
    expect(JSON.stringify(configs.spec)).toContain('request.name == \\"mesh-meshgate\\"');
    const secret = r.one('ValidatingAdmissionPolicy', 'mesh-meshgate-webhook-secret');
    expect(JSON.stringify(secret.spec)).toContain('object.metadata.name == \\"mesh-meshgate-tls\\"');
    expect(JSON.stringify(secret.spec)).toContain('object.metadata.name == \\"mesh-meshgate-admission-mark\\"');
    // cert-manager mode: the webhook writes no TLS Secret, only creates the admission mark's.
    const cm = (await render(profileValues('istio', { certs: { mode: 'cert-manager' } }))).one(
      'ValidatingAdmissionPolicy',
      'meshgate-webhook-secret',
    );
    expect(cm.spec.variables[0].expression).toMatch(/^false && /);
    expect(cm.spec.validations[0].messageExpression).toContain(
      'the meshgate webhook may only create its admission mark Secret meshgate/meshgate-admission-mark, not',
    );
  });

  it('the repair policy: DELETE of pods by the repair controller, never in excluded namespaces, only labelled, owned, failed pods', async () => {
    const r = await render(profileValues('istio', { config: { systemNamespaces: ['kube-system', 'ops'] } }), {
      release: 'mesh',
      namespace: 'mesh-system',
    });
    const p = r.one('ValidatingAdmissionPolicy', 'mesh-meshgate-repair-controller');
    expect(p.spec.matchConstraints.resourceRules).toEqual([
      { apiGroups: [''], apiVersions: ['v1'], operations: ['DELETE'], resources: ['pods'] },
    ]);
    expect(p.spec.matchConditions[0].expression).toBe(
      `request.userInfo.username == "${SA('mesh-meshgate-repair-controller')}"`,
    );
    const text = JSON.stringify(p.spec);
    expect(text).toContain('request.namespace in [\\"mesh-system\\",\\"kube-system\\",\\"ops\\"]');
    expect(text).toContain(`'${REDIRECT_LABEL}' in oldObject.metadata`);
    expect(text).toContain("s.name == 'istio-validation'");
    expect(p.spec.validations).toHaveLength(5);
    // CEL cannot compute the mark's HMAC: the policy holds it to the form meshgate writes (src/mark/mark.ts).
    const form = p.spec.validations[2].expression.match(/matches\('([^']+)'\)/)[1];
    const re = new RegExp(form);
    const mark = issueMark(keyRing(Buffer.alloc(32, 7)), 'shop', 1_767_225_600);
    expect(re.test(mark)).toBe(true);
    for (const bad of [mark.slice(0, -1), `${mark}x`, mark.replace('v1.', 'v2.'), '', 'v1.abc'])
      expect(re.test(bad), bad).toBe(false);
  });

  it('disabling the agent or the repair controller drops its workload, RBAC and repair policy; the node policies stay', async () => {
    const r = await render(
      profileValues('istio', { nodeAgent: { enabled: false }, repairController: { enabled: false } }),
    );
    expect(r.all('DaemonSet')).toEqual([]);
    expect(r.all('Deployment').map((d) => d.metadata.name)).toEqual(['meshgate']);
    expect(r.all('ServiceAccount').map((s) => s.metadata.name)).toEqual([
      'meshgate-break-glass',
      'meshgate',
      'meshgate-uninstall',
    ]);
    expect(
      r
        .all('ValidatingAdmissionPolicy')
        .map((p) => p.metadata.name)
        .sort(),
    ).toEqual([
      'meshgate-break-glass',
      'meshgate-enforcement',
      'meshgate-node-leases',
      'meshgate-node-verdict',
      'meshgate-node-writers',
      'meshgate-webhook-configs',
      'meshgate-webhook-secret',
    ]);
  });
});

describe('break-glass (issue 34 §8)', () => {
  it('a ServiceAccount that is an enforcement admin, may patch namespaces, only their level, used by impersonation', async () => {
    const oncall = { kind: 'Group', name: 'platform-oncall', apiGroup: 'rbac.authorization.k8s.io' };
    const r = await render(
      profileValues('istio', { enforcement: { breakGlass: { enabled: true, subjects: [oncall] } } }),
      {
        release: 'mesh',
        namespace: 'mesh-system',
      },
    );
    const sa = r.one('ServiceAccount', 'mesh-meshgate-break-glass');
    expect(sa.automountServiceAccountToken).toBe(false);
    expect(rules(r.one('ClusterRole', 'mesh-meshgate-break-glass'))).toEqual([
      { apiGroups: [''], resources: ['namespaces'], verbs: ['get', 'list', 'patch', 'update'] },
    ]);
    expect(r.one('ClusterRoleBinding', 'mesh-meshgate-break-glass').subjects).toEqual([
      { kind: 'ServiceAccount', name: 'mesh-meshgate-break-glass', namespace: 'mesh-system' },
    ]);
    expect(rules(r.one('Role', 'mesh-meshgate-break-glass-impersonate'))).toEqual([
      {
        apiGroups: [''],
        resources: ['serviceaccounts'],
        resourceNames: ['mesh-meshgate-break-glass'],
        verbs: ['impersonate'],
      },
    ]);
    expect(r.one('RoleBinding', 'mesh-meshgate-break-glass-impersonate').subjects).toEqual([oncall]);
    const enforcement = JSON.stringify(r.one('ValidatingAdmissionPolicy', 'mesh-meshgate-enforcement').spec);
    expect(enforcement).toContain(SA('mesh-meshgate-break-glass'));
    const own = r.one('ValidatingAdmissionPolicy', 'mesh-meshgate-break-glass');
    expect(own.spec.matchConditions[0].expression).toBe(
      `request.userInfo.username == "${SA('mesh-meshgate-break-glass')}"`,
    );
    expect(own.spec.auditAnnotations.map((a: Obj) => a.key)).toEqual(['level']);
    // No subjects: no Role to impersonate it (cluster admins still may); off: none of it, and not an admin.
    const plain = await render(profileValues('istio'));
    expect(plain.all('Role').map((x) => x.metadata.name)).not.toContain('meshgate-break-glass-impersonate');
    const off = await render(profileValues('istio', { enforcement: { breakGlass: { enabled: false, subjects: [] } } }));
    expect(off.all('ServiceAccount').map((x) => x.metadata.name)).not.toContain('meshgate-break-glass');
    expect(JSON.stringify(off.one('ValidatingAdmissionPolicy', 'meshgate-enforcement').spec)).not.toContain(
      'break-glass',
    );
  });
});
