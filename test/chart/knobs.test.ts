// The chart's production knobs, each rendered by the real helm: pod labels and annotations for every workload,
// security contexts with keys unset (OpenShift), topology spread, webhook.hostNetwork (EKS with a custom CNI), extra
// args/env/volumes, the agent's update strategy, probes and metrics port, the NetworkPolicies and the helm test pod.
// `helm lint --strict` with every knob set at once.
import { describe, expect, it } from 'vitest';
import { chartDir, helmWithValues, KUBE_VERSION, render as renderChart, templateArgs, type Obj } from './helm.ts';
import { profileValues } from './profiles.ts';
import { ALL_KNOBS, extras } from './knobs.ts';

const render = (values: Obj = {}) => renderChart(profileValues('istio', values));
const WORKLOADS: Array<[string, string, string]> = [
  ['webhook', 'Deployment', 'meshgate'],
  ['nodeAgent', 'DaemonSet', 'meshgate-node-agent'],
  ['repairController', 'Deployment', 'meshgate-repair-controller'],
];
describe('pod labels and annotations', () => {
  it("the global ones reach every workload and the test pod, each workload's its own; the selector labels always win", async () => {
    const r = await render({
      podLabels: { team: 'mesh', 'app.kubernetes.io/component': 'hijack' },
      podAnnotations: { owner: 'platform' },
      webhook: { podLabels: { tier: 'webhook' }, podAnnotations: { owner: 'webhook-team' } },
      nodeAgent: { podLabels: { tier: 'agent' } },
      repairController: { podAnnotations: { x: 'y' } },
    });
    for (const [key, kind, name] of WORKLOADS) {
      const d = r.one(kind, name);
      const meta = d.spec.template.metadata;
      expect(meta.labels.team, name).toBe('mesh');
      expect(
        Object.entries(d.spec.selector.matchLabels).every(([k, v]) => meta.labels[k] === v),
        `${name} still matches its selector`,
      ).toBe(true);
      expect(meta.annotations['checksum/config'], name).toMatch(/^[0-9a-f]{64}$/);
      if (key === 'webhook') expect([meta.labels.tier, meta.annotations.owner]).toEqual(['webhook', 'webhook-team']);
      if (key === 'nodeAgent') expect([meta.labels.tier, meta.annotations.owner]).toEqual(['agent', 'platform']);
      if (key === 'repairController') expect([meta.annotations.x, meta.annotations.owner]).toEqual(['y', 'platform']);
    }
    const testPod = r.all('Pod').find((p) => p.metadata.annotations?.['helm.sh/hook'] === 'test')!;
    expect(testPod.metadata.labels.team).toBe('mesh');
  });

  it('refuses a label value Kubernetes would refuse', async () => {
    const res = await helmWithValues(
      templateArgs(),
      profileValues('istio', { webhook: { podLabels: { team: 'a b' } } }),
    );
    expect(res.code).not.toBe(0);
    expect(res.stderr).toContain("at '/webhook/podLabels/team'");
  });
});

describe('security contexts', () => {
  it('restricted by default on every workload and the test pod', async () => {
    const r = await render();
    for (const pod of [
      ...WORKLOADS.map(([, kind, name]) => r.one(kind, name).spec.template.spec),
      r.all('Pod')[0].spec,
    ]) {
      expect(pod.securityContext).toEqual({
        runAsNonRoot: true,
        runAsUser: 65532,
        runAsGroup: 65532,
        seccompProfile: { type: 'RuntimeDefault' },
      });
      // The one exception: the node agent's proxy guard kills processes of any UID (workloads.test.ts).
      const guard = pod.hostPID === true;
      expect(pod.containers[0].securityContext).toMatchObject({
        runAsUser: guard ? 0 : 65532,
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        capabilities: guard ? { drop: ['ALL'], add: ['KILL'] } : { drop: ['ALL'] },
      });
    }
    expect(WORKLOADS.filter(([, kind, name]) => r.one(kind, name).spec.template.spec.hostPID)).toEqual([
      expect.arrayContaining(['DaemonSet', 'meshgate-node-agent']),
    ]);
  });

  it('OpenShift: runAsUser and runAsGroup set to null are left out, so the platform assigns them; the rest stays', async () => {
    const r = await render({
      podSecurityContext: { runAsUser: null, runAsGroup: null },
      containerSecurityContext: { runAsUser: null, runAsGroup: null },
    });
    for (const [, kind, name] of WORKLOADS) {
      const pod = r.one(kind, name).spec.template.spec;
      expect(pod.securityContext, name).toEqual({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
      // The proxy guard's UID 0 is the chart's own, whatever the platform assigns the others (its SCC allows only 0).
      if (pod.hostPID) {
        expect(pod.containers[0].securityContext, name).toMatchObject({ runAsUser: 0, runAsNonRoot: false });
        continue;
      }
      expect(pod.containers[0].securityContext, name).toEqual({
        runAsNonRoot: true,
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        capabilities: { drop: ['ALL'] },
        seccompProfile: { type: 'RuntimeDefault' },
      });
    }
  });

  it.each([
    [
      { containerSecurityContext: { runAsUser: 0 } },
      "at '/containerSecurityContext/runAsUser': minimum: got 0, want 1",
    ],
    [
      { containerSecurityContext: { privileged: true } },
      "at '/containerSecurityContext/privileged': value must be false",
    ],
    [{ podSecurityContext: { runAsNonRoot: false } }, "at '/podSecurityContext/runAsNonRoot': value must be true"],
  ])('refuses root or privilege: %j', async (values, message) => {
    const res = await helmWithValues(templateArgs(), profileValues('istio', values));
    expect(res.code).not.toBe(0);
    expect(res.stderr).toContain(message);
  });
});

describe('scheduling and extras', () => {
  it("topologySpreadConstraints: an entry without labelSelector gets the workload's own", async () => {
    const own = {
      maxSkew: 1,
      topologyKey: 'kubernetes.io/hostname',
      whenUnsatisfiable: 'DoNotSchedule',
      labelSelector: { matchLabels: { x: 'y' } },
    };
    const r = await render({
      webhook: {
        topologySpreadConstraints: [
          { maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'ScheduleAnyway' },
          own,
        ],
      },
    });
    const d = r.one('Deployment', 'meshgate');
    expect(d.spec.template.spec.topologySpreadConstraints).toEqual([
      {
        maxSkew: 1,
        topologyKey: 'topology.kubernetes.io/zone',
        whenUnsatisfiable: 'ScheduleAnyway',
        labelSelector: { matchLabels: d.spec.selector.matchLabels },
      },
      own,
    ]);
    expect(
      r.one('Deployment', 'meshgate-repair-controller').spec.template.spec.topologySpreadConstraints,
    ).toBeUndefined();
  });

  it("extra args, env, volumes and mounts are appended to every workload's own", async () => {
    const r = await render({ webhook: extras, nodeAgent: extras, repairController: extras });
    for (const [, kind, name] of WORKLOADS) {
      const pod = r.one(kind, name).spec.template.spec;
      const c = pod.containers[0];
      expect(c.args.at(-1), name).toBe('--log-level=debug');
      expect(c.args.length, name).toBeGreaterThan(2);
      expect(c.env.at(-1), name).toEqual(extras.extraEnv[0]);
      expect(c.volumeMounts.at(-1), name).toEqual(extras.extraVolumeMounts[0]);
      expect(
        c.volumeMounts.some((m: Obj) => m.name === 'config'),
        name,
      ).toBe(true);
      expect(pod.volumes.at(-1), name).toEqual(extras.extraVolumes[0]);
    }
  });

  it("the node agent: update strategy from the values, probes and metrics on its port, bound to the node's IP", async () => {
    const r = await render({ nodeAgent: { port: 9500, updateStrategy: { type: 'OnDelete' } } });
    const ds = r.one('DaemonSet');
    expect(ds.spec.updateStrategy).toEqual({ type: 'OnDelete' });
    const c = ds.spec.template.spec.containers[0];
    expect(c.ports).toEqual([{ name: 'metrics', containerPort: 9500, protocol: 'TCP' }]);
    expect(c.args).toEqual(expect.arrayContaining(['--port=9500', '--host=$(POD_IP)']));
    expect(c.env).toContainEqual({ name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } });
    expect(c.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'metrics' });
    expect(c.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'metrics' });
    expect((await render()).one('DaemonSet').spec.updateStrategy).toEqual({
      type: 'RollingUpdate',
      rollingUpdate: { maxUnavailable: '10%' },
    });
  });
});

describe('webhook.hostNetwork', () => {
  it("runs the webhook in the node's network on its own port and IP, with cluster DNS", async () => {
    const r = await render({ webhook: { hostNetwork: true, port: 10260 } });
    const pod = r.one('Deployment', 'meshgate').spec.template.spec;
    expect([pod.hostNetwork, pod.dnsPolicy]).toEqual([true, 'ClusterFirstWithHostNet']);
    const c = pod.containers[0];
    expect(c.args).toEqual(expect.arrayContaining(['--port=10260', '--host=$(POD_IP)']));
    expect(c.env).toContainEqual({ name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } });
    expect(c.ports).toEqual([{ name: 'https', containerPort: 10260, protocol: 'TCP' }]);
    // The Service still reaches it by port name; the apiserver still calls the Service.
    expect(r.one('Service', 'meshgate').spec.ports[0].targetPort).toBe('https');
  });

  it('is off by default: pod network, no POD_IP', async () => {
    const pod = (await render()).one('Deployment', 'meshgate').spec.template.spec;
    expect(pod.hostNetwork).toBeUndefined();
    expect(pod.containers[0].env).toBeUndefined();
    expect(pod.containers[0].args.some((a: string) => a.startsWith('--host'))).toBe(false);
  });
});

describe('NetworkPolicy', () => {
  it('none by default', async () => {
    expect((await render()).all('NetworkPolicy')).toEqual([]);
  });

  it('the webhook: its port open to any source (the apiserver), egress to DNS and the API only', async () => {
    const r = await render({ networkPolicy: { enabled: true, apiServer: { cidrs: ['10.0.0.0/24'], ports: [6443] } } });
    const np = r.one('NetworkPolicy', 'meshgate').spec;
    expect(np.podSelector.matchLabels).toEqual(r.one('Deployment', 'meshgate').spec.selector.matchLabels);
    expect(np.policyTypes).toEqual(['Ingress', 'Egress']);
    expect(np.ingress).toEqual([{ ports: [{ port: 8443, protocol: 'TCP' }] }]);
    expect(np.egress).toEqual([
      {
        ports: [
          { port: 53, protocol: 'UDP' },
          { port: 53, protocol: 'TCP' },
        ],
      },
      { ports: [{ port: 6443, protocol: 'TCP' }], to: [{ ipBlock: { cidr: '10.0.0.0/24' } }] },
    ]);
  });

  it('the repair controller: its port from metricsFrom only', async () => {
    const from = [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }];
    const r = await render({ networkPolicy: { enabled: true, metricsFrom: from } });
    const np = r.one('NetworkPolicy', 'meshgate-repair-controller').spec;
    expect(np.podSelector.matchLabels).toEqual(
      r.one('Deployment', 'meshgate-repair-controller').spec.selector.matchLabels,
    );
    expect(np.ingress).toEqual([{ ports: [{ port: 9090, protocol: 'TCP' }], from }]);
    expect(np.egress[1]).toEqual({
      ports: [
        { port: 443, protocol: 'TCP' },
        { port: 6443, protocol: 'TCP' },
      ],
    });
  });
});

describe('helm test', () => {
  it("a test hook pod in meshgate's image, no API token, only ca.crt of the TLS Secret, the script from a ConfigMap", async () => {
    const r = await render();
    const pod = r.all('Pod').find((p) => p.metadata.annotations?.['helm.sh/hook'] === 'test')!;
    expect(pod.spec.restartPolicy).toBe('Never');
    expect(pod.spec.automountServiceAccountToken).toBe(false);
    const c = pod.spec.containers[0];
    expect(c.image).toBe('ghcr.io/meshgate/meshgate:0.1.0');
    expect(c.env).toContainEqual({ name: 'WEBHOOK_URL', value: 'https://meshgate.meshgate.svc:443' });
    expect(pod.spec.volumes).toContainEqual({
      name: 'ca',
      secret: { secretName: 'meshgate-tls', items: [{ key: 'ca.crt', path: 'ca.crt' }] },
    });
    const script = r.one('ConfigMap', 'meshgate-test');
    expect(script.metadata.annotations?.['helm.sh/hook']).toBeUndefined();
    expect(script.data['webhook-test.mjs']).toContain("call('/validate'");
    expect(c.command[1]).toBe(`${c.volumeMounts.find((m: Obj) => m.name === 'test').mountPath}/webhook-test.mjs`);
  });
});

describe('helm lint --strict with every knob', () => {
  it('passes', async () => {
    const res = await helmWithValues(
      ['lint', '--strict', chartDir, '--kube-version', KUBE_VERSION],
      profileValues('istio', ALL_KNOBS),
    );
    expect(res.code, res.stdout + res.stderr).toBe(0);
  });
});
