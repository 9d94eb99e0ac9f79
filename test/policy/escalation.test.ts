/**
 * Who can become the proxy (issue 21 §3, issue 31 §2, docs/security.md): under `apps.privileges: restricted` no
 * container but the mesh's may be able to run as, or switch to, the proxy's UID/GID. Each row is a pod a hostile
 * author could submit; the validating webhook (checkPosture) and the mutating one (decide) both refuse it with
 * `proxy_escalation`. In `apps.baselineNamespaces` the same pod is admitted with a warning. Under the default
 * `apps.privileges: node`, admission refuses only what the spec states (SETUID/SETGID added by name, besides the
 * proxy's UID/GID and network-admin rights under every setting); `apps.restrictedNamespaces` holds a namespace to
 * restricted.
 */
import { describe, expect, it } from 'vitest';
import { checkPosture } from '../../src/policy/posture.ts';
import { decide } from '../../src/policy/mutate/decide.ts';
import { escalationProblem, privilegesIn, statedEscalationProblem } from '../../src/policy/escalation.ts';
import type { Container, Pod } from '../../src/contract/pod.ts';
import type { MeshName } from '../../src/mesh/types.ts';
import { buildConfig } from '../../src/config/load.ts';
import { rawConfig } from '../support/config.ts';
import { cfg, input, istioPod, linkerdPod, pod, verified } from './mutate/fixtures.ts';

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

/** An app container running as root (UID and GID 0) without escalation, with `capabilities` (dropped, added). */
const rootWith = (capabilities: Record<string, string[]>) =>
  app({ runAsUser: 0, runAsGroup: 0, allowPrivilegeEscalation: false, capabilities });

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
  ['root dropping only SETUID', 'istio', istioWith([rootWith({ drop: ['SETUID'] })]), /holds SETGID, NET_RAW/],
  [
    // issue 33 §5: containerd prefixes every entry with CAP_ and drops CAP_CAP_SETUID, which nothing holds; an
    // unbound pod may land on any node, so the strictest reading counts these as held.
    'root dropping CAP_SETUID, CAP_SETGID, CAP_NET_RAW (spelled with the prefix containerd adds again)',
    'istio',
    istioWith([rootWith({ drop: ['CAP_SETUID', 'CAP_SETGID', 'CAP_NET_RAW'] })]),
    /holds SETUID, SETGID, NET_RAW .*as root/,
  ],
  [
    'root dropping ALL but adding SETUID back',
    'istio',
    istioWith([rootWith({ drop: ['ALL'], add: ['CAP_SETUID'] })]),
    /holds SETUID \(/,
  ],
  [
    'root adding ALL',
    'istio',
    istioWith([rootWith({ add: ['ALL'], drop: ['SETUID', 'SETGID'] })]),
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
  ['root that dropped ALL (Pod Security restricted, run as root)', 'istio', istioWith([rootWith({ drop: ['ALL'] })])],
  [
    'root that dropped exactly SETUID, SETGID and NET_RAW',
    'istio',
    istioWith([rootWith({ drop: ['SETUID', 'setgid', 'NET_RAW'] })]),
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

  it('judges the app containers of mesh custom (meshgate injects) the same way', () => {
    const d = decide(input(pod({ nodeName: 'good' })), verified, restricted('custom'));
    expect(d).toMatchObject({ kind: 'deny', reason: 'proxy_escalation' });
  });
});

describe('apps.privileges: node (the default) refuses at admission only what the spec states', () => {
  const node = (mesh: MeshName, apps: Record<string, unknown> = {}) =>
    cfg(mesh, { apps: { privileges: 'node', ...apps } });

  /** [case, mesh, pod, reason, message fragment]: each is stated in the spec itself. */
  const stated: Array<[string, MeshName, Pod, string, RegExp]> = [
    [
      'SETUID added by name',
      'istio',
      istioWith([app({ capabilities: { add: ['SETUID'] } })]),
      'proxy_escalation',
      /container app adds SETUID .*switch to the proxy's UID 1337; remove SETUID from capabilities.add/,
    ],
    [
      'SETGID added by name, lower case with the CAP_ prefix (the runtime reads it so)',
      'istio',
      istioWith([app({ capabilities: { drop: ['ALL'], add: ['cap_setgid'] } })]),
      'proxy_escalation',
      /adds SETGID .*GID 1337/,
    ],
    [
      'both, on an init container',
      'linkerd',
      linkerdPod({
        nodeName: 'good',
        initContainers: [
          ...linkerdPod().spec.initContainers!,
          app({ capabilities: { add: ['SETUID', 'SETGID'] } }, 'w'),
        ],
      }),
      'proxy_escalation',
      /init container w adds SETUID and SETGID .*UID 2102/,
    ],
    ['the proxy UID itself', 'istio', istioWith([app({ runAsUser: 1337 })]), 'proxy_identity', /runs as UID 1337/],
    [
      "the proxy GID on the pod's securityContext",
      'istio',
      istioWith([app({})], { securityContext: { runAsGroup: 1337 } }),
      'proxy_identity',
      /runAsGroup is 1337/,
    ],
    ['privileged', 'istio', istioWith([app({ privileged: true })]), 'redirect_tamper', /runs privileged/],
    [
      'NET_ADMIN added',
      'linkerd',
      linkerdWith([app({ capabilities: { add: ['NET_ADMIN'] } })]),
      'redirect_tamper',
      /adds capability NET_ADMIN/,
    ],
  ];
  it.each(stated)('%s is refused', (_n, mesh, p, reason, message) => {
    const posture = checkPosture(input(p), verified, node(mesh));
    expect(posture).toMatchObject({ ok: false, reason });
    expect(!posture.ok && posture.message).toMatch(message);
    expect(decide(input(p), verified, node(mesh))).toMatchObject({ kind: 'deny', reason });
  });

  /** What only the node can see: left to the node side, admitted here. */
  const nodeSide: Array<[string, MeshName, Pod]> = [
    ['no securityContext at all (the image USER decides)', 'istio', istioWith([{ name: 'app', image: 'nginx' }])],
    ['root with the runtime default capabilities', 'istio', istioWith([app({ runAsUser: 0 })])],
    ['escalation allowed (a set-user-ID binary would be the node side to see)', 'linkerd', linkerdWith([app({})])],
    [
      'NET_RAW added back after drop ALL (an ICMP prober: no more than a root container holds by default)',
      'istio',
      istioWith([app({ capabilities: { drop: ['ALL'], add: ['NET_RAW'] } })]),
    ],
    [
      "NET_BIND_SERVICE added, ALL dropped (ingress-nginx's controller)",
      'linkerd',
      linkerdWith([app({ runAsUser: 101, capabilities: { drop: ['ALL'], add: ['NET_BIND_SERVICE'] } })]),
    ],
    [
      'SETUID added and dropped: the named drop wins, as the runtimes apply it',
      'istio',
      istioWith([app({ capabilities: { add: ['SETUID'], drop: ['SETUID'] } })]),
    ],
  ];
  it.each(nodeSide)('%s is admitted', (_n, mesh, p) => {
    expect(checkPosture(input(p), verified, node(mesh))).toMatchObject({ ok: true, warnings: [] });
    expect(decide(input(p), verified, node(mesh)).kind).not.toBe('deny');
  });

  it('is the default of every profile', () => {
    for (const mesh of ['istio', 'linkerd', 'custom'] as const) {
      expect(buildConfig(mesh === 'custom' ? rawConfig('custom') : { mesh }).apps).toEqual({
        privileges: 'node',
        restrictedNamespaces: [],
        baselineNamespaces: [],
      });
    }
  });

  it('apps.restrictedNamespaces holds a namespace to restricted, and says so', () => {
    const p = istioWith([{ name: 'app', image: 'nginx' }]);
    const c = node('istio', { restrictedNamespaces: ['payments'] });
    const there = checkPosture(input(p, 'payments'), verified, c);
    expect(there).toMatchObject({ ok: false, reason: 'proxy_escalation' });
    expect(!there.ok && there.message).toMatch(
      /sets no runAsUser.*\(namespace payments is in apps.restrictedNamespaces\)/,
    );
    expect(checkPosture(input(p, 'shop'), verified, c)).toMatchObject({ ok: true });
  });

  it('apps.baselineNamespaces turns what the spec states into a warning', () => {
    const p = istioWith([app({ capabilities: { add: ['SETUID'] } })]);
    const posture = checkPosture(input(p, 'legacy'), verified, node('istio', { baselineNamespaces: ['legacy'] }));
    expect(posture).toMatchObject({ ok: true });
    expect(posture.ok && posture.warnings.join('\n')).toMatch(/adds SETUID .*apps.baselineNamespaces/);
  });

  it('privilegesIn: the namespace lists beat the cluster-wide setting', () => {
    const apps = { privileges: 'node' as const, restrictedNamespaces: ['a'], baselineNamespaces: ['b'] };
    expect(privilegesIn(apps, 'a')).toEqual({ level: 'restricted', relaxed: false });
    expect(privilegesIn(apps, 'b')).toEqual({ level: 'node', relaxed: true });
    expect(privilegesIn({ ...apps, privileges: 'baseline' }, 'a')).toEqual({ level: 'restricted', relaxed: false });
    expect(privilegesIn({ ...apps, privileges: 'restricted' }, 'c')).toEqual({ level: 'restricted', relaxed: false });
  });

  it('statedEscalationProblem reads only capabilities.add, as the runtime applies add and drop', () => {
    const id = { proxyUid: 1337, proxyGid: 1337 };
    expect(statedEscalationProblem(app({ runAsUser: 0 }), id)).toBeUndefined();
    expect(statedEscalationProblem(app({ capabilities: { add: ['ALL'] } }), id)).toBeUndefined(); // redirect_tamper's
    expect(statedEscalationProblem(app({ capabilities: { add: ['SETUID'], drop: ['ALL'] } }), id)).toMatch(/SETUID/);
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
