// `meshgate check --pre` computes the chart's webhook entries itself (src/check/profile-entries.ts), since nothing is
// installed yet: here they are held equal to what the real helm renders — names, selectors and paths — per mesh
// profile, with pod opt-in, other system namespaces, another release namespace and every default level; and the
// failurePolicy of each (audit entries fail open: issue 34 §2).
import { describe, expect, it } from 'vitest';
import { buildConfig } from '../../src/config/load.ts';
import { chartEntries } from '../../src/check/profile-entries.ts';
import { render, type Obj } from './helm.ts';
import { MESHES, profileValues } from './profiles.ts';

const CASES: Array<[string, Obj]> = [
  ['defaults', {}],
  [
    'pod opt-in, enforce',
    { injection: { podOptInNamespaceLabels: { team: 'a' } }, enforcement: { default: 'enforce' } },
  ],
  ['other system namespaces, warn', { systemNamespaces: ['ops', 'kube-system'], enforcement: { default: 'warn' } }],
];

describe.each(MESHES)('the chart’s webhook entries as check --pre computes them, mesh %s', (mesh) => {
  it.each(CASES)('%s: equal to the rendered MutatingWebhookConfiguration', async (_name, config) => {
    const values = profileValues(mesh, { config });
    const r = await render(values, { release: 'mg', namespace: 'mesh-system' });
    const rendered = r.one('MutatingWebhookConfiguration').webhooks.map((w: Obj) => ({
      name: w.name.replace(/\.mutate\.meshgate\.io$/, ''),
      path: w.clientConfig.service.path,
      failurePolicy: w.failurePolicy,
      namespaceSelector: w.namespaceSelector,
      objectSelector: w.objectSelector,
    }));
    const cfg = buildConfig({ mesh, ...values.config, meshNamespace: 'mesh-system' });
    const computed = chartEntries(cfg, 'mg-meshgate').map((e) => ({
      name: e.name,
      path: e.service?.path,
      failurePolicy: e.failurePolicy,
      namespaceSelector: e.namespaceSelector,
      objectSelector: e.objectSelector,
    }));
    expect(computed).toEqual(rendered);
    expect(computed.length).toBeGreaterThanOrEqual(3);
  });
});
