/**
 * Who can become the proxy (issue 21 §3, docs/security.md): under `apps.privileges: restricted` (the default) no
 * container but the mesh's may be able to run as, or switch to, the proxy's UID/GID. Each row is a pod a hostile
 * author could submit; the validating webhook (checkPosture) and the mutating one (decide) both refuse it with
 * `proxy_escalation`. In `apps.baselineNamespaces` the same pod is admitted with a warning.
 */
import { describe, expect, it } from 'vitest';
import { checkPosture } from '../../src/policy/posture.ts';
import { decide } from '../../src/inject/decide.ts';
import { escalationProblem } from '../../src/policy/escalation.ts';
import type { Container, Pod } from '../../src/contract/pod.ts';
import type { MeshName } from '../../src/mesh/types.ts';
import { cfg, input, istioPod, linkerdPod, pod, verified } from '../inject/fixtures.ts';

const restricted = (mesh: MeshName, baselineNamespaces: string[] = []) =>
  cfg(mesh, { apps: { privileges: 'restricted', baselineNamespaces } });

/** An app container that provably cannot become the proxy: a known non-root UID/GID, no escalation. */
const hardened = {
  runAsUser: 1000,
  runAsGroup: 1000,
  allowPrivilegeEscalation: false,
  capabilities: { drop: ['ALL'] },
};
const app = (securityContext: Record<string, unknown>, name = 'app'): Container => ({
  name,
  image: 'nginx',
  securityContext,
});

const istioWith = (containers: Container[], spec: Partial<Pod['spec']> = {}) =>
  istioPod({ containers: [...containers, istioPod().spec.containers[1]], nodeName: 'good', ...spec });
const linkerdWith = (containers: Container[]) =>
  linkerdPod({ containers: [...containers, linkerdPod().spec.containers[1]], nodeName: 'good' });

/** [case, mesh, pod, message fragment] */
const refused: Array<[string, MeshName, Pod, RegExp]> = [
  [
    'a known non-root UID keeping the default capabilities (a file capability on its entrypoint keeps SETUID)',
    'istio',
    istioWith([app({ runAsUser: 1000, runAsGroup: 1000, allowPrivilegeEscalation: false })]),
    /holds SETUID, SETGID, NET_RAW .*through a file capability on its entrypoint/,
  ],
  [
    'an app with no securityContext (image USER unknown)',
    'istio',
    istioWith([{ name: 'app', image: 'nginx' }]),
    /container app sets no runAsUser \(nor does the pod\)/,
  ],
  [
    'runAsNonRoot alone: the image USER could be 1337',
    'istio',
    istioWith([app({ runAsNonRoot: true, allowPrivilegeEscalation: false })]),
    /sets no runAsUser/,
  ],
  [
    'a known UID but no GID where Istio exempts GID 1337',
    'istio',
    istioWith([app({ runAsUser: 1000, allowPrivilegeEscalation: false })]),
    /sets no runAsGroup .* GID 1337/,
  ],
  [
    'escalation allowed (a set-user-ID binary owned by 1337)',
    'istio',
    istioWith([app({ runAsUser: 1000, runAsGroup: 1000 })]),
    /allowPrivilegeEscalation: false/,
  ],
  [
    'root with the runtime defaults',
    'istio',
    istioWith([app({ runAsUser: 0, runAsGroup: 0, allowPrivilegeEscalation: false })]),
    /holds SETUID, SETGID, NET_RAW .*as root/,
  ],
  [
    'root dropping only SETUID',
    'istio',
    istioWith([
      app({ runAsUser: 0, runAsGroup: 0, allowPrivilegeEscalation: false, capabilities: { drop: ['SETUID'] } }),
    ]),
    /holds SETGID, NET_RAW/,
  ],
  [
    // issue 33 §5: containerd prefixes every entry with CAP_ and drops CAP_CAP_SETUID, which nothing holds; an
    // unbound pod may land on any node, so the strictest reading counts these as held.
    'root dropping CAP_SETUID, CAP_SETGID, CAP_NET_RAW (spelled with the prefix containerd adds again)',
    'istio',
    istioWith([
      app({
        runAsUser: 0,
        runAsGroup: 0,
        allowPrivilegeEscalation: false,
        capabilities: { drop: ['CAP_SETUID', 'CAP_SETGID', 'CAP_NET_RAW'] },
      }),
    ]),
    /holds SETUID, SETGID, NET_RAW .*as root/,
  ],
  [
    'root dropping ALL but adding SETUID back',
    'istio',
    istioWith([
      app({
        runAsUser: 0,
        runAsGroup: 0,
        allowPrivilegeEscalation: false,
        capabilities: { drop: ['ALL'], add: ['CAP_SETUID'] },
      }),
    ]),
    /holds SETUID \(/,
  ],
  [
    'root adding ALL',
    'istio',
    istioWith([
      app({
        runAsUser: 0,
        runAsGroup: 0,
        allowPrivilegeEscalation: false,
        capabilities: { add: ['ALL'], drop: ['SETUID', 'SETGID'] },
      }),
    ]),
    /redirect_tamper|holds NET_RAW/,
  ],
  [
    'a root user init container',
    'istio',
    istioPod({
      nodeName: 'good',
      initContainers: [...istioPod().spec.initContainers!, app({ runAsUser: 0, runAsGroup: 0 }, 'warmup')],
    }),
    /init container warmup does not set allowPrivilegeEscalation/,
  ],
  [
    'a root ephemeral container (kubectl debug)',
    'istio',
    istioWith([app(hardened)], { ephemeralContainers: [{ name: 'debugger', image: 'busybox' }] }),
    /ephemeral container debugger sets no runAsUser/,
  ],
  [
    'Linkerd: an app with no UID',
    'linkerd',
    linkerdWith([{ name: 'app', image: 'nginx' }]),
    /sets no runAsUser .* UID 2102/,
  ],
  [
    'Linkerd: root with the defaults',
    'linkerd',
    linkerdWith([app({ runAsUser: 0, allowPrivilegeEscalation: false })]),
    /holds SETUID, SETGID, NET_RAW .*as root/,
  ],
];

const allowed: Array<[string, MeshName, Pod]> = [
  ['a known non-root UID/GID without escalation', 'istio', istioWith([app(hardened)])],
  [
    'UID/GID from the pod, escalation off in the container',
    'istio',
    istioWith([app({ allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } })], {
      securityContext: { runAsUser: 1000, runAsGroup: 3000 },
    }),
  ],
  [
    'root that dropped ALL (Pod Security restricted, run as root)',
    'istio',
    istioWith([app({ runAsUser: 0, runAsGroup: 0, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } })]),
  ],
  [
    'root that dropped exactly SETUID, SETGID and NET_RAW',
    'istio',
    istioWith([
      app({
        runAsUser: 0,
        runAsGroup: 0,
        allowPrivilegeEscalation: false,
        capabilities: { drop: ['SETUID', 'setgid', 'NET_RAW'] },
      }),
    ]),
  ],
  [
    'a non-root UID with ALL dropped that adds NET_BIND_SERVICE back',
    'istio',
    istioWith([app({ ...hardened, capabilities: { drop: ['ALL'], add: ['NET_BIND_SERVICE'] } })]),
  ],
  [
    'Linkerd exempts no GID: a known UID suffices',
    'linkerd',
    linkerdWith([app({ runAsUser: 1000, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } })]),
  ],
];

describe("no container but the mesh's can become the proxy (apps.privileges: restricted)", () => {
  it.each(refused)('%s is refused', (_n, mesh, p, message) => {
    const c = restricted(mesh);
    const posture = checkPosture(input(p), verified, c);
    expect(posture.ok).toBe(false);
    expect(!posture.ok && `${posture.reason}: ${posture.message}`).toMatch(/^(proxy_escalation|redirect_tamper): /);
    expect(!posture.ok && `${posture.reason}: ${posture.message}`).toMatch(message);
    const d = decide(input(p), verified, c);
    expect(d.kind).toBe('deny');
    expect(d.kind === 'deny' && d.reason).toBe(!posture.ok && posture.reason);
  });

  it.each(allowed)('%s is admitted', (_n, mesh, p) => {
    const c = restricted(mesh);
    expect(checkPosture(input(p), verified, c)).toMatchObject({ ok: true, warnings: [] });
    expect(decide(input(p), verified, c).kind).not.toBe('deny');
  });

  it('in apps.baselineNamespaces the pod is admitted, with the finding as a warning', () => {
    const p = istioWith([{ name: 'app', image: 'nginx' }]);
    const c = restricted('istio', ['demo']);
    const posture = checkPosture(input(p, 'demo'), verified, c);
    expect(posture).toMatchObject({ ok: true });
    expect(posture.ok && posture.warnings.join('\n')).toMatch(
      /container app sets no runAsUser .* \(allowed here: namespace demo is in apps.baselineNamespaces\)/,
    );
    const d = decide(input(p, 'demo'), verified, c);
    expect(d.kind).toBe('patch');
    expect(d.kind === 'patch' && d.warnings.join('\n')).toMatch(/apps.baselineNamespaces/);
    // Another namespace is not relaxed by the list.
    expect(checkPosture(input(p, 'other'), verified, c)).toMatchObject({ ok: false, reason: 'proxy_escalation' });
  });

  it('apps.privileges: baseline judges only the explicit proxy identity (Istio and Linkerd parity)', () => {
    const c = cfg('istio', { apps: { privileges: 'baseline' } });
    expect(checkPosture(input(istioWith([{ name: 'app', image: 'nginx' }])), verified, c)).toMatchObject({ ok: true });
    expect(checkPosture(input(istioWith([app({ runAsUser: 1337 })])), verified, c)).toMatchObject({
      ok: false,
      reason: 'proxy_identity',
    });
  });

  it('is the default of every profile', () => {
    for (const mesh of ['istio', 'linkerd', 'custom'] as const) {
      const c = cfg(mesh, { apps: { privileges: 'restricted' } });
      expect(c.config.apps.privileges).toBe('restricted');
    }
    // A plain pod in mesh custom (meshgate injects): its app container is judged the same way.
    const d = decide(input(pod({ nodeName: 'good' })), verified, restricted('custom'));
    expect(d).toMatchObject({ kind: 'deny', reason: 'proxy_escalation' });
  });
});

describe('escalationProblem names what is missing, one thing at a time', () => {
  const id = { proxyUid: 1337, proxyGid: 1337 };
  const empty = pod();
  it('is undefined for a hardened container', () => {
    expect(escalationProblem(empty, app(hardened), id)).toBeUndefined();
  });
  it('asks for the UID first, then the GID, then escalation, then capabilities', () => {
    expect(escalationProblem(empty, app({}), id)).toMatch(/runAsUser/);
    expect(escalationProblem(empty, app({ runAsUser: 0 }), id)).toMatch(/runAsGroup/);
    expect(escalationProblem(empty, app({ runAsUser: 0, runAsGroup: 0 }), id)).toMatch(/allowPrivilegeEscalation/);
    expect(escalationProblem(empty, app({ runAsUser: 0, runAsGroup: 0, allowPrivilegeEscalation: false }), id)).toMatch(
      /holds SETUID, SETGID, NET_RAW .*: as root/,
    );
  });
});
