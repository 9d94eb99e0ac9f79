/**
 * Istio ambient pods through a real kube-apiserver (issue 26): meshgate started with ambient enabled reads namespace
 * labels from its own watch (never an API call on the admission path), gives a pod of an ambient namespace the
 * ambient validator first with the affinity to verified nodes, and refuses the silent opt-outs and unverified nodes
 * with their reason codes. kwok nodes: nothing runs the pods; the validator itself is proven in test/netns.
 */
import { describe, expect, it } from 'vitest';
import type { V1Pod } from '@kubernetes/client-node';
import { apiError, createNamespace, restrictedPod } from './meshgate.ts';
import { shared } from './harness/shared.ts';
import { startGuardedCluster, VERIFIED_AND_NOT } from './harness/clusters.ts';

/** The cluster this file's tests share: a verified and an unverified node, meshgate for Istio with ambient on. */
const s = shared(async (stopLater) => {
  const cluster = await startGuardedCluster(stopLater, VERIFIED_AND_NOT, {
    config: { ambient: { enabled: true } },
    mesh: 'istio',
  });
  await createNamespace(cluster.cp, 'amb', { 'meshgate.io/inject': 'enabled', 'istio.io/dataplane-mode': 'ambient' });
  await createNamespace(cluster.cp, 'side', { 'meshgate.io/inject': 'enabled' });
  return cluster;
});

/** Creates the pod; the error message when the apiserver refuses it. */
async function create(ns: string, pod: V1Pod): Promise<V1Pod | string> {
  try {
    return await s.core.createNamespacedPod({ namespace: ns, body: pod });
  } catch (err) {
    return apiError(err);
  }
}

describe('Istio ambient through the real apiserver', () => {
  it('a pod of an ambient namespace gets the ambient validator first, pinned to verified nodes', async () => {
    // The namespace watch may not have delivered "amb" yet: meshgate says so instead of guessing.
    let got: V1Pod | string = '';
    for (let i = 0; i < 50; i++) {
      got = await create('amb', restrictedPod(`web-${i}`));
      if (typeof got !== 'string' || !got.includes('ambient_namespace_unknown')) break;
      console.info(`attempt ${i}: ${got}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(typeof got, String(got)).toBe('object');
    const pod = got as V1Pod;
    expect(pod.spec?.initContainers?.[0]).toMatchObject({
      name: 'istio-validation',
      args: ['--ambient', '--timeout=10s'],
    });
    expect(JSON.stringify(pod.spec?.affinity)).toContain('meshgate.io/cni-verified');
    expect(pod.metadata?.labels?.['meshgate.io/redirect']).toBe('cni');
    expect(pod.metadata?.annotations?.['meshgate.io/status']).toContain('"reason":"ambient_affinity_verified"');
  });

  it.each([
    ['ambient.istio.io/redirection', 'enabled', 'ambient_redirection_preset'],
    ['ambient.istio.io/dns-capture', 'false', 'ambient_dns_capture_off'],
    ['ambient.istio.io/bypass-inbound-capture', 'true', 'ambient_inbound_bypass'],
    ['sidecar.istio.io/status', '{}', 'ambient_status_preset'],
  ])('%s=%s is refused: %s', async (key, value, reason) => {
    const pod = restrictedPod(`optout-${reason.replaceAll('_', '-')}`);
    pod.metadata!.annotations = { [key]: value };
    const got = await create('amb', pod);
    expect(got).toEqual(expect.stringContaining(reason));
  });

  it('bound to an unverified node: refused (ambient has no fallback); to the verified one: admitted', async () => {
    const bad = await create('amb', restrictedPod('bound-bad', { nodeName: 'node-unverified' }));
    expect(bad).toEqual(expect.stringContaining('node_unverified'));
    const good = await create('amb', restrictedPod('bound-good', { nodeName: 'node-verified' }));
    expect(typeof good, String(good)).toBe('object');
    expect((good as V1Pod).spec?.initContainers?.[0]?.args?.[0]).toBe('--ambient');
  });

  it('Istio opt-out label on the pod: not ambient, so the sidecar rules apply (no sidecar: refused)', async () => {
    const pod = restrictedPod('opted-out');
    pod.metadata!.labels = { ...pod.metadata!.labels, 'istio.io/dataplane-mode': 'none' };
    const got = await create('amb', pod);
    expect(got).toEqual(expect.stringContaining('proxy_missing'));
  });
});
