// The chart's platform values, rendered by the real helm (docs/platforms/): the node agent's Multus dirs and path
// aliases (flags the agent's own parser accepts, read-only mounts at the same paths), GKE's ResourceQuota for the
// critical priority classes, and OpenShift's SecurityContextConstraints with the RBAC to use it. Everything is off by
// default. OpenShift's SCC admission does not run here: the test holds the agent's pod to the SCC field by field.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseNodeAgentArgs } from '../../src/cli/node-agent.ts';
import { render as renderChart, type Obj } from './helm.ts';
import { profileValues } from './profiles.ts';

const render = (values: Obj = {}) => renderChart(profileValues('istio', values));
const agentPod = (r: Awaited<ReturnType<typeof render>>) =>
  r.one('DaemonSet', 'meshgate-node-agent').spec.template.spec;

describe('defaults: no platform objects', () => {
  it('renders no ResourceQuota, SCC or SCC RBAC, and the agent has no Multus flags or mounts', async () => {
    const r = await render();
    expect(r.all('ResourceQuota')).toEqual([]);
    expect(r.all('SecurityContextConstraints')).toEqual([]);
    expect(r.all('ClusterRole').map((c) => c.metadata.name)).not.toContain('meshgate-node-agent-scc');
    const pod = agentPod(r);
    expect(pod.containers[0].args.filter((a: string) => a.startsWith('--multus'))).toEqual([]);
    expect(pod.volumes.map((v: Obj) => v.name).filter((n: string) => n.startsWith('multus'))).toEqual([]);
  });
});

describe('nodeAgent.multus (OpenShift values from docs/platforms/openshift.md)', () => {
  const multus = {
    dirs: ['/run/multus/cni/net.d', '/etc/cni/multus/net.d'],
    paths: [{ from: '/host/run/multus/cni/net.d', to: '/run/multus/cni/net.d' }],
  };

  it('passes flags the agent accepts, and mounts each dir read-only at its own path', async () => {
    const r = await render({
      nodeAgent: { multus, runtime: 'crio', cniConfDir: '/etc/kubernetes/cni/net.d', cniBinDirs: ['/var/lib/cni/bin'] },
      config: { cni: { multusNetwork: 'default/istio-cni' } },
    });
    const pod = agentPod(r);
    const c = pod.containers[0];
    expect(c.args).toEqual(
      expect.arrayContaining([
        '--multus-dir=/run/multus/cni/net.d',
        '--multus-dir=/etc/cni/multus/net.d',
        '--multus-path=/host/run/multus/cni/net.d=/run/multus/cni/net.d',
      ]),
    );
    const config = r.one('ConfigMap', 'meshgate').data['config.yaml'];
    expect(JSON.parse(config).cni.multusNetwork).toBe('default/istio-cni');
    // The agent's own parser over the rendered args, the rendered config file in place of the mounted one.
    const dir = mkdtempSync(join(tmpdir(), 'meshgate-agent-config-'));
    const file = join(dir, 'config.yaml');
    writeFileSync(file, config);
    const argv = c.args
      .filter((a: string) => a !== 'node-agent')
      .map((a: string) => (a.startsWith('--config=') ? `--config=${file}` : a));
    const options = parseNodeAgentArgs(argv, { NODE_NAME: 'n', KUBERNETES_SERVICE_HOST: 'h' });
    rmSync(dir, { recursive: true, force: true });
    expect(options.multus?.network).toBe('default/istio-cni');
    expect(options.multusDirs).toEqual(multus.dirs);
    expect(options.multus?.paths).toEqual([
      ...multus.paths,
      { from: '/host/etc/cni/net.d', to: '/etc/kubernetes/cni/net.d' },
    ]);
    for (const [i, dir] of multus.dirs.entries()) {
      expect(c.volumeMounts).toContainEqual({ name: `multus-${i}`, mountPath: dir, readOnly: true });
      expect(pod.volumes).toContainEqual({ name: `multus-${i}`, hostPath: { path: dir, type: 'DirectoryOrCreate' } });
    }
  });

  it.each([
    [{ dirs: ['relative'] }, /multus\/dirs\/0/],
    [{ paths: [{ from: '/a' }] }, /missing property 'to'|to/],
  ])('the schema refuses %j', async (bad, err) => {
    await expect(render({ nodeAgent: { multus: bad } })).rejects.toThrow(err);
  });
});

describe('priorityClassQuota (GKE)', () => {
  it('covers exactly the system-*-critical classes the workloads use', async () => {
    const r = await render({ priorityClassQuota: { enabled: true } });
    const q = r.one('ResourceQuota');
    expect(q.metadata).toMatchObject({ name: 'meshgate-critical-pods', namespace: 'meshgate' });
    expect(q.spec).toEqual({
      hard: { pods: '1000' },
      scopeSelector: {
        matchExpressions: [
          { operator: 'In', scopeName: 'PriorityClass', values: ['system-cluster-critical', 'system-node-critical'] },
        ],
      },
    });
  });

  it('follows the workloads’ classes; none critical: no quota', async () => {
    const one = await render({
      priorityClassQuota: { enabled: true, pods: 50 },
      webhook: { priorityClassName: 'meshgate-high' },
      repairController: { priorityClassName: 'system-node-critical' },
    });
    expect(one.one('ResourceQuota').spec.scopeSelector.matchExpressions[0].values).toEqual(['system-node-critical']);
    expect(one.one('ResourceQuota').spec.hard.pods).toBe('50');
    const none = await render({
      priorityClassQuota: { enabled: true },
      webhook: { priorityClassName: '' },
      nodeAgent: { priorityClassName: 'meshgate-node' },
    });
    expect(none.all('ResourceQuota')).toEqual([]);
  });
});

describe('openshift.scc', () => {
  it('an SCC the node agent’s pod satisfies field by field, usable only by the agent’s ServiceAccount', async () => {
    const r = await render({ openshift: { scc: { enabled: true } }, nodeAgent: { proxyGuard: { enabled: false } } });
    const scc = r.one('SecurityContextConstraints');
    expect(scc.apiVersion).toBe('security.openshift.io/v1');
    const name = scc.metadata.name;
    expect(name).toBe('meshgate-node-agent');
    const role = r.one('ClusterRole', `${name}-scc`);
    expect(role.rules).toEqual([
      {
        apiGroups: ['security.openshift.io'],
        resources: ['securitycontextconstraints'],
        resourceNames: [name],
        verbs: ['use'],
      },
    ]);
    const binding = r.one('ClusterRoleBinding', `${name}-scc`);
    expect(binding.roleRef.name).toBe(`${name}-scc`);
    expect(binding.subjects).toEqual([{ kind: 'ServiceAccount', name: 'meshgate-node-agent', namespace: 'meshgate' }]);

    const pod = agentPod(r);
    const c = pod.containers[0];
    expect(scc.users).toEqual([]);
    expect(scc.groups).toEqual([]);
    // What the pod asks for is allowed…
    expect(pod.hostNetwork && scc.allowHostNetwork && scc.allowHostPorts).toBe(true);
    const kinds = pod.volumes.map((v: Obj) => Object.keys(v).find((k) => k !== 'name'));
    for (const kind of kinds) expect(scc.volumes, kind).toContain(kind);
    expect(kinds).toContain('hostPath');
    expect(scc.allowHostDirVolumePlugin).toBe(true);
    // …and what the SCC requires, the pod does.
    expect(c.securityContext.capabilities).toEqual({ drop: ['ALL'] });
    expect(scc.requiredDropCapabilities).toEqual(['ALL']);
    expect(c.securityContext.allowPrivilegeEscalation).toBe(false);
    expect(scc.allowPrivilegeEscalation).toBe(false);
    expect(c.securityContext.readOnlyRootFilesystem).toBe(true);
    expect(scc.readOnlyRootFilesystem).toBe(true);
    expect(scc.runAsUser).toEqual({ type: 'MustRunAsNonRoot' });
    expect(c.securityContext.runAsNonRoot && c.securityContext.runAsUser > 0).toBe(true);
    expect(c.securityContext.seccompProfile).toEqual({ type: 'RuntimeDefault' });
    expect(scc.seccompProfiles).toEqual(['runtime/default']);
    // Nothing beyond: no privileged container, host PID/IPC or added capabilities.
    expect(scc).toMatchObject({ allowPrivilegedContainer: false, allowHostPID: false, allowHostIPC: false });
    expect(scc.allowedCapabilities).toEqual([]);
  });

  it('with the proxy guard (default): also the host PID namespace and UID 0 holding CAP_KILL alone', async () => {
    const r = await render({ openshift: { scc: { enabled: true } } });
    const scc = r.one('SecurityContextConstraints');
    const pod = agentPod(r);
    const c = pod.containers[0];
    expect(pod.hostPID && scc.allowHostPID).toBe(true);
    expect(c.securityContext.capabilities).toEqual({ drop: ['ALL'], add: ['KILL'] });
    expect(scc.allowedCapabilities).toEqual(['KILL']);
    expect(scc.requiredDropCapabilities).toEqual(['ALL']);
    expect(c.securityContext.runAsUser).toBe(0);
    expect(scc.runAsUser).toEqual({ type: 'MustRunAs', uid: 0 });
    expect(scc).toMatchObject({
      allowPrivilegedContainer: false,
      allowPrivilegeEscalation: false,
      allowHostIPC: false,
    });
    expect(c.securityContext).toMatchObject({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true });
  });

  it('no node agent, no SCC', async () => {
    const r = await render({ openshift: { scc: { enabled: true } }, nodeAgent: { enabled: false } });
    expect(r.all('SecurityContextConstraints')).toEqual([]);
  });
});
