// Least privilege, one role per component: exact verbs and resourceNames, bindings to the right service accounts,
// and the ValidatingAdmissionPolicy that narrows the agent's node patch rights (its behaviour: test/e2e/chart.test.ts).
import { describe, expect, it } from 'vitest';
import { CONDITION_TYPE, EVIDENCE_ANNOTATION, UNVERIFIED_TAINT, VERIFIED_LABEL } from '../../src/agent/node-state.ts';
import { render, type Obj } from './helm.ts';

const rules = (r: Obj) => r.rules.map((x: Obj) => ({ ...x }));

describe('RBAC', () => {
  it('webhook: reads nodes and pods, patches only its own two webhook configurations (self-managed)', async () => {
    const r = await render({}, { release: 'mesh', namespace: 'mesh-system' });
    const role = r.one('ClusterRole', 'mesh-meshgate-webhook');
    expect(rules(role)).toEqual([
      { apiGroups: [''], resources: ['nodes'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch'] },
      {
        apiGroups: ['admissionregistration.k8s.io'],
        resources: ['mutatingwebhookconfigurations', 'validatingwebhookconfigurations'],
        resourceNames: ['mesh-meshgate'],
        verbs: ['get', 'patch'],
      },
    ]);
    // The resourceName is the configurations' real name.
    expect(r.one('MutatingWebhookConfiguration').metadata.name).toBe('mesh-meshgate');
    expect(r.one('ValidatingWebhookConfiguration').metadata.name).toBe('mesh-meshgate');
    const binding = r.one('ClusterRoleBinding', 'mesh-meshgate-webhook');
    expect(binding.roleRef).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'mesh-meshgate-webhook' });
    expect(binding.subjects).toEqual([{ kind: 'ServiceAccount', name: 'mesh-meshgate', namespace: 'mesh-system' }]);
    expect(r.one('Deployment').spec.template.spec.serviceAccountName).toBe('mesh-meshgate');
    // The shared certificate Secret: get/update only that Secret, create (unrestrictable by name) in its namespace.
    const certs = r.one('Role', 'mesh-meshgate-webhook-certs');
    expect(certs.metadata.namespace).toBe('mesh-system');
    expect(rules(certs)).toEqual([
      { apiGroups: [''], resources: ['secrets'], resourceNames: ['mesh-meshgate-tls'], verbs: ['get', 'update'] },
      { apiGroups: [''], resources: ['secrets'], verbs: ['create'] },
    ]);
    expect(r.one('RoleBinding', 'mesh-meshgate-webhook-certs').subjects).toEqual([{ kind: 'ServiceAccount', name: 'mesh-meshgate', namespace: 'mesh-system' }]);
    const args = r.one('Deployment').spec.template.spec.containers[0].args;
    expect(args).toEqual(expect.arrayContaining(['--cert-secret=mesh-meshgate-tls', '--webhook-config=mesh-meshgate']));
  });

  it('webhook with cert-manager: no write access at all (the CA injector fills caBundle)', async () => {
    const role = (await render({ certs: { mode: 'cert-manager' } })).one('ClusterRole', 'meshgate-webhook');
    for (const rule of role.rules) expect(rule.verbs).toEqual(['get', 'list', 'watch']);
    expect((await render({ certs: { mode: 'cert-manager' } })).all('Role')).toEqual([]);
  });

  it('node agent: get/patch on nodes and nodes/status, bound to the agent’s service account only', async () => {
    const r = await render();
    expect(rules(r.one('ClusterRole', 'meshgate-node-agent'))).toEqual([
      { apiGroups: [''], resources: ['nodes', 'nodes/status'], verbs: ['get', 'patch'] },
    ]);
    const binding = r.one('ClusterRoleBinding', 'meshgate-node-agent');
    expect(binding.roleRef.name).toBe('meshgate-node-agent');
    expect(binding.subjects).toEqual([{ kind: 'ServiceAccount', name: 'meshgate-node-agent', namespace: 'meshgate' }]);
    // The only namespaced grant is the webhook's certificate Secret, never the agent.
    expect(r.all('Role').map((x: Obj) => x.metadata.name)).toEqual(['meshgate-webhook-certs']);
    expect(r.all('RoleBinding').flatMap((x: Obj) => x.subjects.map((s: Obj) => s.name))).toEqual(['meshgate']);
  });

  it('the node-agent policy matches the agent’s own username and compares the token’s node claim', async () => {
    const r = await render({}, { release: 'mesh', namespace: 'mesh-system' });
    const policy = r.one('ValidatingAdmissionPolicy', 'mesh-meshgate-node-agent');
    expect(policy.apiVersion).toBe('admissionregistration.k8s.io/v1');
    expect(policy.spec.failurePolicy).toBe('Fail');
    expect(policy.spec.matchConstraints.resourceRules).toEqual([
      { apiGroups: [''], apiVersions: ['v1'], operations: ['UPDATE'], resources: ['nodes', 'nodes/status'] },
    ]);
    expect(policy.spec.matchConditions).toEqual([
      { name: 'is-meshgate-node-agent', expression: "request.userInfo.username == \"system:serviceaccount:mesh-system:mesh-meshgate-node-agent\"" },
    ]);
    const text = JSON.stringify(policy.spec);
    expect(text).toContain("request.userInfo.extra['authentication.kubernetes.io/node-name']");
    // The very keys the agent writes (src/agent/node-state.ts), so a rename cannot leave the policy behind.
    for (const key of [VERIFIED_LABEL, EVIDENCE_ANNOTATION, UNVERIFIED_TAINT.key, UNVERIFIED_TAINT.effect, CONDITION_TYPE]) {
      expect(text).toContain(`'${key}'`);
    }
    const binding = r.one('ValidatingAdmissionPolicyBinding', 'mesh-meshgate-node-agent');
    expect(binding.spec).toEqual({ policyName: 'mesh-meshgate-node-agent', validationActions: ['Deny'] });
  });
});
