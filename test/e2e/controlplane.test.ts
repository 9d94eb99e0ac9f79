// Smoke test of the e2e harness: a real control plane starts, reports the pinned version, schedules a Deployment
// onto kwok nodes with the real scheduler, and leaves no process or file behind after stop().
import { existsSync } from 'node:fs';
import { AppsV1Api, CoreV1Api, VersionApi } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startControlPlane, waitForPodsRunning, type ControlPlane } from './harness/index.ts';
import { isAlive } from './harness/procs.ts';

describe('e2e control plane harness', () => {
  let cp: ControlPlane | undefined;

  beforeAll(async () => {
    cp = await startControlPlane();
  }, 300_000);

  afterAll(async () => {
    await cp?.stop();
  });

  it('serves the pinned Kubernetes 1.34 release', async () => {
    const version = await cp!.kc.makeApiClient(VersionApi).getCode();
    expect(version.gitVersion).toMatch(/^v1\.34\.\d+$/);
    expect(version.gitVersion).toBe(cp!.versions.kubernetesVersion);
    expect(version.minor).toBe('34');

    const kubectl = await cp!.kubectl(['version', '-o', 'json']);
    expect(kubectl.code, kubectl.stderr).toBe(0);
    const parsed = JSON.parse(kubectl.stdout) as { clientVersion: { gitVersion: string } };
    expect(parsed.clientVersion.gitVersion).toBe(version.gitVersion);
  });

  it('runs a Deployment on kwok nodes scheduled by the real scheduler', async () => {
    await cp!.addNode('kwok-a', { labels: { 'meshgate.test/pool': 'a' }, kubeletVersion: 'v1.34.1' });
    await cp!.addNode('kwok-b', { labels: { 'meshgate.test/pool': 'b' } });
    const core = cp!.kc.makeApiClient(CoreV1Api);
    const nodeA = await core.readNode({ name: 'kwok-a' });
    expect(nodeA.status?.nodeInfo?.kubeletVersion).toBe('v1.34.1');
    expect(nodeA.metadata?.labels?.['meshgate.test/pool']).toBe('a');

    const namespace = 'smoke';
    await core.createNamespace({ body: { metadata: { name: namespace } } });
    const labels = { app: 'smoke' };
    await cp!.kc.makeApiClient(AppsV1Api).createNamespacedDeployment({
      namespace,
      body: {
        metadata: { name: 'smoke', labels },
        spec: {
          replicas: 2,
          selector: { matchLabels: labels },
          template: {
            metadata: { labels },
            spec: { containers: [{ name: 'app', image: 'registry.example/app:1' }] },
          },
        },
      },
    });

    // Needs the controller-manager (ReplicaSet), the default ServiceAccount, the scheduler and kwok.
    const pods = await waitForPodsRunning(cp!.kc, namespace, 'app=smoke', 2, { describe: () => cp!.describe(15) });
    expect(pods).toHaveLength(2);
    for (const pod of pods) {
      expect(['kwok-a', 'kwok-b']).toContain(pod.spec?.nodeName);
      expect(pod.status?.conditions?.find((c) => c.type === 'PodScheduled')?.status).toBe('True');
    }
    const events = await core.listNamespacedEvent({ namespace, fieldSelector: 'reason=Scheduled' });
    expect(
      events.items.filter(
        (e) => e.source?.component === 'default-scheduler' || e.reportingComponent === 'default-scheduler',
      ).length,
    ).toBeGreaterThanOrEqual(2);
  }, 120_000);

  it('stop() leaves no component process and no temp dir behind', async () => {
    const pids = cp!.pids();
    expect(Object.keys(pids).sort()).toEqual([
      'etcd',
      'kube-apiserver',
      'kube-controller-manager',
      'kube-scheduler',
      'kwok',
    ]);
    expect(cp!.logs('kube-apiserver')).not.toBe('');
    await cp!.stop();
    for (const [name, pid] of Object.entries(pids)) {
      expect(isAlive(pid!), `${name} (pid ${pid}) still running`).toBe(false);
      expect(isAlive(-pid!), `${name}'s process group ${pid} still has members`).toBe(false);
    }
    expect(existsSync(cp!.dir)).toBe(false);
    expect(cp!.pids()).toEqual({});
  }, 60_000);
});
