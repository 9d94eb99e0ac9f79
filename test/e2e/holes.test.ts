/**
 * Issue 11 through the real kube-apiserver: the ways a hostile pod author (or another scheduler) got an opted-in
 * pod to run without redirection, one per class, each refused with its reason. meshgate guards mesh istio here;
 * the pods carry Istio's containers as Istio's injector renders them (no injector runs: the author writes them).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { PatchStrategy, setHeaderOptions, type V1Container, type V1Pod } from '@kubernetes/client-node';
import { waitFor } from './harness/index.ts';
import { apiError, createNamespace } from './meshgate.ts';
import { istio } from '../policy/mutate/fixtures.ts';
import { shared } from './harness/shared.ts';
import { startGuardedCluster, VERIFIED_AND_NOT } from './harness/clusters.ts';

const NS = 'mesh';

/** The cluster this file's tests share: a verified and an unverified node, meshgate for Istio (no injector). */
const s = shared(async (stopLater) => {
  const cluster = await startGuardedCluster(stopLater, VERIFIED_AND_NOT, { mesh: 'istio' });
  await createNamespace(cluster.cp, NS, { 'meshgate.io/inject': 'enabled' });
  return cluster;
});

/** An Istio-shaped pod: istio-init, the proxy, the status annotation; `spec`/`meta` adjust it per case. */
function istioShaped(name: string, spec: Partial<V1Pod['spec']> = {}, annotations: Record<string, string> = {}): V1Pod {
  return {
    metadata: { name, labels: { app: name }, annotations: { 'sidecar.istio.io/status': istio.status, ...annotations } },
    spec: {
      initContainers: [istio.init()],
      // An app container that cannot become the proxy (apps.privileges: restricted), so each case meets its own rule.
      securityContext: { runAsUser: 1000, runAsGroup: 1000 },
      containers: [
        {
          name: 'app',
          image: 'registry.example/app:1',
          securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
        },
        istio.proxy(),
      ],
      ...spec,
    } as V1Pod['spec'],
  };
}

async function refused(body: V1Pod): Promise<string> {
  const err = await s.core.createNamespacedPod({ namespace: NS, body }).then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!err) throw new Error(`pod ${body.metadata!.name} was admitted`);
  return apiError(err);
}

const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const json = setHeaderOptions('Content-Type', PatchStrategy.JsonPatch);

describe('issue 11 through the real apiserver', () => {
  it('class 1 — trust by name: busybox under istio-init/istio-proxy, pre-bound to an unverified node, is refused', async () => {
    const busybox = { image: 'busybox:1.36', command: ['sleep', '3600'] };
    const message = await refused(
      istioShaped('lookalike', {
        nodeName: 'node-unverified',
        initContainers: [{ name: 'istio-init', ...busybox }],
        containers: [
          { name: 'app', image: 'x' },
          { name: 'istio-proxy', ...busybox },
        ],
      }),
    );
    expect(message).toMatch(
      /init container istio-init is not the real one: image busybox:1\.36 is not one of the recognised init images.*\[impostor_container\]/,
    );
  });

  it("class 3 — the proxy's identity: an app container as UID 1337 is refused", async () => {
    const message = await refused(
      istioShaped('uid', {
        containers: [{ name: 'app', image: 'x', securityContext: { runAsUser: 1337 } }, istio.proxy() as V1Container],
      }),
    );
    expect(message).toMatch(/container app runs as UID 1337.*\[proxy_identity\]/);
  });

  it('class 4 — exclusions that exclude everything are refused', async () => {
    const message = await refused(
      istioShaped('exclude', {}, { 'traffic.sidecar.istio.io/excludeOutboundIPRanges': '0.0.0.0/1,128.0.0.0/1' }),
    );
    expect(message).toMatch(/cover all of IPv4.*\[exclusion_refused\]/);
  });

  it('class 5 — 120,000 empty node-selector terms: refused with a clear message, not a 36 MB patch', async () => {
    const terms = Array.from({ length: 120_000 }, () => ({}));
    const t0 = performance.now();
    const message = await refused(
      istioShaped('terms', {
        affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: terms } } },
      }),
    );
    console.log(`120,000-term pod refused by the apiserver+meshgate in ${Math.round(performance.now() - t0)} ms`);
    // The apiserver accepts the object and calls meshgate, which refuses it before building a single op.
    expect(message).toMatch(
      /the pod has 120000 required node-selector terms; meshgate adds its node requirement to each and handles at most 64 \[too_large\]/,
    );
  });

  it('issue 21 — a 0.9 MB pod, istio-init excluding 60,000 CIDRs: refused as too large, before the list is read', async () => {
    const cidrs = Array.from({ length: 60_000 }, (_, i) => `10.${i >> 16}.${(i >> 8) & 255}.${i & 255}/32`);
    const init = istio.init({ args: [...istio.init().args!, '-x', cidrs.join(',')] });
    const t0 = performance.now();
    const message = await refused(istioShaped('cidrs', { initContainers: [init as V1Container] }));
    console.log(`60,000-CIDR pod refused by the apiserver+meshgate in ${Math.round(performance.now() - t0)} ms`);
    expect(message).toMatch(
      /init container istio-init's arguments and environment values hold \d+ characters; meshgate reads at most 65536 for the mesh's own containers \[too_large\]/,
    );
  });

  describe('class 2 — pods change after CREATE (held at a scheduling gate) / class 6 — every way to a node', () => {
    let pod: V1Pod;
    beforeAll(async () => {
      // Held at a scheduling gate, and left to a scheduler that does not run: the test itself plays that scheduler.
      pod = await s.core.createNamespacedPod({
        namespace: NS,
        body: istioShaped('gated', {
          schedulingGates: [{ name: 'meshgate.test/hold' }],
          schedulerName: 'hostile-scheduler',
        }),
      });
      expect(pod.spec!.initContainers!.map((c) => c.name)).toEqual(['istio-validation']);
    });

    it.each([
      [
        "swap the validator's image",
        [{ op: 'replace', path: '/spec/initContainers/0/image', value: 'busybox:1.36' }],
        /istio-validation \(image ghcr\.io\/meshgate\/meshgate:0\.1\.0 → busybox:1\.36\).*\[mesh_container_changed\]/,
      ],
      [
        "swap the proxy's image",
        [{ op: 'replace', path: '/spec/containers/1/image', value: 'docker.io/istio/proxyv2:other' }],
        /istio-proxy.*\[mesh_container_changed\]/,
      ],
      [
        "remove meshgate's label",
        [{ op: 'remove', path: '/metadata/labels/meshgate.io~1redirect' }],
        /label meshgate\.io\/redirect.*\[mesh_metadata_changed\]/,
      ],
      [
        'exempt everything before the pod starts',
        [
          {
            op: 'add',
            path: '/metadata/annotations/traffic.sidecar.istio.io~1excludeOutboundIPRanges',
            value: '0.0.0.0/0',
          },
        ],
        /cover all of IPv4.*\[exclusion_refused\]/,
      ],
    ])('UPDATE: %s is refused', async (_n, ops, message) => {
      const err = await s.core.patchNamespacedPod({ namespace: NS, name: 'gated', body: ops }, json).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(apiError(err)).toMatch(message);
    });

    it('pods/ephemeralcontainers: a debug container as the proxy UID or as root is refused, a hardened one allowed', async () => {
      const add = (name: string, securityContext: Record<string, unknown>) =>
        s.core.patchNamespacedPodEphemeralcontainers(
          {
            namespace: NS,
            name: 'gated',
            body: { spec: { ephemeralContainers: [{ name, image: 'busybox:1.36', securityContext }] } },
          },
          setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
        );
      const refusal = (sc: Record<string, unknown>) =>
        add('dbg', sc).then(
          () => 'admitted',
          (e: unknown) => apiError(e),
        );
      expect(await refusal({ runAsUser: 1337 })).toMatch(
        /ephemeral container dbg runs as UID 1337.*\[proxy_identity\]/,
      );
      // kubectl debug's default profile: root with the runtime's capabilities (issue 21 §3).
      expect(await refusal({ runAsUser: 0 })).toMatch(/ephemeral container dbg .*\[proxy_escalation\]/);
      await add('dbg', { runAsUser: 1000, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } });
    });

    it('class 6: the legacy bindings endpoint and pods/binding both refuse an unverified node; a verified one is allowed', async () => {
      await s.core.patchNamespacedPod(
        { namespace: NS, name: 'gated', body: { spec: { schedulingGates: null } } },
        merge,
      );
      // Another scheduler (or anyone with create on bindings) binds directly, skipping meshgate's affinity.
      const target = (node: string) => ({
        apiVersion: 'v1',
        kind: 'Binding',
        metadata: { name: 'gated' },
        target: { apiVersion: 'v1', kind: 'Node', name: node },
      });
      const legacy = await s.core.createNamespacedBinding({ namespace: NS, body: target('node-unverified') }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(apiError(legacy)).toMatch(
        /relies on the CNI plugin and cannot be bound to node node-unverified.*\[binding_node_unverified\]/,
      );
      const sub = await s.core
        .createNamespacedPodBinding({ namespace: NS, name: 'gated', body: target('node-unverified') })
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expect(apiError(sub)).toMatch(/\[binding_node_unverified\]/);
      await s.core.createNamespacedBinding({ namespace: NS, body: target('node-verified') });
      await waitFor(
        'pod bound',
        async () =>
          (await s.core.readNamespacedPod({ namespace: NS, name: 'gated' })).spec?.nodeName === 'node-verified',
        { timeoutMs: 15_000 },
      );
    });
  });
});
