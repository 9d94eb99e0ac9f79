// What users pass to every chart, each rendered by the real helm: nameOverride and fullnameOverride, commonLabels
// and commonAnnotations on every object, each workload's serviceAccount (create, name, annotations) as the pods, the
// bindings and the admission policies see it, affinity/nodeSelector/tolerations per workload, imagePullSecrets on
// every pod, the webhook's HorizontalPodAutoscaler, `helm lint` of every ci/ values file, and what `helm template`
// says without --kube-version.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  chartDir,
  helm,
  helmWithValues,
  KUBE_VERSION,
  parseManifests,
  render,
  templateArgs,
  type Obj,
} from './helm.ts';
import { profileValues } from './profiles.ts';
import { CONVENTIONS } from './knobs.ts';

/** Every workload's pod template, by its values key (the hook Job and the helm test pod included). */
function pods(r: ReturnType<typeof parseManifests>, fullname = 'meshgate'): Array<[string, Obj]> {
  return [
    ['webhook', r.one('Deployment', fullname).spec.template],
    ['nodeAgent', r.one('DaemonSet', `${fullname}-node-agent`).spec.template],
    ['repairController', r.one('Deployment', `${fullname}-repair-controller`).spec.template],
    ['uninstall', r.one('Job', `${fullname}-uninstall`).spec.template],
    ['tests', r.all('Pod').find((p) => p.metadata.annotations?.['helm.sh/hook'] === 'test')!],
  ];
}

/** Every username an admission policy names (they grant or deny by service account). */
function policyUsers(r: ReturnType<typeof parseManifests>): string[] {
  const text = JSON.stringify(r.all('ValidatingAdmissionPolicy'));
  return [...new Set([...text.matchAll(/system:serviceaccount:[a-z0-9-]+:[a-z0-9.-]+/g)].map((m) => m[0]))].sort();
}

const templateFails = async (values: Obj) => {
  const res = await helmWithValues(templateArgs(), profileValues('istio', values));
  expect(res.code, res.stdout.slice(0, 200)).not.toBe(0);
  return res.stderr;
};

describe('names', () => {
  it('nameOverride renames every object and the app.kubernetes.io/name label (selectors included)', async () => {
    const r = await render(profileValues('istio', { nameOverride: 'guard' }), { release: 'prod' });
    for (const d of r.docs) {
      expect(d.metadata.name, `${d.kind}`).toMatch(/^prod-guard(-|$)/);
      expect(d.metadata.labels['app.kubernetes.io/name'], `${d.kind}/${d.metadata.name}`).toBe('guard');
    }
    expect(r.one('Deployment', 'prod-guard').spec.selector.matchLabels['app.kubernetes.io/name']).toBe('guard');
  });

  it('fullnameOverride replaces the whole prefix: Service, TLS SANs, Secrets, Lease, policies and their users', async () => {
    const r = await render(profileValues('istio', { fullnameOverride: 'gate' }), { release: 'prod', namespace: 'ns' });
    for (const d of r.docs) expect(d.metadata.name, d.kind).toMatch(/^gate(-|$)/);
    const args: string[] = r.one('Deployment', 'gate').spec.template.spec.containers[0].args;
    expect(args).toEqual(
      expect.arrayContaining([
        '--tls-san=gate.ns.svc',
        '--cert-secret=gate-tls',
        '--webhook-config=gate',
        '--mark-key-secret=gate-admission-mark',
      ]),
    );
    expect(r.one('Service', 'gate').metadata.name).toBe('gate');
    expect(r.one('MutatingWebhookConfiguration', 'gate').webhooks[0].clientConfig.service.name).toBe('gate');
    expect(r.one('Deployment', 'gate-repair-controller').spec.template.spec.containers[0].args).toContain(
      '--lease-name=gate-repair-controller',
    );
    expect(policyUsers(r)).toEqual([
      'system:serviceaccount:ns:gate',
      'system:serviceaccount:ns:gate-break-glass',
      'system:serviceaccount:ns:gate-node-agent',
      'system:serviceaccount:ns:gate-repair-controller',
    ]);
  });

  it('refuses an override that is no DNS label or too long for the suffixes the chart adds', async () => {
    expect(await templateFails({ fullnameOverride: 'Gate' })).toContain("at '/fullnameOverride'");
    expect(await templateFails({ nameOverride: 'g'.repeat(41) })).toContain("at '/nameOverride'");
  });
});

describe('commonLabels and commonAnnotations', () => {
  it('are on every object the chart renders (hooks and the test pod too) and on every pod', async () => {
    const r = await render(
      profileValues('istio', {
        commonLabels: { 'example.com/team': 'platform' },
        commonAnnotations: { 'example.com/owner': 'mesh-team' },
        certs: { mode: 'cert-manager' },
        metrics: { dashboard: { enabled: true, annotations: { grafana_folder: 'Meshgate' } } },
      }),
    );
    expect(r.docs.length).toBeGreaterThan(40);
    for (const d of r.docs) {
      const what = `${d.kind}/${d.metadata.name}`;
      expect(d.metadata.labels?.['example.com/team'], what).toBe('platform');
      expect(d.metadata.annotations?.['example.com/owner'], what).toBe('mesh-team');
    }
    for (const [key, t] of pods(r)) expect(t.metadata.labels['example.com/team'], key).toBe('platform');
    // Objects' own annotations stay beside them.
    const mutating = r.one('MutatingWebhookConfiguration');
    expect(mutating.metadata.annotations['cert-manager.io/inject-ca-from']).toBe('meshgate/meshgate-serving');
    expect(r.one('ConfigMap', 'meshgate-dashboard').metadata.annotations.grafana_folder).toBe('Meshgate');
    const hook = r.one('Job', 'meshgate-uninstall').metadata.annotations;
    expect(hook['helm.sh/hook']).toBe('post-delete');
  });

  it('cannot replace the chart’s own labels (the selectors and helm’s ownership rest on them)', async () => {
    for (const key of ['app.kubernetes.io/component', 'app.kubernetes.io/name', 'helm.sh/chart'])
      expect(await templateFails({ commonLabels: { [key]: 'x' } })).toContain("at '/commonLabels'");
  });

  it('selectors never carry them (a selector is immutable: a later change would fail the upgrade)', async () => {
    const r = await render(profileValues('istio', { commonLabels: { team: 'a' } }));
    for (const d of [...r.all('Deployment'), ...r.all('DaemonSet')])
      expect(d.spec.selector.matchLabels.team, d.metadata.name).toBeUndefined();
  });
});

describe('serviceAccount per workload', () => {
  const KEYS = ['webhook', 'nodeAgent', 'repairController', 'uninstall'] as const;

  it('create, name and annotations: the pod, the bindings and the admission policies all use the name', async () => {
    const values = Object.fromEntries(
      KEYS.map((k) => [k, { serviceAccount: { create: true, name: `sa-${k.toLowerCase()}`, annotations: { k } } }]),
    );
    const r = await render(profileValues('istio', values), { namespace: 'ns' });
    const templates = Object.fromEntries(pods(r));
    for (const k of KEYS) {
      const name = `sa-${k.toLowerCase()}`;
      const sa = r.one('ServiceAccount', name);
      expect(sa.metadata.annotations.k).toBe(k);
      expect(templates[k].spec.serviceAccountName, k).toBe(name);
    }
    const subjects = [...r.all('ClusterRoleBinding'), ...r.all('RoleBinding')].flatMap((b) =>
      b.subjects.map((s: Obj) => s.name),
    );
    // And the break-glass account (enforcement.breakGlass), which no workload runs as.
    expect(new Set(subjects)).toEqual(new Set([...KEYS.map((k) => `sa-${k.toLowerCase()}`), 'meshgate-break-glass']));
    expect(policyUsers(r)).toEqual([
      'system:serviceaccount:ns:meshgate-break-glass',
      'system:serviceaccount:ns:sa-nodeagent',
      'system:serviceaccount:ns:sa-repaircontroller',
      'system:serviceaccount:ns:sa-webhook',
    ]);
  });

  it('create false: no ServiceAccount rendered, the roles still bound to the one named', async () => {
    const r = await render(profileValues('istio', { nodeAgent: { serviceAccount: { create: false, name: 'agent' } } }));
    expect(r.all('ServiceAccount').map((s) => s.metadata.name)).not.toContain('agent');
    expect(r.all('ServiceAccount').map((s) => s.metadata.name)).not.toContain('meshgate-node-agent');
    expect(r.one('DaemonSet').spec.template.spec.serviceAccountName).toBe('agent');
    expect(r.one('ClusterRoleBinding', 'meshgate-node-agent').subjects[0].name).toBe('agent');
  });

  it.each([
    [{ webhook: { serviceAccount: { create: true, name: 'default' } } }, '"default" is every pod\'s service account'],
    [{ repairController: { serviceAccount: { create: false } } }, 'repairController.serviceAccount.name is required'],
    [
      { uninstall: { serviceAccount: { create: true, name: 'meshgate-node-agent' } } },
      'uninstall.serviceAccount.name: "meshgate-node-agent" is also the service account of nodeAgent',
    ],
  ])('refuses a name that would hand one workload’s rights to other pods: %j', async (values, message) => {
    expect(await templateFails(values)).toContain(message);
  });
});

describe('placement per workload', () => {
  const affinity = (v: string) => ({
    nodeAffinity: {
      requiredDuringSchedulingIgnoredDuringExecution: {
        nodeSelectorTerms: [{ matchExpressions: [{ key: 'pool', operator: 'In', values: [v] }] }],
      },
    },
  });
  const KEYS = ['webhook', 'nodeAgent', 'repairController', 'uninstall', 'tests'];

  it('affinity, nodeSelector and tolerations reach each workload’s pods, each its own', async () => {
    const values = Object.fromEntries(
      KEYS.map((k) => [
        k,
        {
          affinity: affinity(k),
          nodeSelector: { pool: k },
          tolerations: [{ key: 'dedicated', operator: 'Equal', value: k, effect: 'NoSchedule' }],
        },
      ]),
    );
    const r = await render(profileValues('istio', values));
    for (const [k, t] of pods(r)) {
      expect(t.spec.affinity, k).toEqual(affinity(k));
      // Merged over the default Linux selector (docs/chart.md).
      expect(t.spec.nodeSelector, k).toEqual({ 'kubernetes.io/os': 'linux', pool: k });
      expect(t.spec.tolerations, k).toEqual([{ key: 'dedicated', operator: 'Equal', value: k, effect: 'NoSchedule' }]);
    }
  });

  it('defaults: replicas spread over nodes, the node agent tolerating every taint, Linux nodes only', async () => {
    const r = await render(profileValues('istio'));
    const t = Object.fromEntries(pods(r));
    for (const k of ['webhook', 'repairController']) {
      const term = t[k].spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0];
      expect(term.podAffinityTerm.topologyKey, k).toBe('kubernetes.io/hostname');
      expect(term.podAffinityTerm.labelSelector.matchLabels['app.kubernetes.io/component'], k).toBe(
        k === 'webhook' ? 'webhook' : 'repair-controller',
      );
    }
    expect(t.nodeAgent.spec.tolerations).toEqual([{ operator: 'Exists' }]);
    for (const k of ['nodeAgent', 'uninstall', 'tests']) {
      expect(t[k].spec.affinity, k).toBeUndefined();
      expect(t[k].spec.nodeSelector, k).toEqual({ 'kubernetes.io/os': 'linux' });
    }
  });
});

describe('imagePullSecrets', () => {
  it('every pod the chart runs pulls with them (workloads, uninstall hook, helm test)', async () => {
    const r = await render(profileValues('istio', { imagePullSecrets: [{ name: 'regcred' }] }));
    for (const [k, t] of pods(r)) expect(t.spec.imagePullSecrets, k).toEqual([{ name: 'regcred' }]);
  });

  it('the validator meshgate injects into app pods: config.validator.imagePullSecrets reaches its config', async () => {
    const r = await render(profileValues('istio', { config: { validator: { imagePullSecrets: ['mirror-pull'] } } }));
    const cm = JSON.parse(r.one('ConfigMap', 'meshgate').data['config.yaml']);
    expect(cm.validator.imagePullSecrets).toEqual(['mirror-pull']);
  });
});

describe('webhook.autoscaling', () => {
  it('enabled: an HPA on the Deployment, which then leaves replicas to it; the PDB follows minReplicas', async () => {
    const r = await render(
      profileValues('istio', {
        webhook: {
          autoscaling: { enabled: true, minReplicas: 3, maxReplicas: 7, targetCPUUtilizationPercentage: 70 },
        },
      }),
    );
    const hpa = r.one('HorizontalPodAutoscaler', 'meshgate');
    expect(hpa.apiVersion).toBe('autoscaling/v2');
    expect(hpa.spec).toEqual({
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'meshgate' },
      minReplicas: 3,
      maxReplicas: 7,
      metrics: [
        { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 70 } } },
      ],
    });
    expect(r.one('Deployment', 'meshgate').spec.replicas).toBeUndefined();
    expect(r.one('PodDisruptionBudget', 'meshgate').spec.minAvailable).toBe(1);
    const one = await render(
      profileValues('istio', { webhook: { replicas: 3, autoscaling: { enabled: true, minReplicas: 1 } } }),
    );
    expect(one.all('PodDisruptionBudget')).toEqual([]);
  });

  it('memory too when set; off by default (a fixed webhook.replicas, no HPA)', async () => {
    const r = await render(
      profileValues('istio', { webhook: { autoscaling: { enabled: true, targetMemoryUtilizationPercentage: 85 } } }),
    );
    expect(r.one('HorizontalPodAutoscaler').spec.metrics[1]).toEqual({
      type: 'Resource',
      resource: { name: 'memory', target: { type: 'Utilization', averageUtilization: 85 } },
    });
    const off = await render(profileValues('istio'));
    expect(off.all('HorizontalPodAutoscaler')).toEqual([]);
    expect(off.one('Deployment', 'meshgate').spec.replicas).toBe(2);
  });

  it('refuses minReplicas above maxReplicas', async () => {
    expect(
      await templateFails({ webhook: { autoscaling: { enabled: true, minReplicas: 6, maxReplicas: 5 } } }),
    ).toContain('webhook.autoscaling: minReplicas (6) must not exceed maxReplicas (5)');
  });
});

describe('helm lint of every ci/ values file', () => {
  const files = readdirSync(join(chartDir, 'ci')).filter((f) => f.endsWith('-values.yaml'));

  it('there is one per mesh profile', () => {
    expect(files.sort()).toEqual(['custom-values.yaml', 'istio-values.yaml', 'linkerd-values.yaml']);
  });

  it.each(files)('helm lint --strict -f ci/%s', async (file) => {
    const res = await helm([
      'lint',
      '--strict',
      chartDir,
      '-f',
      join(chartDir, 'ci', file),
      '--kube-version',
      KUBE_VERSION,
    ]);
    expect(res.code, res.stdout + res.stderr).toBe(0);
    expect(res.stdout).toContain('1 chart(s) linted, 0 chart(s) failed');
  });

  it('the conventions of this file all at once pass lint too', async () => {
    const res = await helmWithValues(['lint', '--strict', chartDir, '--kube-version', KUBE_VERSION], {
      ...profileValues('istio'),
      ...CONVENTIONS,
    });
    expect(res.code, res.stdout + res.stderr).toBe(0);
  });
});

describe('the Kubernetes version', () => {
  const NEED = 'meshgate needs Kubernetes 1.32 or later';

  it('helm template without --kube-version renders, or says which version is needed, why, and what to pass', async () => {
    // helm renders for a default of its own: v1.20.0 when built without its version stamp (as here), the
    // client-go release it was built with otherwise. Either it renders the whole chart, or it refuses with the reason.
    const res = await helm(['template', 'meshgate', chartDir, '-f', join(chartDir, 'ci', 'istio-values.yaml')]);
    if (res.code === 0) {
      expect(parseManifests(res.stdout).one('Deployment', 'meshgate').kind).toBe('Deployment');
    } else {
      expect(res.stderr).toContain(NEED);
      expect(res.stderr).toContain('node name that pod-bound service-account tokens carry');
      expect(res.stderr).toContain('--kube-version');
    }
  });

  it.each([
    ['1.31.9', false],
    ['1.32.0', true],
    ['v1.35.1', true],
  ])('--kube-version %s: renders %s', async (version, renders) => {
    const res = await helm(['template', 'meshgate', chartDir, '--set', 'mesh=istio', '--kube-version', version]);
    expect(res.code === 0, res.stderr).toBe(renders);
    if (!renders) expect(res.stderr).toContain(`${NEED}, and this renders for v${version}`);
  });
});
