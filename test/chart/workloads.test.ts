// The webhook Deployment (HA, probes, restricted security, shutdown timing, certificates), the node-agent
// DaemonSet (host network, every taint tolerated, read-only CNI mounts, node name from the downward API) and the
// repair controller Deployment (two replicas behind a Lease, probes and metrics over HTTP, restricted).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseDockerfile } from '../../scripts/dockerfile.ts';
import { repoRoot } from '../e2e/harness/binaries.ts';
import { render as renderChart, type Obj, type Rendered, type RenderOptions } from './helm.ts';
import { profileValues } from './profiles.ts';

/** The chart rendered for mesh istio with `values` on top. */
const render = (values: Obj = {}, o?: RenderOptions) => renderChart(profileValues('istio', values), o);

/** The fields Pod Security `restricted` checks on a container, plus meshgate's read-only root. */
function expectRestricted(pod: Obj, container: Obj) {
  expect(pod.securityContext).toMatchObject({
    runAsNonRoot: true,
    runAsUser: 65532,
    seccompProfile: { type: 'RuntimeDefault' },
  });
  expect(container.securityContext).toEqual({
    runAsNonRoot: true,
    runAsUser: 65532,
    runAsGroup: 65532,
    allowPrivilegeEscalation: false,
    readOnlyRootFilesystem: true,
    capabilities: { drop: ['ALL'] },
    seccompProfile: { type: 'RuntimeDefault' },
  });
  expect(pod.hostPID).toBeUndefined();
  expect(container.securityContext.privileged).toBeUndefined();
}

const flag = (args: string[], name: string) =>
  args.filter((a) => a.startsWith(`--${name}=`)).map((a) => a.slice(name.length + 3));

/** The chart rendered with its defaults once for the describe: the render, workload `name`'s pod spec, its first container. */
function workload(kind: string, name: string): { r: Rendered; pod: Obj; c: Obj } {
  const w = {} as { r: Rendered; pod: Obj; c: Obj };
  beforeAll(async () => {
    w.r = await render();
    w.pod = w.r.one(kind, name).spec.template.spec;
    w.c = w.pod.containers[0];
  });
  return w;
}

describe('webhook Deployment', () => {
  const w = workload('Deployment', 'meshgate');

  it('runs two replicas spread over nodes, guarded by a PodDisruptionBudget', () => {
    const d = w.r.one('Deployment', 'meshgate');
    expect(d.spec.replicas).toBe(2);
    const term = w.pod.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm;
    expect(term.topologyKey).toBe('kubernetes.io/hostname');
    expect(term.labelSelector.matchLabels).toEqual(d.spec.selector.matchLabels);
    const pdb = w.r.one('PodDisruptionBudget', 'meshgate');
    expect(pdb.spec).toEqual({ minAvailable: 1, selector: { matchLabels: d.spec.selector.matchLabels } });
  });

  it('serves on 8443 behind a Service on 443 that selects exactly the webhook pods', () => {
    expect(w.c.ports).toEqual([{ name: 'https', containerPort: 8443, protocol: 'TCP' }]);
    const svc = w.r.one('Service', 'meshgate');
    expect(svc.spec.ports).toEqual([{ name: 'https', port: 443, targetPort: 'https', protocol: 'TCP' }]);
    expect(svc.spec.selector).toEqual(w.r.one('Deployment', 'meshgate').spec.selector.matchLabels);
    expect(w.r.one('DaemonSet').spec.selector.matchLabels).not.toEqual(svc.spec.selector);
  });

  it('probes /readyz and /healthz over HTTPS on the webhook port', () => {
    expect(w.c.readinessProbe.httpGet).toEqual({ scheme: 'HTTPS', path: '/readyz', port: 'https' });
    expect(w.c.livenessProbe.httpGet).toEqual({ scheme: 'HTTPS', path: '/healthz', port: 'https' });
  });

  it('passes the Pod Security restricted checks', () => expectRestricted(w.pod, w.c));

  it('runs `serve` with the config, port, drain and the Service names as TLS SANs', () => {
    expect(w.c.args[0]).toBe('serve');
    expect(w.c.command).toBeUndefined(); // the image's ENTRYPOINT runs meshgate
    expect(flag(w.c.args, 'port')).toEqual(['8443']);
    expect(flag(w.c.args, 'config')).toEqual(['/etc/meshgate/config/config.yaml']);
    expect(flag(w.c.args, 'drain-seconds')).toEqual(['5']);
    expect(flag(w.c.args, 'webhook-timeout-seconds')).toEqual([
      String(w.r.one('ValidatingWebhookConfiguration').webhooks[0].timeoutSeconds),
    ]);
    expect(flag(w.c.args, 'tls-san')).toEqual(['meshgate.meshgate.svc', 'meshgate.meshgate.svc.cluster.local']);
    expect(flag(w.c.args, 'cert-file')).toEqual([]);
    expect(w.c.volumeMounts).toEqual([
      { name: 'config', mountPath: '/etc/meshgate/config', readOnly: true },
      MARK_MOUNT,
    ]);
    expect(w.pod.volumes).toEqual([{ name: 'config', configMap: { name: 'meshgate' } }, MARK_VOLUME]);
    expect(w.pod.serviceAccountName).toBe('meshgate');
    expect(w.c.resources.limits.memory).toBeDefined();
  });

  it('gives SIGTERM more time than the drain plus one admission call', async () => {
    for (const [drainSeconds, timeoutSeconds] of [
      [5, 10],
      [30, 30],
    ]) {
      const p = (await render({ webhook: { drainSeconds, timeoutSeconds } })).one('Deployment', 'meshgate').spec
        .template.spec;
      expect(p.terminationGracePeriodSeconds).toBeGreaterThan(drainSeconds + timeoutSeconds);
    }
  });

  it('rolls the pods when the config changes', async () => {
    const other = (await render({ config: { redirect: { mode: 'required' } } })).one('Deployment', 'meshgate');
    const key = 'checksum/config';
    expect(other.spec.template.metadata.annotations[key]).not.toBe(
      w.r.one('Deployment', 'meshgate').spec.template.metadata.annotations[key],
    );
  });

  it('cert-manager mode mounts the Secret read-only and passes --cert-file/--key-file', async () => {
    const p = (await render({ certs: { mode: 'cert-manager' } })).one('Deployment', 'meshgate').spec.template.spec;
    const args: string[] = p.containers[0].args;
    expect(flag(args, 'cert-file')).toEqual(['/etc/meshgate/tls/tls.crt']);
    expect(flag(args, 'key-file')).toEqual(['/etc/meshgate/tls/tls.key']);
    expect(p.containers[0].volumeMounts).toContainEqual({
      name: 'tls',
      mountPath: '/etc/meshgate/tls',
      readOnly: true,
    });
    expect(p.volumes).toContainEqual({ name: 'tls', secret: { secretName: 'meshgate-tls' } });
  });

  it('renders no PodDisruptionBudget for a single replica (it would block every drain)', async () => {
    expect((await render({ webhook: { replicas: 1 } })).all('PodDisruptionBudget')).toEqual([]);
  });
});

describe('node-agent DaemonSet', () => {
  const w = workload('DaemonSet', 'meshgate-node-agent');

  it('uses the host network and tolerates every taint, so it runs where the CNI chain is broken', () => {
    expect(w.pod.hostNetwork).toBe(true);
    expect(w.pod.dnsPolicy).toBe('ClusterFirstWithHostNet');
    expect(w.pod.tolerations).toEqual([{ operator: 'Exists' }]);
    expect(w.pod.serviceAccountName).toBe('meshgate-node-agent');
  });

  it('mounts the CNI conf and bin dirs read-only from the host at the same paths', () => {
    expect(w.pod.volumes).toEqual([
      { name: 'config', configMap: { name: 'meshgate' } },
      { name: 'cni-conf', hostPath: { path: '/etc/cni/net.d', type: 'Directory' } },
      { name: 'cni-bin-0', hostPath: { path: '/opt/cni/bin', type: 'Directory' } },
    ]);
    expect(w.c.volumeMounts).toEqual([
      { name: 'config', mountPath: '/etc/meshgate/config', readOnly: true },
      { name: 'cni-conf', mountPath: '/etc/cni/net.d', readOnly: true },
      { name: 'cni-bin-0', mountPath: '/opt/cni/bin', readOnly: true },
    ]);
  });

  it("runs the image's meshgate under V8's lite mode (jitless), the image's own Node and entry script", () => {
    const runtime = parseDockerfile(readFileSync(join(repoRoot, 'Dockerfile'), 'utf8')).at(-1)!;
    const entry = JSON.parse(runtime.instructions.findLast((i) => i.op === 'ENTRYPOINT')!.args) as string[];
    expect(w.c.command).toEqual([entry[0], '--lite-mode', entry.at(-1)]);
  });

  it('takes NODE_NAME from spec.nodeName, the plugin type from the config, the runtime from values', () => {
    expect(w.c.env).toContainEqual({ name: 'NODE_NAME', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } });
    expect(w.c.args[0]).toBe('node-agent');
    expect(flag(w.c.args, 'config')).toEqual(['/etc/meshgate/config/config.yaml']);
    expect(flag(w.c.args, 'plugin-type')).toEqual([]);
    expect(flag(w.c.args, 'runtime')).toEqual(['containerd']);
    expect(flag(w.c.args, 'cni-conf-dir')).toEqual(['/etc/cni/net.d']);
    expect(flag(w.c.args, 'cni-bin-dir')).toEqual(['/opt/cni/bin']);
    expect(w.c.args).not.toContain('--taint-unverified');
  });

  it('passes the restricted container checks without the proxy guard (hostPath and hostNetwork aside)', async () => {
    const p = (await render({ nodeAgent: { proxyGuard: { enabled: false } } })).one('DaemonSet').spec.template.spec;
    expectRestricted(p, p.containers[0]);
    expect(p.containers[0].args.filter((a: string) => a.startsWith('--proxy-guard'))).toEqual([]);
  });

  it('with the proxy guard (default): hostPID, UID 0 holding CAP_KILL alone, the rest as restricted', () => {
    expect(w.pod.hostPID).toBe(true);
    expect(w.c.securityContext).toEqual({
      runAsNonRoot: false,
      runAsUser: 0,
      runAsGroup: 0,
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'], add: ['KILL'] },
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(w.c.args).toContain('--proxy-guard');
    expect(flag(w.c.args, 'proxy-guard-interval')).toEqual(['1s']);
  });

  it('with Istio ambient too: one hostPID, UID 0; CAP_KILL only while the guard is on', async () => {
    for (const guard of [true, false]) {
      const values = { config: { ambient: { enabled: true } }, nodeAgent: { proxyGuard: { enabled: guard } } };
      const p = (await render(values)).one('DaemonSet').spec.template.spec;
      expect(p.hostPID, String(guard)).toBe(true);
      expect(p.containers[0].securityContext).toMatchObject({ runAsUser: 0, runAsGroup: 0, runAsNonRoot: false });
      expect(p.containers[0].securityContext.capabilities).toEqual(
        guard ? { drop: ['ALL'], add: ['KILL'] } : { drop: ['ALL'] },
      );
    }
  });

  it('follows values: CRI-O, two bin dirs, taint', async () => {
    const p = (
      await render({
        nodeAgent: { runtime: 'crio', cniBinDirs: ['/opt/cni/bin', '/usr/libexec/cni'], taintUnverified: true },
      })
    ).one('DaemonSet').spec.template.spec;
    const args: string[] = p.containers[0].args;
    expect(flag(args, 'runtime')).toEqual(['crio']);
    expect(flag(args, 'cni-bin-dir')).toEqual(['/opt/cni/bin', '/usr/libexec/cni']);
    expect(args).toContain('--taint-unverified');
    expect(p.containers[0].volumeMounts).toContainEqual({
      name: 'cni-bin-1',
      mountPath: '/usr/libexec/cni',
      readOnly: true,
    });
  });

  it('nodeAgent.enabled=false drops the agent and its RBAC', async () => {
    const r = await render({ nodeAgent: { enabled: false } });
    expect(r.all('DaemonSet')).toEqual([]);
    expect(r.all('ServiceAccount').map((s) => s.metadata.name)).not.toContain('meshgate-node-agent');
  });
});

/** The admission mark's Secret (docs/security.md), mounted into the webhook and the repair controller. */
const MARK_VOLUME = {
  name: 'admission-mark',
  secret: { secretName: 'meshgate-admission-mark', optional: true },
};
const MARK_MOUNT = { name: 'admission-mark', mountPath: '/etc/meshgate/admission-mark', readOnly: true };

describe('the admission mark’s key', () => {
  it('the webhook reads it from the mounted Secret and creates that Secret when missing; the repair controller reads it', async () => {
    const r = await render();
    const webhook = r.one('Deployment', 'meshgate').spec.template.spec;
    const repair = r.one('Deployment', 'meshgate-repair-controller').spec.template.spec;
    for (const p of [webhook, repair]) {
      expect(p.volumes).toContainEqual(MARK_VOLUME);
      expect(p.containers[0].volumeMounts).toContainEqual(MARK_MOUNT);
      expect(flag(p.containers[0].args, 'mark-key-dir')).toEqual(['/etc/meshgate/admission-mark']);
    }
    expect(flag(webhook.containers[0].args, 'mark-key-secret')).toEqual(['meshgate-admission-mark']);
    expect(flag(repair.containers[0].args, 'mark-key-secret')).toEqual([]);
    // Never rendered: `helm template` (GitOps) would otherwise hold a key, a new one at every render.
    expect(r.all('Secret').map((s) => s.metadata.name)).not.toContain('meshgate-admission-mark');
  });

  it('admissionMark: your own Secret, created by you', async () => {
    const r = await render({ admissionMark: { secretName: 'my-mark-key', create: false } });
    const webhook = r.one('Deployment', 'meshgate').spec.template.spec;
    expect(flag(webhook.containers[0].args, 'mark-key-secret')).toEqual([]);
    for (const d of ['meshgate', 'meshgate-repair-controller'])
      expect(r.one('Deployment', d).spec.template.spec.volumes).toContainEqual({
        name: 'admission-mark',
        secret: { secretName: 'my-mark-key', optional: true },
      });
    expect(r.all('Role').map((x) => x.metadata.name)).not.toContain('meshgate-webhook-admission-mark');
  });
});

describe('repair controller Deployment', () => {
  const w = workload('Deployment', 'meshgate-repair-controller');

  it('runs two replicas spread over nodes; only the Lease holder acts', () => {
    const d = w.r.one('Deployment', 'meshgate-repair-controller');
    expect(d.spec.replicas).toBe(2);
    const term = w.pod.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm;
    expect(term.labelSelector.matchLabels).toEqual(d.spec.selector.matchLabels);
    expect(d.spec.selector.matchLabels['app.kubernetes.io/component']).toBe('repair-controller');
    expect(w.c.args[0]).toBe('repair-controller');
    expect(flag(w.c.args, 'lease-name')).toEqual(['meshgate-repair-controller']);
    expect(flag(w.c.args, 'lease-duration')).toEqual(['15s']);
    expect(flag(w.c.args, 'renew-deadline')).toEqual(['10s']);
    expect(flag(w.c.args, 'retry-period')).toEqual(['2s']);
    expect(flag(w.c.args, 'max-deletes-per-minute')).toEqual(['10']);
    expect(w.c.args).not.toContain('--dry-run');
    // The identity in the Lease: the pod's own name.
    expect(w.c.env).toContainEqual({ name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } });
  });

  it('probes /healthz and /readyz and serves /metrics on its HTTP port', () => {
    expect(flag(w.c.args, 'port')).toEqual(['9090']);
    expect(w.c.ports).toEqual([{ name: 'http', containerPort: 9090, protocol: 'TCP' }]);
    expect(w.c.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'http' });
    expect(w.c.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'http' });
  });

  it('passes the Pod Security restricted checks', () => expectRestricted(w.pod, w.c));

  it('follows values: dry run, rate, timings, one replica; disabled drops it', async () => {
    const p = (
      await render({
        repairController: {
          replicas: 1,
          dryRun: true,
          maxDeletesPerMinute: 3,
          leaderElection: { leaseDuration: '30s', renewDeadline: '20s', retryPeriod: '5s' },
        },
      })
    ).one('Deployment', 'meshgate-repair-controller');
    expect(p.spec.replicas).toBe(1);
    const args: string[] = p.spec.template.spec.containers[0].args;
    expect(args).toContain('--dry-run');
    expect([
      flag(args, 'max-deletes-per-minute'),
      flag(args, 'lease-duration'),
      flag(args, 'renew-deadline'),
      flag(args, 'retry-period'),
    ]).toEqual([['3'], ['30s'], ['20s'], ['5s']]);
    expect(
      (await render({ repairController: { enabled: false } })).all('Deployment').map((d) => d.metadata.name),
    ).toEqual(['meshgate']);
  });
});
