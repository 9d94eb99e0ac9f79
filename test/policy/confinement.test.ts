/**
 * Issue 33 §8: `seccompProfile` / `appArmorProfile: Unconfined` were counted as tightening. A mesh container's own
 * profile must confine (RuntimeDefault, Localhost); a pod-level profile, or the AppArmor annotation, that leaves a
 * mesh container unconfined is refused (mesh_unconfined); app containers are not judged by this rule.
 */
import { describe, expect, it } from 'vitest';
import { checkPosture } from '../../src/policy/posture.ts';
import type { Pod } from '../../src/contract/pod.ts';
import { cfg, input, istio, istioPod, linkerd, linkerdPod, verified } from './mutate/fixtures.ts';

const withSc = (c: ReturnType<typeof istio.proxy>, extra: Record<string, unknown>) => ({
  ...c,
  securityContext: { ...c.securityContext, ...extra },
});
const podSc = (p: Pod, sc: Record<string, unknown>): Pod => ({ ...p, spec: { ...p.spec, securityContext: sc } });
const annotate = (p: Pod, a: Record<string, string>): Pod => ({
  ...p,
  metadata: { ...p.metadata, annotations: { ...p.metadata?.annotations, ...a } },
});
const UNCONFINED = { type: 'Unconfined' };

describe("a mesh container's own profile", () => {
  const refused: Array<[string, Pod, 'istio' | 'linkerd']> = [
    [
      'istio-proxy seccomp Unconfined',
      istioPod({
        containers: [{ name: 'app', image: 'nginx' }, withSc(istio.proxy(), { seccompProfile: UNCONFINED })],
      }),
      'istio',
    ],
    [
      'istio-init AppArmor Unconfined',
      istioPod({ initContainers: [withSc(istio.init(), { appArmorProfile: UNCONFINED })] }),
      'istio',
    ],
    [
      'linkerd-proxy seccomp Unconfined',
      linkerdPod({
        containers: [{ name: 'app', image: 'nginx' }, withSc(linkerd.proxy(), { seccompProfile: UNCONFINED })],
      }),
      'linkerd',
    ],
    [
      'a profile with another key',
      istioPod({
        containers: [
          { name: 'app', image: 'nginx' },
          withSc(istio.proxy(), { seccompProfile: { type: 'RuntimeDefault', extra: 1 } }),
        ],
      }),
      'istio',
    ],
  ];
  it.each(refused)('%s is refused (impostor_container)', (_n, p, mesh) => {
    const r = checkPosture(input(p), verified, cfg(mesh));
    expect(r).toMatchObject({ ok: false, reason: 'impostor_container' });
    expect(!r.ok && r.message).toMatch(/Unconfined|not a seccomp profile/);
  });

  it.each([
    ['RuntimeDefault', { type: 'RuntimeDefault' }],
    ['Localhost', { type: 'Localhost', localhostProfile: 'profiles/proxy.json' }],
  ])('%s is allowed', (_n, profile) => {
    const p = istioPod({
      containers: [
        { name: 'app', image: 'nginx' },
        withSc(istio.proxy(), { seccompProfile: profile, appArmorProfile: profile }),
      ],
    });
    expect(checkPosture(input(p), verified, cfg('istio'))).toMatchObject({ ok: true });
  });
});

describe('what the pod gives its mesh containers', () => {
  const refused: Array<[string, Pod, 'istio' | 'linkerd', RegExp]> = [
    [
      'pod-level seccomp Unconfined',
      podSc(istioPod(), { seccompProfile: UNCONFINED }),
      'istio',
      /securityContext\.seccompProfile is Unconfined.*container istio-proxy sets none/,
    ],
    [
      'pod-level AppArmor Unconfined (Linkerd)',
      podSc(linkerdPod(), { appArmorProfile: UNCONFINED }),
      'linkerd',
      /appArmorProfile is Unconfined/,
    ],
    [
      'pod-level Unconfined where only the proxy has its own profile',
      podSc(
        istioPod({
          containers: [
            { name: 'app', image: 'nginx' },
            withSc(istio.proxy(), { seccompProfile: { type: 'RuntimeDefault' } }),
          ],
        }),
        { seccompProfile: UNCONFINED },
      ),
      'istio',
      /container istio-init/,
    ],
    [
      'the AppArmor annotation on istio-proxy',
      annotate(istioPod(), { 'container.apparmor.security.beta.kubernetes.io/istio-proxy': 'unconfined' }),
      'istio',
      /annotation container\.apparmor\.security\.beta\.kubernetes\.io\/istio-proxy=unconfined/,
    ],
    [
      'the old seccomp annotation of the pod',
      annotate(linkerdPod(), { 'seccomp.security.alpha.kubernetes.io/pod': 'unconfined' }),
      'linkerd',
      /without seccomp/,
    ],
  ];
  it.each(refused)('%s is refused (mesh_unconfined)', (_n, p, mesh, message) => {
    const r = checkPosture(input(p), verified, cfg(mesh));
    expect(r).toMatchObject({ ok: false, reason: 'mesh_unconfined' });
    expect(!r.ok && r.message).toMatch(message);
  });

  it('every mesh container with its own confining profile is not affected by the pod level', () => {
    const rd = { seccompProfile: { type: 'RuntimeDefault' } };
    const p = podSc(
      istioPod({
        initContainers: [withSc(istio.init(), rd)],
        containers: [{ name: 'app', image: 'nginx' }, withSc(istio.proxy(), rd)],
      }),
      { seccompProfile: UNCONFINED },
    );
    expect(checkPosture(input(p), verified, cfg('istio'))).toMatchObject({ ok: true });
  });

  it("an app container's own Unconfined profile and annotation are not this rule's", () => {
    const p = annotate(
      istioPod({
        containers: [{ name: 'app', image: 'nginx', securityContext: { seccompProfile: UNCONFINED } }, istio.proxy()],
      }),
      { 'container.apparmor.security.beta.kubernetes.io/app': 'unconfined' },
    );
    expect(checkPosture(input(p), verified, cfg('istio'))).toMatchObject({ ok: true });
  });

  it('a pod-level RuntimeDefault profile is allowed', () => {
    const p = podSc(istioPod(), {
      seccompProfile: { type: 'RuntimeDefault' },
      appArmorProfile: { type: 'RuntimeDefault' },
    });
    expect(checkPosture(input(p), verified, cfg('istio'))).toMatchObject({ ok: true });
  });
});
