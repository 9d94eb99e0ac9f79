/**
 * Class 3, the proxy's own identity: the redirect exempts the proxy's UID (and Istio's GID), so anything else
 * running as it — app, init or ephemeral container, or the pod's securityContext — bypasses the proxy, and the
 * validator under another identity cannot notice. Also: containers that could flush the rules.
 */
import { describe, expect, it } from 'vitest';
import { checkPosture } from '../../src/policy/posture.ts';
import type { Pod } from '../../src/contract/pod.ts';
import { cfg, input, istioPod, linkerdPod, verified } from './mutate/fixtures.ts';
import type { MeshName } from '../../src/mesh/types.ts';

const app = (sc: Record<string, unknown>) => ({ name: 'app', image: 'nginx', securityContext: sc });

const refused: Array<[string, MeshName, Pod, string, RegExp]> = [
  [
    'app container as UID 1337',
    'istio',
    istioPod({ containers: [app({ runAsUser: 1337 }), istioPod().spec.containers[1]] }),
    'proxy_identity',
    /container app runs as UID 1337/,
  ],
  [
    'app container as GID 1337',
    'istio',
    istioPod({ containers: [app({ runAsGroup: 1337 }), istioPod().spec.containers[1]] }),
    'proxy_identity',
    /runs as GID 1337/,
  ],
  [
    'pod securityContext runAsUser 1337',
    'istio',
    istioPod({ securityContext: { runAsUser: 1337 } }),
    'proxy_identity',
    /pod's securityContext.runAsUser is 1337/,
  ],
  [
    'pod securityContext runAsGroup 1337',
    'istio',
    istioPod({ securityContext: { runAsGroup: 1337 } }),
    'proxy_identity',
    /runAsGroup is 1337/,
  ],
  [
    'user init container as 1337',
    'istio',
    istioPod({
      initContainers: [
        ...istioPod().spec.initContainers!,
        { name: 'warmup', image: 'curl', securityContext: { runAsUser: 1337 } },
      ],
    }),
    'proxy_identity',
    /init container warmup runs as UID 1337/,
  ],
  [
    'ephemeral container as 1337',
    'istio',
    istioPod({ ephemeralContainers: [{ name: 'debugger', image: 'busybox', securityContext: { runAsUser: 1337 } }] }),
    'proxy_identity',
    /ephemeral container debugger runs as UID 1337/,
  ],
  [
    "app container as Linkerd's 2102",
    'linkerd',
    linkerdPod({ containers: [app({ runAsUser: 2102 }), linkerdPod().spec.containers[1]] }),
    'proxy_identity',
    /runs as UID 2102/,
  ],
  [
    'privileged app container',
    'istio',
    istioPod({ containers: [app({ privileged: true }), istioPod().spec.containers[1]] }),
    'redirect_tamper',
    /container app runs privileged, so it could remove the pod's redirect rules/,
  ],
  [
    'app container with NET_ADMIN',
    'istio',
    istioPod({ containers: [app({ capabilities: { add: ['net_admin'] } }), istioPod().spec.containers[1]] }),
    'redirect_tamper',
    /adds capability NET_ADMIN/,
  ],
  [
    'ephemeral container with SYS_ADMIN (kubectl debug --profile=sysadmin)',
    'linkerd',
    linkerdPod({
      ephemeralContainers: [
        { name: 'dbg', image: 'busybox', securityContext: { capabilities: { add: ['CAP_SYS_ADMIN'] } } },
      ],
    }),
    'redirect_tamper',
    /ephemeral container dbg adds capability SYS_ADMIN/,
  ],
];

describe('only the proxy runs as the proxy', () => {
  it.each(refused)('%s', (_n, mesh, p, reason, message) => {
    const r = checkPosture(input(p), verified, cfg(mesh));
    expect(r).toMatchObject({ ok: false, reason });
    expect(!r.ok && r.message).toMatch(message);
  });

  const allowed: Array<[string, MeshName, Pod]> = [
    ['the Istio proxy itself and istio-init as root', 'istio', istioPod()],
    [
      "meshgate's validator as 1337 (its loopback probe needs it) after CNI-mode adjustment",
      'istio',
      istioPod({ initContainers: [cfg('istio').validator as never] }),
    ],
    [
      'an app as 1000 with the pod at 1000',
      'istio',
      istioPod({ securityContext: { runAsUser: 1000, runAsGroup: 1000, fsGroup: 1337 } }),
    ],
    ['linkerd-init as 65534 with NET_ADMIN (Linkerd runs it unprivileged)', 'linkerd', linkerdPod()],
  ];
  it.each(allowed)('%s is allowed', (_n, mesh, p) => {
    expect(checkPosture(input({ ...p, spec: { ...p.spec, nodeName: 'good' } }), verified, cfg(mesh))).toMatchObject({
      ok: true,
    });
  });
});

describe("a GID the pod's own Linkerd settings exempt is guarded like the proxy's", () => {
  const gidInit = (gid: string) =>
    linkerdPod({
      initContainers: [
        {
          ...linkerdPod().spec.initContainers![0],
          args: [...(linkerdPod().spec.initContainers![0].args ?? []), '--proxy-gid', gid],
        },
      ],
    });
  it.each([
    ['linkerd-init --proxy-gid 2102, an app with GID 2102', gidInit('2102'), 2102],
    ['--proxy-gid as Go reads it (0x836 = 2102)', gidInit('0x836'), 2102],
  ] as const)('%s is refused', (_n, base, gid) => {
    const p = {
      ...base,
      spec: { ...base.spec, containers: [app({ runAsUser: 1000, runAsGroup: gid }), base.spec.containers[1]] },
    };
    const r = checkPosture(input(p), verified, cfg('linkerd'));
    expect(r).toMatchObject({ ok: false, reason: 'proxy_identity' });
    expect(!r.ok && r.message).toMatch(new RegExp(`runs as GID ${gid}`));
  });
  it('config.linkerd.io/proxy-gid (linkerd-cni reads it) guards its GID too', () => {
    const p = linkerdPod(
      { containers: [app({ runAsUser: 1000, runAsGroup: 3000 }), linkerdPod().spec.containers[1]] },
      { 'config.linkerd.io/proxy-gid': '3000' },
    );
    expect(checkPosture(input(p), verified, cfg('linkerd'))).toMatchObject({ ok: false, reason: 'proxy_identity' });
  });
  it('two different exempt GIDs narrow the redirect', () => {
    const p = {
      ...gidInit('2102'),
      metadata: { ...gidInit('2102').metadata, annotations: { 'config.linkerd.io/proxy-gid': '3000' } },
    };
    expect(checkPosture(input(p), verified, cfg('linkerd'))).toMatchObject({ ok: false, reason: 'redirect_narrowed' });
  });
  it('an app with another GID passes', () => {
    const base = gidInit('2102');
    const p = {
      ...base,
      spec: { ...base.spec, containers: [app({ runAsUser: 1000, runAsGroup: 1000 }), base.spec.containers[1]] },
    };
    expect(
      checkPosture(input({ ...p, spec: { ...p.spec, nodeName: 'good' } }), verified, cfg('linkerd')),
    ).toMatchObject({ ok: true });
  });
});
