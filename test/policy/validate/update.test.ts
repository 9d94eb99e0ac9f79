/**
 * Class 2, pods change after CREATE: an UPDATE (or a new ephemeral container) may not change the mesh's
 * containers or what meshgate and the mesh recorded, and may not make the pod's posture worse.
 */
import { describe, expect, it } from 'vitest';
import jsonpatch from 'fast-json-patch';
import { checkUpdate } from '../../../src/policy/validate/update.ts';
import { decide } from '../../../src/policy/mutate/decide.ts';
import type { Pod } from '../../../src/contract/pod.ts';
import { cfg, input, istioPod, pod, verified } from '../mutate/fixtures.ts';

const c = cfg('istio');
/** A pod as it exists after admission: Istio injected, meshgate adjusted it for a verified node. */
function admitted(): Pod {
  const p = istioPod({ nodeName: 'good' });
  const d = decide(input(p), verified, c);
  if (d.kind !== 'patch') throw new Error(d.kind);
  return jsonpatch.applyPatch(structuredClone(p), structuredClone(d.ops) as jsonpatch.Operation[], true, false)
    .newDocument;
}
const update = (change: (p: Pod) => void): ReturnType<typeof checkUpdate> => {
  const old = admitted();
  const next = structuredClone(old);
  change(next);
  return checkUpdate(old, next, 'demo', 'alice', verified, c);
};

describe('updates that would undo the mesh are refused', () => {
  it.each([
    [
      "swap the validator's image",
      (p: Pod) => {
        p.spec.initContainers![0].image = 'busybox';
      },
      'mesh_container_changed',
      /istio-validation \(image ghcr\.io\/meshgate\/meshgate:0\.1\.0 → busybox\)/,
    ],
    [
      "swap the proxy's image",
      (p: Pod) => {
        p.spec.containers[1].image = 'docker.io/istio/proxyv2:evil';
      },
      'mesh_container_changed',
      /istio-proxy/,
    ],
    [
      "remove meshgate's label",
      (p: Pod) => void delete p.metadata!.labels!['meshgate.io/redirect'],
      'mesh_metadata_changed',
      /label meshgate\.io\/redirect \("cni" → null\)/,
    ],
    [
      "rewrite meshgate's status",
      (p: Pod) => {
        p.metadata!.annotations!['meshgate.io/status'] = '{}';
      },
      'mesh_metadata_changed',
      /annotation meshgate\.io\/status/,
    ],
    [
      "remove Istio's status (istio-cni would skip the pod)",
      (p: Pod) => void delete p.metadata!.annotations!['sidecar.istio.io/status'],
      'mesh_metadata_changed',
      /sidecar\.istio\.io\/status/,
    ],
    [
      'exempt everything while the pod waits at a scheduling gate',
      (p: Pod) => {
        p.metadata!.annotations!['traffic.sidecar.istio.io/excludeOutboundIPRanges'] = '0.0.0.0/1,128.0.0.0/1';
      },
      'exclusion_refused',
      /after this update: .*cover all of IPv4/,
    ],
    [
      'add an ephemeral container as the proxy UID',
      (p: Pod) => {
        p.spec.ephemeralContainers = [{ name: 'dbg', image: 'busybox', securityContext: { runAsUser: 1337 } }];
      },
      'proxy_identity',
      /ephemeral container dbg runs as UID 1337/,
    ],
    [
      'add an ephemeral container with NET_ADMIN',
      (p: Pod) => {
        p.spec.ephemeralContainers = [
          { name: 'dbg', image: 'busybox', securityContext: { capabilities: { add: ['NET_ADMIN'] } } },
        ];
      },
      'redirect_tamper',
      /could remove the pod's redirect rules/,
    ],
    [
      'add an ephemeral container named like the proxy',
      (p: Pod) => {
        p.spec.ephemeralContainers = [{ name: 'istio-init', image: 'busybox' }];
      },
      'impostor_container',
      /istio-init/,
    ],
    [
      'add a compliant ephemeral container that targets the proxy (kubectl debug --target=istio-proxy)',
      (p: Pod) => {
        p.spec.ephemeralContainers = [
          {
            name: 'dbg',
            image: 'busybox',
            targetContainerName: 'istio-proxy',
            securityContext: { runAsUser: 1000, runAsGroup: 1000, allowPrivilegeEscalation: false },
          },
        ];
      },
      'mesh_container_access',
      /ephemeral container dbg targets istio-proxy, a mesh container/,
    ],
    [
      "opt out with Istio's label after creation",
      (p: Pod) => {
        p.metadata!.labels!['sidecar.istio.io/inject'] = 'false';
      },
      'opt_out_refused',
      /sidecar\.istio\.io\/inject=false/,
    ],
  ] as Array<[string, (p: Pod) => void, string, RegExp]>)('%s', (_n, change, reason, message) => {
    const r = update(change);
    expect(r).toMatchObject({ ok: false, reason });
    expect(!r.ok && r.message).toMatch(message);
  });

  it('allows what controllers and people normally do: app image, labels, a harmless debug container', () => {
    expect(
      update((p) => {
        p.spec.containers[0].image = 'nginx:1.27';
      }),
    ).toMatchObject({ ok: true });
    expect(
      update((p) => {
        p.metadata!.labels = { ...p.metadata!.labels, release: 'b' };
      }),
    ).toMatchObject({ ok: true });
    expect(
      update((p) => {
        p.spec.ephemeralContainers = [{ name: 'dbg', image: 'busybox', securityContext: { runAsUser: 1000 } }];
      }),
    ).toMatchObject({ ok: true });
    // Sharing the app container's processes is the app's business.
    expect(
      update((p) => {
        p.spec.ephemeralContainers = [
          { name: 'dbg', image: 'busybox', targetContainerName: 'app', securityContext: { runAsUser: 1000 } },
        ];
      }),
    ).toMatchObject({ ok: true });
  });

  it('a pod that was never meshed (created before its namespace opted in) is not made worse by any update', () => {
    const old = pod({ nodeName: 'good' });
    const next = { ...old, metadata: { ...old.metadata, labels: { adopted: 'true' } } };
    expect(checkUpdate(old, next, 'demo', undefined, verified, c)).toMatchObject({ ok: true });
  });

  it('a node that lost its verification later does not block updates of pods already on it', () => {
    const old = admitted();
    const next = { ...old, metadata: { ...old.metadata, labels: { ...old.metadata!.labels, x: 'y' } } };
    const lost = {
      ...verified,
      get: (n: string) =>
        n === 'good' ? { name: n, verified: false, reason: 'mesh_plugin_missing', message: 'gone' } : verified.get(n),
    };
    expect(checkUpdate(old, next, 'demo', undefined, lost as never, c)).toMatchObject({ ok: true });
  });
});
