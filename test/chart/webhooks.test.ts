// The two webhook configurations as helm renders them for each mesh profile: which requests each entry receives,
// that the entries are disjoint (no pod reviewed twice) and never select meshgate's own or the system namespaces,
// the routine-update filter, reinvocation, and the certificate wiring of both modes.
import { beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { render, type Obj, type Rendered } from './helm.ts';
import { MESHES, profileValues } from './profiles.ts';
import { selecting, type Labels } from './selectors.ts';

const NAME_EXCLUSION = 'kubernetes.io/metadata.name';
const EXCLUDED = ['meshgate', 'kube-system', 'kube-public', 'kube-node-lease'];
/**
 * The pod entries of a configuration (the validating one's workload entries aside: `workloads` below; the exec/attach
 * entries, `….connect.meshgate.io`, are test/chart/access.test.ts's).
 */
const hooks = (r: Rendered, kind: string): Obj[] =>
  r
    .one(kind)
    .webhooks.filter(
      (w: Obj) => !w.name.endsWith('.workloads.meshgate.io') && !w.name.endsWith('.connect.meshgate.io'),
    );
/** The validating configuration's workload-template entries (issue 34 §3). */
const workloads = (r: Rendered): Obj[] =>
  r.one('ValidatingWebhookConfiguration').webhooks.filter((w: Obj) => w.name.endsWith('.workloads.meshgate.io'));
/** Audit entries fail open, with their own timeout (issue 34 §2); the others as webhook.* says. */
const failOpen = (w: Obj) =>
  levelOf(w) === 'audit'
    ? { failurePolicy: 'Ignore', timeoutSeconds: 2 }
    : { failurePolicy: 'Fail', timeoutSeconds: 10 };
const LEVELS = ['enforce', 'warn', 'audit'];
/** The level an entry serves, from its meshgate.io/enforcement requirement (NotIn the others: the default's). */
function levelOf(w: Obj): string {
  const r = w.namespaceSelector.matchExpressions.find((e: Obj) => e.key === 'meshgate.io/enforcement');
  return r.operator === 'In' ? r.values[0] : LEVELS.filter((l) => !r.values.includes(l))[0];
}
/** Its name: <entry> for enforce (the name entries had before levels), <entry>-warn, <entry>-audit. */
const nameFor = (entry: string, level: string) => (level === 'enforce' ? entry : `${entry}-${level}`);
const levelSuffix = (level: string) => (level === 'enforce' ? '' : `/${level}`);

/** Namespaces and pods as a cluster would have them, for the selection matrix. */
const NAMESPACES: Array<[string, Labels]> = [
  ['plain', {}],
  ['mg', { 'meshgate.io/inject': 'enabled' }],
  ['mg-disabled', { 'meshgate.io/inject': 'disabled' }],
  ['istio', { 'istio-injection': 'enabled' }],
  ['istio-disabled', { 'istio-injection': 'disabled' }],
  ['rev', { 'istio.io/rev': 'canary' }],
  ['rev-and-istio', { 'istio.io/rev': 'default', 'istio-injection': 'enabled' }],
  ['rev-disabled', { 'istio.io/rev': 'default', 'istio-injection': 'disabled' }],
  ['all', { 'meshgate.io/inject': 'enabled', 'istio-injection': 'enabled', 'istio.io/rev': 'default' }],
  ['team-a', { team: 'a' }],
  ['team-a-mg', { team: 'a', 'meshgate.io/inject': 'enabled' }],
  ['mg-enforce', { 'meshgate.io/inject': 'enabled', 'meshgate.io/enforcement': 'enforce' }],
  ['mg-warn', { 'meshgate.io/inject': 'enabled', 'meshgate.io/enforcement': 'warn' }],
  ['istio-audit', { 'istio-injection': 'enabled', 'meshgate.io/enforcement': 'audit' }],
  ['mg-bogus', { 'meshgate.io/inject': 'enabled', 'meshgate.io/enforcement': 'off' }],
  ['team-a-warn', { team: 'a', 'meshgate.io/enforcement': 'warn' }],
  ['meshgate', { 'meshgate.io/inject': 'enabled', 'istio-injection': 'enabled' }],
  ['kube-system', { 'meshgate.io/inject': 'enabled', 'istio.io/rev': 'default' }],
];
const PODS: Labels[] = [
  {},
  { 'sidecar.istio.io/inject': 'true' },
  { 'sidecar.istio.io/inject': 'false' },
  { 'istio.io/rev': 'canary' },
  { 'istio.io/rev': 'default', 'sidecar.istio.io/inject': 'true' },
  { 'meshgate.io/inject': 'true' },
  { 'meshgate.io/inject': 'true', 'sidecar.istio.io/inject': 'true' },
  { 'meshgate.io/inject': 'false' },
];

describe.each(MESHES)('webhook configurations, mesh %s', (mesh) => {
  let r: Rendered;
  beforeAll(async () => {
    r = await render(profileValues(mesh, { config: { injection: { podOptInNamespaceLabels: { team: 'a' } } } }));
  });

  it('mutating: pods CREATE at /mutate, reinvoked after later webhooks (the mesh’s injector)', () => {
    for (const w of hooks(r, 'MutatingWebhookConfiguration')) {
      // An entry that selects pods by their labels reaches only some pods of a namespace: no admission mark there.
      const path = `${w.objectSelector ? '/mutate/selected-pods' : '/mutate'}${levelSuffix(levelOf(w))}`;
      expect(w.name).toMatch(/^[a-z0-9-]+\.mutate\.meshgate\.io$/);
      expect(w.name.endsWith(`-${levelOf(w)}.mutate.meshgate.io`)).toBe(levelOf(w) !== 'enforce');
      expect(w.rules).toEqual([
        { apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['pods'], scope: 'Namespaced' },
      ]);
      expect(w.clientConfig).toEqual({
        service: { name: 'meshgate', namespace: 'meshgate', path, port: 443 },
      });
      expect(w).toMatchObject({
        ...failOpen(w),
        matchPolicy: 'Equivalent',
        sideEffects: 'None',
        reinvocationPolicy: 'IfNeeded',
        admissionReviewVersions: ['v1'],
      });
      expect(w.matchConditions).toBeUndefined();
    }
  });

  it('validating: pods CREATE/UPDATE, ephemeral containers, and every binding where a Binding can be seen', () => {
    for (const w of hooks(r, 'ValidatingWebhookConfiguration')) {
      const bindings = w.objectSelector === undefined;
      expect(w.rules).toEqual([
        {
          apiGroups: [''],
          apiVersions: ['v1'],
          operations: ['CREATE', 'UPDATE'],
          resources: ['pods'],
          scope: 'Namespaced',
        },
        {
          apiGroups: [''],
          apiVersions: ['v1'],
          operations: ['UPDATE'],
          resources: ['pods/ephemeralcontainers'],
          scope: 'Namespaced',
        },
        ...(bindings
          ? [
              {
                apiGroups: [''],
                apiVersions: ['v1'],
                operations: ['CREATE'],
                resources: ['pods/binding', 'bindings'],
                scope: 'Namespaced',
              },
            ]
          : []),
      ]);
      expect(w.clientConfig.service.path).toBe(
        `${bindings ? '/validate' : '/validate/selected-pods'}${levelSuffix(levelOf(w))}`,
      );
      expect(w).toMatchObject({ ...failOpen(w), sideEffects: 'None' });
      expect(w.reinvocationPolicy).toBeUndefined();
      expect(w.matchConditions.map((c: Obj) => c.name)).toEqual(['skip-routine-pod-updates']);
    }
    // Bindings reach meshgate through the namespace entries.
    expect(
      hooks(r, 'ValidatingWebhookConfiguration')
        .filter((w) => !w.objectSelector)
        .map((w) => w.name),
    ).toContain('ns-meshgate-audit.validate.meshgate.io');
    expect(hooks(r, 'ValidatingWebhookConfiguration').map((w) => w.name)).toContain('ns-meshgate.validate.meshgate.io');
  });

  it('both configurations have the same entries, each excluding meshgate’s own and the system namespaces', () => {
    const names = (kind: string) => hooks(r, kind).map((w) => w.name.split('.')[0]);
    expect(names('MutatingWebhookConfiguration')).toEqual(names('ValidatingWebhookConfiguration'));
    for (const w of [...hooks(r, 'MutatingWebhookConfiguration'), ...hooks(r, 'ValidatingWebhookConfiguration')]) {
      expect(w.namespaceSelector.matchExpressions).toContainEqual({
        key: NAME_EXCLUSION,
        operator: 'NotIn',
        values: EXCLUDED,
      });
    }
  });

  it('no pod is sent to two entries, and meshgate’s own and the system namespaces are never selected', () => {
    for (const kind of ['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration']) {
      for (const [ns, labels] of NAMESPACES) {
        for (const pod of PODS) {
          const hits = selecting(hooks(r, kind), ns, labels, pod);
          expect(hits.length, `${kind} ${ns} ${JSON.stringify(pod)}: ${hits.join(', ')}`).toBeLessThanOrEqual(1);
          if (EXCLUDED.includes(ns)) expect(hits).toEqual([]);
        }
      }
    }
  });
});

describe('which pods each profile selects', () => {
  const selected = async (mesh: 'istio' | 'linkerd') => {
    const r = await render(profileValues(mesh, { config: { injection: { podOptInNamespaceLabels: { team: 'a' } } } }));
    const ws = hooks(r, 'MutatingWebhookConfiguration');
    // The entry without its level (which the next describe holds): every one of these namespaces is unlabelled.
    return (ns: string, pod: Labels = {}) =>
      selecting(ws, ns, Object.fromEntries(NAMESPACES)[ns], pod).map((n) =>
        n.split('.')[0].replace(/-audit$/, ''),
      )[0] ?? null;
  };

  it('istio: meshgate’s label, istio-injection, istio.io/rev, and pod-level opt-in as istiod has it', async () => {
    const s = await selected('istio');
    expect(s('mg')).toBe('ns-meshgate');
    expect(s('all')).toBe('ns-meshgate');
    expect(s('istio')).toBe('ns-istio-injection');
    expect(s('rev-and-istio')).toBe('ns-istio-injection'); // istio-injection wins over istio.io/rev, as in istiod
    expect(s('rev')).toBe('ns-istio-rev');
    expect(s('rev-disabled')).toBeNull(); // istio-injection=disabled opts the namespace out of Istio
    expect(s('istio-disabled', { 'sidecar.istio.io/inject': 'true' })).toBeNull();
    expect(s('plain')).toBeNull();
    expect(s('plain', { 'sidecar.istio.io/inject': 'true' })).toBe('pod-istio-inject');
    expect(s('plain', { 'istio.io/rev': 'canary' })).toBe('pod-istio-rev');
    expect(s('plain', { 'istio.io/rev': 'default', 'sidecar.istio.io/inject': 'true' })).toBe('pod-istio-rev');
    // Unlike istiod, a pod opting out in a selected namespace still reaches meshgate, which refuses the opt-out.
    expect(s('istio', { 'sidecar.istio.io/inject': 'false' })).toBe('ns-istio-injection');
    expect(s('team-a', { 'meshgate.io/inject': 'true' })).toBe('pod-optin');
    expect(s('team-a', { 'meshgate.io/inject': 'true', 'sidecar.istio.io/inject': 'true' })).toBe('pod-istio-inject');
    expect(s('team-a-mg', { 'meshgate.io/inject': 'true' })).toBe('ns-meshgate');
    expect(s('plain', { 'meshgate.io/inject': 'true' })).toBeNull();
  });

  it('linkerd: meshgate’s namespace label (annotations cannot be selected) and pod opt-in', async () => {
    const s = await selected('linkerd');
    expect(s('mg')).toBe('ns-meshgate');
    expect(s('istio')).toBeNull();
    expect(s('plain')).toBeNull();
    expect(s('team-a', { 'meshgate.io/inject': 'true' })).toBe('pod-optin');
    expect(s('team-a')).toBeNull();
  });
});

describe('enforcement levels: one entry per level, chosen by the namespace label meshgate.io/enforcement', () => {
  /** The entry (name before the first dot) that selects a pod with no labels in namespace `ns`. */
  const entryFor = (r: Rendered, kind: string, ns: string, pod: Labels = {}) =>
    selecting(hooks(r, kind), ns, Object.fromEntries(NAMESPACES)[ns], pod).map((n) => n.split('.')[0]);

  it('each entry of the profile comes three times, its route ending in the level; default audit selects the unlabelled', async () => {
    const r = await render(profileValues('istio'));
    for (const kind of ['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration']) {
      const names = hooks(r, kind).map((w) => w.name.split('.')[0]);
      expect(names).toHaveLength(15); // istio's five entries
      expect(new Set(names).size).toBe(15);
      for (const base of ['ns-meshgate', 'ns-istio-injection', 'ns-istio-rev', 'pod-istio-inject', 'pod-istio-rev'])
        expect(names.filter((n) => n === base || n.startsWith(`${base}-`))).toEqual(
          LEVELS.map((l) => nameFor(base, l)),
        );
      expect(entryFor(r, kind, 'mg')).toEqual(['ns-meshgate-audit']);
      expect(entryFor(r, kind, 'mg-enforce')).toEqual(['ns-meshgate']);
      expect(entryFor(r, kind, 'mg-warn')).toEqual(['ns-meshgate-warn']);
      expect(entryFor(r, kind, 'istio-audit')).toEqual(['ns-istio-injection-audit']);
      // A value that is no level reads as the default (the enforcement policy refuses setting one).
      expect(entryFor(r, kind, 'mg-bogus')).toEqual(['ns-meshgate-audit']);
      expect(entryFor(r, kind, 'team-a-warn', { 'sidecar.istio.io/inject': 'true' })).toEqual([
        'pod-istio-inject-warn',
      ]);
    }
    /** The entry `name` of `kind` selects namespaces by meshgate.io/enforcement as `level` says, and calls `path`. */
    const expectEntry = (kind: string, name: string, level: Obj, path: string) => {
      const entry = hooks(r, kind).find((w) => w.name === name) as Obj;
      expect(entry.namespaceSelector.matchExpressions).toContainEqual({ key: 'meshgate.io/enforcement', ...level });
      expect(entry.clientConfig.service.path).toBe(path);
    };
    expectEntry(
      'MutatingWebhookConfiguration',
      'ns-meshgate-audit.mutate.meshgate.io',
      { operator: 'NotIn', values: ['enforce', 'warn'] },
      '/mutate/audit',
    );
    expectEntry(
      'ValidatingWebhookConfiguration',
      'ns-meshgate.validate.meshgate.io',
      { operator: 'In', values: ['enforce'] },
      '/validate',
    );
    expect(parseYaml(r.one('ConfigMap', 'meshgate').data['config.yaml'])).toMatchObject({
      enforcement: { default: 'audit' },
    });
  });

  it('config.enforcement.default=enforce: the enforce entries select the unlabelled namespaces', async () => {
    const r = await render(profileValues('linkerd', { config: { enforcement: { default: 'enforce' } } }));
    for (const kind of ['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration']) {
      expect(entryFor(r, kind, 'mg')).toEqual(['ns-meshgate']);
      expect(entryFor(r, kind, 'mg-warn')).toEqual(['ns-meshgate-warn']);
      expect(entryFor(r, kind, 'mg-bogus')).toEqual(['ns-meshgate']);
      expect(entryFor(r, kind, 'plain')).toEqual([]);
    }
    expect(parseYaml(r.one('ConfigMap', 'meshgate').data['config.yaml'])).toMatchObject({
      enforcement: { default: 'enforce' },
    });
    const policy = r.one('ValidatingAdmissionPolicy', 'meshgate-enforcement');
    expect(policy.spec.variables.find((v: Obj) => v.name === 'level').expression).toContain(".orValue('enforce')");
  });

  it('a value that is no level is refused by the schema', async () => {
    await expect(render(profileValues('istio', { config: { enforcement: { default: 'off' } } }))).rejects.toThrow(
      /'\/config\/enforcement\/default': value must be one of 'enforce', 'warn', 'audit'/,
    );
  });
});

describe('webhook configurations (values)', () => {
  it('webhook.selectors replaces the profile’s entries; the exclusions are still added', async () => {
    const r = await render(
      profileValues('istio', {
        webhook: {
          selectors: [
            {
              name: 'team-a',
              namespaceSelector: { matchLabels: { team: 'a' } },
              objectSelector: { matchLabels: { app: 'x' } },
            },
          ],
        },
      }),
      { release: 'mesh', namespace: 'mesh-system' },
    );
    const [w] = hooks(r, 'ValidatingWebhookConfiguration');
    expect(hooks(r, 'ValidatingWebhookConfiguration').map((x) => x.name)).toEqual(
      LEVELS.map((l) => `${nameFor('team-a', l)}.validate.meshgate.io`),
    );
    expect(w.namespaceSelector).toEqual({
      matchLabels: { team: 'a' },
      matchExpressions: [
        {
          key: NAME_EXCLUSION,
          operator: 'NotIn',
          values: ['mesh-system', 'kube-system', 'kube-public', 'kube-node-lease'],
        },
        { key: 'meshgate.io/enforcement', operator: 'In', values: ['enforce'] },
      ],
    });
    expect(w.objectSelector).toEqual({ matchLabels: { app: 'x' } });
    expect(w.rules.map((x: Obj) => x.resources)).toEqual([['pods'], ['pods/ephemeralcontainers']]);
  });

  it('webhook.matchConditions are added to every entry, after the validating entries’ own', async () => {
    const mc = { name: 'not-load-tests', expression: "!('load-test' in object.metadata.?labels.orValue({}))" };
    const r = await render(profileValues('linkerd', { webhook: { matchConditions: [mc] } }));
    expect(hooks(r, 'MutatingWebhookConfiguration')[0].matchConditions).toEqual([mc]);
    expect(hooks(r, 'ValidatingWebhookConfiguration')[0].matchConditions.map((c: Obj) => c.name)).toEqual([
      'skip-routine-pod-updates',
      'not-load-tests',
    ]);
    // Conditions on the pod let its author leave pods out of meshgate's sight: no entry marks what it admits.
    for (const kind of ['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration'])
      for (const w of hooks(r, kind))
        expect(w.clientConfig.service.path).toMatch(/^\/(mutate|validate)\/selected-pods(\/warn|\/audit)?$/);
  });

  it('the routine-update filter sends UPDATEs of spec, labels or annotations, subresources, and everything not an UPDATE', async () => {
    const r = await render(profileValues('istio'));
    const expr: string = hooks(r, 'ValidatingWebhookConfiguration')[0].matchConditions[0].expression;
    for (const part of [
      "request.operation != 'UPDATE'",
      "request.?subResource.orValue('') != ''",
      'object.spec != oldObject.spec',
      'object.metadata.?labels.orValue({}) != oldObject.metadata.?labels.orValue({})',
      'object.metadata.?annotations.orValue({}) != oldObject.metadata.?annotations.orValue({})',
    ]) {
      expect(expr).toContain(part);
    }
  });

  it('a mutating failurePolicy Ignore leaves the validating webhook on Fail', async () => {
    const r = await render(
      profileValues('istio', { webhook: { mutating: { failurePolicy: 'Ignore' }, timeoutSeconds: 5 } }),
    );
    for (const w of hooks(r, 'MutatingWebhookConfiguration'))
      expect(w).toMatchObject({ failurePolicy: 'Ignore', timeoutSeconds: levelOf(w) === 'audit' ? 2 : 5 });
    for (const w of hooks(r, 'ValidatingWebhookConfiguration'))
      expect(w).toMatchObject(
        levelOf(w) === 'audit'
          ? { failurePolicy: 'Ignore', timeoutSeconds: 2 }
          : { failurePolicy: 'Fail', timeoutSeconds: 5 },
      );
  });

  it('config.systemNamespaces (even empty) replaces the system list; the release namespace stays excluded', async () => {
    for (const [systemNamespaces, values] of [
      [
        ['kube-system', 'ops'],
        ['mesh-system', 'kube-system', 'ops'],
      ],
      [[], ['mesh-system']],
    ] as const) {
      const r = await render(profileValues('linkerd', { config: { systemNamespaces } }), {
        release: 'mesh',
        namespace: 'mesh-system',
      });
      expect(hooks(r, 'MutatingWebhookConfiguration')[0].namespaceSelector.matchExpressions).toContainEqual({
        key: NAME_EXCLUSION,
        operator: 'NotIn',
        values,
      });
    }
  });
});

describe('audit entries fail open (issue 34 §2)', () => {
  it('every audit entry, mutating and validating, is Ignore with webhook.audit.timeoutSeconds; the others unchanged', async () => {
    const r = await render(
      profileValues('istio', { webhook: { audit: { timeoutSeconds: 3 }, mutating: { failurePolicy: 'Fail' } } }),
    );
    let audit = 0;
    for (const kind of ['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration'])
      for (const w of hooks(r, kind)) {
        const isAudit = w.clientConfig.service.path.endsWith('/audit');
        expect(isAudit).toBe(levelOf(w) === 'audit');
        if (isAudit) audit++;
        expect(w, w.name).toMatchObject(
          isAudit ? { failurePolicy: 'Ignore', timeoutSeconds: 3 } : { failurePolicy: 'Fail', timeoutSeconds: 10 },
        );
      }
    expect(audit).toBe(10); // istio's five entries, in both configurations
  });
});

describe('workload entries: pod templates judged at apply time (issue 34 §3)', () => {
  it.each(MESHES)('mesh %s: one per pod entry and level, at /validate/workloads, failing open', async (mesh) => {
    const r = await render(profileValues(mesh, { config: { injection: { podOptInNamespaceLabels: { team: 'a' } } } }));
    const pods = hooks(r, 'ValidatingWebhookConfiguration');
    const ws = workloads(r);
    expect(ws.map((w) => w.name.split('.')[0])).toEqual(pods.map((w) => w.name.split('.')[0]));
    for (const [i, w] of ws.entries()) {
      expect(w.namespaceSelector).toEqual(pods[i].namespaceSelector);
      expect(w.objectSelector).toBeUndefined();
      expect(w.clientConfig.service.path).toBe(`/validate/workloads${levelSuffix(levelOf(w))}`);
      expect(w).toMatchObject({ failurePolicy: 'Ignore', timeoutSeconds: 2, sideEffects: 'None' });
      expect(w.rules).toEqual([
        {
          apiGroups: ['apps'],
          apiVersions: ['v1'],
          operations: ['CREATE', 'UPDATE'],
          resources: ['deployments', 'statefulsets', 'daemonsets', 'replicasets'],
          scope: 'Namespaced',
        },
        {
          apiGroups: ['batch'],
          apiVersions: ['v1'],
          operations: ['CREATE', 'UPDATE'],
          resources: ['jobs', 'cronjobs'],
          scope: 'Namespaced',
        },
        {
          apiGroups: [''],
          apiVersions: ['v1'],
          operations: ['CREATE', 'UPDATE'],
          resources: ['replicationcontrollers'],
          scope: 'Namespaced',
        },
      ]);
      // A pod entry's objectSelector selects by the template's labels instead (a workload's own labels are not its
      // pods'), a CronJob's one level deeper.
      const names = w.matchConditions.map((c: Obj) => c.name);
      expect(names).toEqual(
        pods[i].objectSelector ? ['pod-template-changed', 'pod-template-labels'] : ['pod-template-changed'],
      );
      expect(w.matchConditions[0].expression).toBe("request.operation != 'UPDATE' || object.spec != oldObject.spec");
      if (pods[i].objectSelector) {
        const cel: string = w.matchConditions[1].expression;
        expect(cel).toContain("request.resource.resource == 'cronjobs'");
        expect(cel).toContain('object.spec.?jobTemplate.?spec.?template.?metadata.?labels.orValue({})');
        for (const e of pods[i].objectSelector.matchExpressions ?? []) expect(cel).toContain(`'${e.key}'`);
      }
    }
  });

  it('webhook.workloads: off renders none; extraRules add kinds (Argo Rollouts); its own timeout', async () => {
    const off = await render(profileValues('istio', { webhook: { workloads: { enabled: false } } }));
    expect(workloads(off)).toEqual([]);
    const argo = { apiGroups: ['argoproj.io'], apiVersions: ['*'], resources: ['rollouts'] };
    const r = await render(
      profileValues('linkerd', { webhook: { workloads: { extraRules: [argo], timeoutSeconds: 4 } } }),
    );
    for (const w of workloads(r)) {
      expect(w.rules.at(-1)).toEqual({ ...argo, operations: ['CREATE', 'UPDATE'], scope: 'Namespaced' });
      expect(w.timeoutSeconds).toBe(4);
    }
  });
});
