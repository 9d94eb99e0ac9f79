// kubectl exec and attach into the mesh's containers (issue 33 §1), as the chart sends them to meshgate: one
// `….connect.meshgate.io` entry per namespace entry and level (the same selector and route as its pod entry), only
// for a CONNECT naming a mesh container (the webhook's own list of names, src/policy/validate/access.ts) or none; no entry for
// the pod-label entries (a CONNECT's options carry no labels). And the webhook may post the access Events.
import { beforeAll, describe, expect, it } from 'vitest';
import { compileConfig } from '../../src/config/compile.ts';
import { buildConfig } from '../../src/config/load.ts';
import { meshContainerNames } from '../../src/policy/validate/access.ts';
import { type Obj, type Rendered, render } from './helm.ts';
import { CUSTOM_REQUIRED, MESHES, profileValues } from './profiles.ts';

const CONNECT = '.connect.meshgate.io';
const connectHooks = (r: Rendered): Obj[] =>
  r.one('ValidatingWebhookConfiguration').webhooks.filter((w: Obj) => w.name.endsWith(CONNECT));
const podHooks = (r: Rendered): Obj[] =>
  r.one('ValidatingWebhookConfiguration').webhooks.filter((w: Obj) => w.name.endsWith('.validate.meshgate.io'));
/** The names the match condition lets through, read back from its expression. */
function namesIn(w: Obj): string[] {
  const [c] = w.matchConditions;
  expect(c.name).toBe('mesh-containers-only');
  const m = /^object\.\?container\.orValue\(''\) in (\[.*\])$/.exec(c.expression);
  expect(m, c.expression).not.toBeNull();
  return JSON.parse(m![1]);
}

describe.each(MESHES)('exec and attach entries, mesh %s', (mesh) => {
  let r: Rendered;
  beforeAll(async () => {
    r = await render(profileValues(mesh, { config: { injection: { podOptInNamespaceLabels: { team: 'a' } } } }));
  });

  it('one per namespace entry and level, with its selector and route, and none for pod-label entries', () => {
    const pods = podHooks(r);
    const byNamespace = pods.filter((w) => !w.objectSelector);
    expect(connectHooks(r).map((w) => w.name)).toEqual(
      byNamespace.map((w) => w.name.replace('.validate.meshgate.io', CONNECT)),
    );
    expect(pods.some((w) => w.objectSelector)).toBe(true);
    for (const [i, w] of connectHooks(r).entries()) {
      expect(w.namespaceSelector).toEqual(byNamespace[i].namespaceSelector);
      expect(w.clientConfig).toEqual(byNamespace[i].clientConfig);
      expect(w.objectSelector).toBeUndefined();
      expect(w.rules).toEqual([
        {
          apiGroups: [''],
          apiVersions: ['v1'],
          operations: ['CONNECT'],
          resources: ['pods/exec', 'pods/attach'],
          scope: 'Namespaced',
        },
      ]);
      // Like the pod entry of its level: at audit fail open with the audit timeout (issue 34 §2).
      const audit = w.clientConfig.service.path.endsWith('/audit');
      expect(w).toMatchObject({
        failurePolicy: audit ? 'Ignore' : 'Fail',
        matchPolicy: 'Equivalent',
        sideEffects: 'NoneOnDryRun',
        timeoutSeconds: audit ? 2 : 10,
        admissionReviewVersions: ['v1'],
      });
      expect(w).toMatchObject({
        failurePolicy: byNamespace[i].failurePolicy,
        timeoutSeconds: byNamespace[i].timeoutSeconds,
      });
    }
  });

  it('only a CONNECT naming a mesh container, or none, reaches meshgate: the names the webhook judges by', () => {
    const want = [...meshContainerNames(compileConfig(buildConfig({ mesh, ...profileValues(mesh).config })))];
    for (const w of connectHooks(r)) expect(namesIn(w).sort()).toEqual(['', ...want].sort());
  });

  it('the webhook may create Events (one per access), and nothing more on them', () => {
    const role = r.one('ClusterRole', 'meshgate-webhook');
    expect(role.rules).toContainEqual({ apiGroups: [''], resources: ['events'], verbs: ['create'] });
  });
});

describe('exec and attach entries (values)', () => {
  it('configured container names are sent too', async () => {
    const values = profileValues('custom', {
      config: { proxy: { ...CUSTOM_REQUIRED.proxy, name: 'envoy' }, validator: { name: 'check-net' } },
    });
    const r = await render(values);
    const names = namesIn(connectHooks(r)[0]);
    expect(names).toContain('envoy');
    expect(names).toContain('check-net');
    const want = meshContainerNames(compileConfig(buildConfig({ mesh: 'custom', ...values.config })));
    expect(names.sort()).toEqual(['', ...want].sort());
  });

  it('webhook.matchConditions (written for pods) are not applied to a CONNECT', async () => {
    const mc = { name: 'not-load-tests', expression: "!('load-test' in object.metadata.?labels.orValue({}))" };
    const r = await render(profileValues('istio', { webhook: { matchConditions: [mc] } }));
    for (const w of connectHooks(r))
      expect(w.matchConditions.map((c: Obj) => c.name)).toEqual(['mesh-containers-only']);
  });
});
