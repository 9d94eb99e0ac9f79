// Issue 33 §6 in the chart: the enforcement policy's "leaving the guarded set" rules are derived from the same
// entries as the webhook configurations (webhook.selectors or the profile's) and, with ambient on, from
// config.ambient.enablementSelectors, whose chart default is meshgate's own (src/config/defaults.ts); the repair
// controller gets what deciding about an ambient pod that lost its capture needs. What the rules do on a real
// apiserver: test/e2e/access.test.ts.
import { describe, expect, it } from 'vitest';
import { PROFILE_DEFAULTS } from '../../src/config/defaults.ts';
import { type Obj, render } from './helm.ts';
import { profileValues } from './profiles.ts';

const policy = (r: Awaited<ReturnType<typeof render>>) => r.one('ValidatingAdmissionPolicy', 'meshgate-enforcement');
const variable = (p: Obj, name: string): string | undefined =>
  p.spec.variables.find((v: Obj) => v.name === name)?.expression;

describe('the guarded-namespace rules of the enforcement policy', () => {
  it('istio: any of the three namespace entries guards; the message names their labels', async () => {
    const p = policy(await render(profileValues('istio')));
    const guarded = variable(p, 'isGuarded')!;
    for (const key of ['meshgate.io/inject', 'istio-injection', 'istio.io/rev'])
      expect(guarded).toContain(`'${key}' in variables.newLabels`);
    expect(guarded).not.toContain('meshgate.io/enforcement');
    expect(guarded).not.toContain('sidecar.istio.io/inject');
    expect(variable(p, 'wasGuarded')).toBe(
      `oldObject != null && ${guarded.replaceAll('variables.newLabels', 'variables.oldLabels')}`,
    );
    const rule = p.spec.validations.find((v: Obj) => v.expression.includes('variables.wasGuarded'));
    expect(rule.expression).toBe('!variables.wasGuarded || variables.isGuarded || variables.admin');
    expect(rule.messageExpression).toContain('(labels istio-injection, istio.io/rev, meshgate.io/inject)');
    // Ambient off: no ambient rule.
    expect(variable(p, 'wasAmbient')).toBeUndefined();
  });

  it('webhook.selectors replace the profile’s: the policy follows them', async () => {
    const p = policy(
      await render(
        profileValues('linkerd', {
          webhook: { selectors: [{ name: 'teams', namespaceSelector: { matchLabels: { mesh: 'on' } } }] },
        }),
      ),
    );
    expect(variable(p, 'isGuarded')).toContain(
      "('mesh' in variables.newLabels && variables.newLabels['mesh'] == 'on')",
    );
    expect(variable(p, 'isGuarded')).not.toContain('meshgate.io/inject');
  });

  it('ambient: the chart’s default enablement selectors are meshgate’s own', async () => {
    const implicit = policy(await render(profileValues('istio', { config: { ambient: { enabled: true } } })));
    const explicit = policy(
      await render(
        profileValues('istio', {
          config: {
            ambient: { enabled: true, enablementSelectors: PROFILE_DEFAULTS.istio.ambient.enablementSelectors },
          },
        }),
      ),
    );
    expect(implicit).toEqual(explicit);
    expect(variable(implicit, 'isAmbient')).toBe(
      "variables.isGuarded && ((('istio.io/dataplane-mode' in variables.newLabels && " +
        "variables.newLabels['istio.io/dataplane-mode'] == 'ambient')))",
    );
    const selectorsOnPodsOnly = policy(
      await render(
        profileValues('istio', {
          config: {
            ambient: {
              enabled: true,
              enablementSelectors: [{ podSelector: { matchLabels: { 'istio.io/dataplane-mode': 'ambient' } } }],
            },
          },
        }),
      ),
    );
    // No selector reads namespace labels: no namespace change takes pods out.
    expect(variable(selectorsOnPodsOnly, 'isAmbient')).toBe('variables.isGuarded && false');
  });

  it('ambient: the repair controller reads namespaces and the webhook selectors, and may delete pods that lost capture', async () => {
    const r = await render(profileValues('istio', { config: { ambient: { enabled: true } } }));
    const rules = r.one('ClusterRole', 'meshgate-repair-controller').rules;
    expect(rules).toContainEqual({ apiGroups: [''], resources: ['namespaces'], verbs: ['get'] });
    expect(rules).toContainEqual({
      apiGroups: ['admissionregistration.k8s.io'],
      resources: ['mutatingwebhookconfigurations'],
      resourceNames: ['meshgate'],
      verbs: ['get'],
    });
    expect(r.one('Deployment', 'meshgate-repair-controller').spec.template.spec.containers[0].args).toContain(
      '--webhook-config=meshgate',
    );
    const deletes = r.one('ValidatingAdmissionPolicy', 'meshgate-repair-controller');
    expect(variable(deletes, 'captureLost')).toContain("oldObject.spec.initContainers[0].args[0] == '--ambient'");
    // With the unmeshed-pod sweep off, ambient alone passes --webhook-config.
    const sweepOff = { repairController: { unmeshedPods: 'off' } };
    const ambientOnly = await render(profileValues('istio', { ...sweepOff, config: { ambient: { enabled: true } } }));
    expect(ambientOnly.one('Deployment', 'meshgate-repair-controller').spec.template.spec.containers[0].args).toContain(
      '--webhook-config=meshgate',
    );
    const off = await render(profileValues('istio', sweepOff));
    expect(variable(off.one('ValidatingAdmissionPolicy', 'meshgate-repair-controller'), 'captureLost')).toBe('false');
    expect(off.one('Deployment', 'meshgate-repair-controller').spec.template.spec.containers[0].args).not.toContain(
      '--webhook-config=meshgate',
    );
  });
});
