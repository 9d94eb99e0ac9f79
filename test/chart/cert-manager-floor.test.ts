// The chart as other charts are (issue 34 §6): cert-manager's chart (deploy/charts/cert-manager of the Go module
// scripts/build-cert-manager.sh downloads) is the floor, point by point, as docs/chart.md tabulates it. Each point is
// rendered by the real helm: `global` (meshgate as a subchart of a parent chart that sets it), the Linux node
// selector, strategy, revisionHistoryLimit, probe timings, extraObjects, the ServiceAccounts' labels and token
// automount, the PodDisruptionBudget's maxUnavailable, image.registry. The subchart is also installed for real in
// test/e2e/chart-subchart.test.ts.
import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { helm, KUBE_VERSION, parseManifests, parentChart, render, type Obj } from './helm.ts';
import { profileValues } from './profiles.ts';

const WORKLOADS = (r: ReturnType<typeof parseManifests>): Array<[string, Obj]> => [
  ['webhook', r.one('Deployment', 'meshgate').spec.template],
  ['nodeAgent', r.one('DaemonSet', 'meshgate-node-agent').spec.template],
  ['repairController', r.one('Deployment', 'meshgate-repair-controller').spec.template],
  ['uninstall', r.one('Job', 'meshgate-uninstall').spec.template],
  ['tests', r.all('Pod').find((p) => p.metadata.annotations?.['helm.sh/hook'] === 'test')!],
];

const scratch: string[] = [];
afterAll(() => {
  for (const d of scratch) rmSync(d, { recursive: true, force: true });
});

describe('meshgate as a subchart (global)', () => {
  it('a parent chart that sets global renders meshgate, which reads the global keys it knows', async () => {
    const dir = parentChart({
      global: {
        imageRegistry: 'mirror.example.com/hub',
        imagePullSecrets: ['mirror-pull', { name: 'other' }],
        commonLabels: { team: 'platform' },
        nodeSelector: { pool: 'system' },
        revisionHistoryLimit: 3,
        // A key only the parent's other subcharts read: accepted, ignored.
        storageClass: 'fast',
      },
      meshgate: profileValues('istio'),
    });
    scratch.push(dir);
    const res = await helm(['template', 'platform', dir, '--namespace', 'meshgate', '--kube-version', KUBE_VERSION]);
    expect(res.code, res.stderr).toBe(0);
    const r = parseManifests(res.stdout);
    const d = r.one('Deployment', 'platform-meshgate');
    expect(d.spec.revisionHistoryLimit).toBe(3);
    expect(d.metadata.labels.team).toBe('platform');
    const pod = d.spec.template.spec;
    expect(pod.containers[0].image).toMatch(/^mirror\.example\.com\/hub\/ghcr\.io\/meshgate\/meshgate:/);
    expect(pod.imagePullSecrets).toEqual([{ name: 'mirror-pull' }, { name: 'other' }]);
    expect(pod.nodeSelector).toEqual({ 'kubernetes.io/os': 'linux', pool: 'system' });
    expect(r.one('DaemonSet', 'platform-meshgate-node-agent').spec.revisionHistoryLimit).toBe(3);
  });

  it('global unset (helm still passes {}) and global with unknown keys both pass the schema', async () => {
    await expect(render(profileValues('istio'))).resolves.toBeTruthy();
    await expect(render(profileValues('istio', { global: { anything: { nested: true } } }))).resolves.toBeTruthy();
  });

  it("a parent's global.commonLabels cannot replace the chart's own labels", async () => {
    const r = await render(profileValues('istio', { global: { commonLabels: { 'app.kubernetes.io/name': 'x' } } }));
    expect(r.one('Deployment', 'meshgate').metadata.labels['app.kubernetes.io/name']).toBe('meshgate');
  });
});

describe('cert-manager’s values, point by point', () => {
  it('every pod runs on Linux nodes by default (kubernetes.io/os: linux), the node agent included', async () => {
    const r = await render(profileValues('istio'));
    for (const [k, t] of WORKLOADS(r)) expect(t.spec.nodeSelector, k).toEqual({ 'kubernetes.io/os': 'linux' });
    // helm deletes a key set to null: the documented way to drop the default.
    const off = await render(profileValues('istio', { nodeAgent: { nodeSelector: { 'kubernetes.io/os': null } } }));
    expect(off.one('DaemonSet', 'meshgate-node-agent').spec.template.spec.nodeSelector).toBeUndefined();
  });

  it('strategy and revisionHistoryLimit of the Deployments (and the DaemonSet’s history)', async () => {
    const strategy = { type: 'RollingUpdate', rollingUpdate: { maxSurge: 0, maxUnavailable: 1 } };
    const r = await render(
      profileValues('istio', {
        webhook: { strategy, revisionHistoryLimit: 2 },
        repairController: { strategy: { type: 'Recreate' }, revisionHistoryLimit: 1 },
        nodeAgent: { revisionHistoryLimit: 4 },
        global: { revisionHistoryLimit: 9 },
      }),
    );
    expect(r.one('Deployment', 'meshgate').spec).toMatchObject({ strategy, revisionHistoryLimit: 2 });
    expect(r.one('Deployment', 'meshgate-repair-controller').spec).toMatchObject({
      strategy: { type: 'Recreate' },
      revisionHistoryLimit: 1,
    });
    expect(r.one('DaemonSet', 'meshgate-node-agent').spec.revisionHistoryLimit).toBe(4);
    const plain = await render(profileValues('istio'));
    expect(plain.one('Deployment', 'meshgate').spec.strategy).toBeUndefined();
    const host = await render(profileValues('istio', { webhook: { hostNetwork: true } }));
    expect(host.one('Deployment', 'meshgate').spec.strategy).toEqual({
      type: 'RollingUpdate',
      rollingUpdate: { maxSurge: 0, maxUnavailable: 1 },
    });
    expect(plain.one('Deployment', 'meshgate').spec.revisionHistoryLimit).toBeUndefined();
  });

  it('probe timings are values; the handler stays the chart’s; enabled: false drops a probe', async () => {
    const r = await render(
      profileValues('istio', {
        webhook: { livenessProbe: { initialDelaySeconds: 30, timeoutSeconds: 5 }, readinessProbe: { enabled: false } },
        nodeAgent: { livenessProbe: { periodSeconds: 60 } },
        repairController: { readinessProbe: { failureThreshold: 6 } },
      }),
    );
    const w = r.one('Deployment', 'meshgate').spec.template.spec.containers[0];
    expect(w.livenessProbe).toEqual({
      httpGet: { scheme: 'HTTPS', path: '/healthz', port: 'https' },
      initialDelaySeconds: 30,
      periodSeconds: 10,
      failureThreshold: 3,
      timeoutSeconds: 5,
    });
    expect(w.readinessProbe).toBeUndefined();
    expect(r.one('DaemonSet', 'meshgate-node-agent').spec.template.spec.containers[0].livenessProbe.periodSeconds).toBe(
      60,
    );
    const rc = r.one('Deployment', 'meshgate-repair-controller').spec.template.spec.containers[0];
    expect(rc.readinessProbe).toEqual({
      httpGet: { path: '/readyz', port: 'http' },
      periodSeconds: 10,
      failureThreshold: 6,
    });
  });

  it('extraObjects: objects and tpl strings are installed with the release', async () => {
    const r = await render(
      profileValues('istio', {
        extraObjects: [
          {
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: { name: 'extra-a' },
            data: { ns: '{{ .Release.Namespace }}' },
          },
          'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra-b\ndata:\n  mesh: {{ .Values.mesh }}\n',
        ],
      }),
    );
    expect(r.one('ConfigMap', 'extra-a').data).toEqual({ ns: 'meshgate' });
    expect(r.one('ConfigMap', 'extra-b').data).toEqual({ mesh: 'istio' });
  });

  it('serviceAccount.labels and automountServiceAccountToken, and the pods’ own automountServiceAccountToken', async () => {
    const sa = { labels: { 'azure.workload.identity/use': 'true' }, automountServiceAccountToken: false };
    const r = await render(
      profileValues('istio', {
        webhook: { serviceAccount: sa, automountServiceAccountToken: true },
        nodeAgent: { serviceAccount: sa },
        repairController: { serviceAccount: sa },
        uninstall: { serviceAccount: sa },
      }),
    );
    for (const name of ['meshgate', 'meshgate-node-agent', 'meshgate-repair-controller', 'meshgate-uninstall']) {
      const s = r.one('ServiceAccount', name);
      expect(s.metadata.labels['azure.workload.identity/use'], name).toBe('true');
      expect(s.automountServiceAccountToken, name).toBe(false);
    }
    expect(r.one('Deployment', 'meshgate').spec.template.spec.automountServiceAccountToken).toBe(true);
    const plain = await render(profileValues('istio'));
    expect(plain.one('ServiceAccount', 'meshgate').automountServiceAccountToken).toBe(true);
    expect(plain.one('Deployment', 'meshgate').spec.template.spec.automountServiceAccountToken).toBeUndefined();
  });

  it('the PodDisruptionBudget takes maxUnavailable instead of minAvailable, and unhealthyPodEvictionPolicy', async () => {
    const r = await render(
      profileValues('istio', {
        webhook: { podDisruptionBudget: { maxUnavailable: '25%', unhealthyPodEvictionPolicy: 'AlwaysAllow' } },
      }),
    );
    const spec = r.one('PodDisruptionBudget', 'meshgate').spec;
    expect(spec.maxUnavailable).toBe('25%');
    expect(spec.minAvailable).toBeUndefined();
    expect(spec.unhealthyPodEvictionPolicy).toBe('AlwaysAllow');
  });

  it('image.registry goes before the repository (and wins over global.imageRegistry)', async () => {
    const r = await render(
      profileValues('istio', {
        image: { registry: 'registry.example.com/', tag: '1.2.3' },
        global: { imageRegistry: 'no' },
      }),
    );
    for (const [k, t] of WORKLOADS(r))
      expect(t.spec.containers[0].image, k).toBe('registry.example.com/ghcr.io/meshgate/meshgate:1.2.3');
  });
});
