/**
 * meshgate installed as a subchart (issue 34 §6): a parent chart that depends on charts/meshgate and sets `global`
 * (its own keys and the ones meshgate reads) is installed by the real helm on a real apiserver with kwok nodes; every
 * workload of meshgate rolls out, as the parent's release, on Linux nodes only, with the parent's pull secrets, labels,
 * history limit and registry; `helm uninstall` removes it.
 */
import { rmSync } from 'node:fs';
import { AppsV1Api, CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parentChart } from '../chart/helm.ts';
import { profileValues } from '../chart/profiles.ts';
import { startControlPlane, waitFor, type ControlPlane } from './harness/index.ts';

let cp: ControlPlane;
let dir: string;

beforeAll(async () => {
  cp = await startControlPlane({
    nodes: [
      { name: 'linux-a', kubeletVersion: 'v1.34.2' },
      // A Windows node: the node agent must not be scheduled there (the DaemonSet's kubernetes.io/os selector).
      { name: 'windows-a', kubeletVersion: 'v1.34.2', labels: { 'kubernetes.io/os': 'windows' } },
    ],
  });
  dir = parentChart({
    global: {
      imageRegistry: 'mirror.example.com',
      imagePullSecrets: ['mirror-pull'],
      commonLabels: { team: 'platform' },
      revisionHistoryLimit: 2,
      // What only the parent's other subcharts read.
      storageClass: 'fast',
      postgresql: { auth: { database: 'x' } },
    },
    meshgate: profileValues('istio'),
  });
}, 300_000);

afterAll(async () => {
  await cp?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('meshgate as a subchart', () => {
  it('installs with the parent’s global, rolls out, and uninstalls', async () => {
    await cp.kubectl(['create', 'namespace', 'platform']);
    await cp.kubectl(['label', 'namespace', 'platform', 'pod-security.kubernetes.io/enforce=privileged']);
    const install = await cp.helm(['install', 'platform', dir, '-n', 'platform', '--wait', '--timeout', '3m']);
    expect(install.code, install.stderr).toBe(0);
    const apps = cp.kc.makeApiClient(AppsV1Api);
    // helm's --wait can return once the Deployment is ready enough for its rollout strategy, before the Deployment
    // controller has counted both replicas available (seen at a load average of 11): wait for the count itself.
    const d = await waitFor(
      'both webhook replicas available',
      async () => {
        const got = await apps.readNamespacedDeployment({ name: 'platform-meshgate', namespace: 'platform' });
        return got.status?.availableReplicas === 2 && got;
      },
      { timeoutMs: 120_000 },
    );
    expect(d.status?.availableReplicas).toBe(2);
    expect(d.spec?.revisionHistoryLimit).toBe(2);
    expect(d.metadata?.labels?.team).toBe('platform');
    expect(d.spec?.template.spec?.containers[0].image).toMatch(/^mirror\.example\.com\/ghcr\.io\/meshgate\/meshgate:/);
    expect(d.spec?.template.spec?.imagePullSecrets).toEqual([{ name: 'mirror-pull' }]);
    const agents = await cp.kc
      .makeApiClient(CoreV1Api)
      .listNamespacedPod({ namespace: 'platform', labelSelector: 'app.kubernetes.io/component=node-agent' });
    expect(agents.items.map((p) => p.spec?.nodeName)).toEqual(['linux-a']);
    const ds = await apps.readNamespacedDaemonSet({ name: 'platform-meshgate-node-agent', namespace: 'platform' });
    expect(ds.status?.desiredNumberScheduled).toBe(1);
    const uninstall = await cp.helm(['uninstall', 'platform', '-n', 'platform', '--wait', '--timeout', '3m']);
    expect(uninstall.code, uninstall.stderr).toBe(0);
    await waitFor('the webhook Deployment gone', async () =>
      apps.readNamespacedDeployment({ name: 'platform-meshgate', namespace: 'platform' }).then(
        () => false,
        () => true,
      ),
    );
  }, 300_000);
});
