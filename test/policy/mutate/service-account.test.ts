/**
 * The ServiceAccount token mount meshgate adds with its patch (src/policy/mutate/service-account.ts), so that the
 * apiserver's re-run of its ServiceAccount plugin changes nothing and does not call meshgate a second time. Each
 * case checks the patch against a transcription of the plugin's `mountServiceAccountToken` (kubernetes
 * plugin/pkg/admission/serviceaccount/admission.go): the re-run leaves meshgate's output as it is, the output is the
 * pod the re-run made before, meshgate's answer to its output is empty, and the validating webhook accepts it.
 */
import { describe, expect, it } from 'vitest';
import jsonpatch from 'fast-json-patch';
import { decide, type Decision } from '../../../src/policy/mutate/decide.ts';
import type { PatchOp } from '../../../src/contract/patch.ts';
import { TOKEN_MOUNT_PATH, tokenMount, tokenMountOps } from '../../../src/policy/mutate/service-account.ts';
import { checkPosture } from '../../../src/policy/posture.ts';
import type { Compiled } from '../../../src/config/compile.ts';
import type { NodeFacts } from '../../../src/facts/node-facts.ts';
import type { Container, Pod } from '../../../src/contract/pod.ts';
import { MAX_PATCH_OPS } from '../../../src/policy/limits.ts';
import { cfg, facts, input, istio, istioPod, linkerd, linkerdPod, pod, verified } from './fixtures.ts';

const VOLUME = 'kube-api-access-x7k2p';
const TOKEN = { name: VOLUME, readOnly: true, mountPath: TOKEN_MOUNT_PATH };
/** The plugin's projected token volume (its content does not matter here, only its name). */
const tokenVolume = { name: VOLUME, projected: { sources: [{ serviceAccountToken: { path: 'token' } }] } };
/** What the plugin's first run gives a container without a mount at the token path. */
const mounted = (c: Container): Container => ({ ...c, volumeMounts: [...((c.volumeMounts as []) ?? []), TOKEN] });

/** A pod as the plugin's first run leaves it: the token volume, mounted in every container that had none there. */
function automounted(p: Pod): Pod {
  return rerun({ ...p, spec: { ...p.spec, volumes: [...(p.spec.volumes ?? []), tokenVolume] } });
}

/** The plugin's mountServiceAccountToken on a pod that has its volume: the mount to every container without one. */
function rerun(p: Pod): Pod {
  const out = structuredClone(p);
  const name = out.spec.volumes?.find((v) => v.name.startsWith('kube-api-access-'))?.name;
  if (!name) return out;
  for (const list of [out.spec.initContainers ?? [], out.spec.containers]) {
    for (const c of list) {
      const mounts = (c.volumeMounts ?? []) as Array<{ mountPath: string }>;
      if (!mounts.some((m) => m.mountPath === TOKEN_MOUNT_PATH))
        c.volumeMounts = [...mounts, { name, readOnly: true, mountPath: TOKEN_MOUNT_PATH }];
    }
  }
  return out;
}

const isTokenOp = (o: PatchOp) =>
  o.op === 'add' && /\/volumeMounts(\/-)?$/.test(o.path) && JSON.stringify(o.value).includes(TOKEN_MOUNT_PATH);

function patched(d: Decision): PatchOp[] {
  if (d.kind !== 'patch') throw new Error(`expected a patch, got ${d.kind} ${d.reason}`);
  return d.ops;
}

const apply = (p: Pod, ops: PatchOp[]): Pod =>
  jsonpatch.applyPatch(structuredClone(p), structuredClone(ops) as jsonpatch.Operation[], true, false).newDocument;

/** Which containers hold the token mount, by list and name. */
const holders = (p: Pod) => ({
  init: (p.spec.initContainers ?? []).map((c) => [c.name, tokenMounts(c)]),
  containers: p.spec.containers.map((c) => [c.name, tokenMounts(c)]),
});
const tokenMounts = (c: Container) =>
  ((c.volumeMounts ?? []) as Array<{ name: string; mountPath: string }>)
    .filter((m) => m.mountPath === TOKEN_MOUNT_PATH)
    .map((m) => m.name)
    .join(',');

/** The properties every patched case must have; returns the pod meshgate's patch leaves. */
function expectNoReinvocation(p: Pod, c: Compiled, f: NodeFacts = verified): Pod {
  const ops = patched(decide(input(p), f, c));
  const out = apply(p, ops);
  // The re-run changes nothing, so the apiserver has no reason to call meshgate again.
  expect(rerun(out)).toEqual(out);
  // The same pod as before: the re-run after meshgate's patch without the mounts gave exactly this.
  expect(
    apply(
      p,
      ops.filter((o) => !isTokenOp(o)),
    ).spec,
  ).not.toEqual(out.spec);
  expect(
    rerun(
      apply(
        p,
        ops.filter((o) => !isTokenOp(o)),
      ),
    ),
  ).toEqual(out);
  // Idempotent: meshgate's answer to its own output is empty; the validating webhook accepts the output.
  expect(decide(input(out), f, c)).toMatchObject({ kind: 'skip', reason: 'already_injected' });
  expect(checkPosture(input(out), f, c)).toMatchObject({ ok: true });
  return out;
}

describe('tokenMount: automount, as the pod shows it', () => {
  const cases: Array<[string, Pod, string | undefined]> = [
    ['mounted in a container', automounted(pod()), VOLUME],
    [
      'mounted in an init container only',
      pod({ initContainers: [mounted({ name: 'setup' })], volumes: [tokenVolume] }),
      VOLUME,
    ],
    ['no kube-api-access volume', pod(), undefined],
    ['the volume, mounted nowhere (automount off: an author-made volume)', pod({ volumes: [tokenVolume] }), undefined],
    [
      'the volume mounted elsewhere only',
      pod({
        volumes: [tokenVolume],
        containers: [{ name: 'app', volumeMounts: [{ name: VOLUME, mountPath: '/token' }] }],
      }),
      undefined,
    ],
    [
      'automountServiceAccountToken: false on the pod',
      { ...automounted(pod()), spec: { ...automounted(pod()).spec, automountServiceAccountToken: false } },
      undefined,
    ],
    [
      'the first kube-api-access volume is the plugin’s, as it picks it',
      {
        ...automounted(pod()),
        spec: {
          ...automounted(pod()).spec,
          volumes: [{ name: 'kube-api-access-first' }, tokenVolume],
          containers: [mounted({ name: 'app' })],
        },
      },
      undefined,
    ],
  ];
  it.each(cases)('%s', (_n, p, want) => {
    expect(tokenMount(p)?.name).toBe(want);
  });

  it('an empty patch gets no mounts, whatever the pod lacks (meshgate then changes nothing)', () => {
    const p = automounted(pod());
    const lists = { initContainers: [{ name: 'late' }], containers: p.spec.containers };
    expect(tokenMountOps(p, lists, 0)).toEqual([]);
    expect(tokenMountOps(p, lists, 1)).toEqual([
      { op: 'add', path: '/spec/initContainers/0/volumeMounts', value: [TOKEN] },
    ]);
  });
});

describe('mesh custom: the containers meshgate adds get the mount', () => {
  const c = cfg('custom');

  it('CNI mode, native sidecar: validator (no list: one made) and proxy (its list: appended to)', () => {
    const p = automounted(pod({ nodeName: 'good' }));
    const ops = patched(decide(input(p), verified, c));
    expect(ops.filter(isTokenOp)).toEqual([
      { op: 'add', path: '/spec/initContainers/0/volumeMounts', value: [TOKEN] },
      { op: 'add', path: '/spec/initContainers/1/volumeMounts/-', value: TOKEN },
    ]);
    expect(holders(expectNoReinvocation(p, c))).toEqual({
      init: [
        ['meshgate-validate', VOLUME],
        ['meshgate-proxy', VOLUME],
      ],
      containers: [['app', VOLUME]],
    });
  });

  it('nodeless pod pinned by affinity, behind an init container of its own (indices after insertion)', () => {
    const p = automounted(pod({ initContainers: [{ name: 'migrate', image: 'm' }] }));
    expect(holders(expectNoReinvocation(p, c)).init).toEqual([
      ['meshgate-validate', VOLUME],
      ['meshgate-proxy', VOLUME],
      ['migrate', VOLUME],
    ]);
  });

  it('init mode with the validator (onUnverifiedNode validate)', () => {
    const alt = cfg('custom', { redirect: { onUnverifiedNode: 'validate' } });
    const out = expectNoReinvocation(automounted(pod({ nodeName: 'bad' })), alt);
    expect(holders(out).init).toEqual([
      ['meshgate-init', VOLUME],
      ['meshgate-validate', VOLUME],
      ['meshgate-proxy', VOLUME],
    ]);
  });

  it('init mode, proxy as a regular container (kubelet without native sidecars)', () => {
    const old = facts({ old: { verified: false, kubeletVersion: 'v1.28.3' } });
    const p = automounted(pod({ nodeName: 'old' }));
    const ops = patched(decide(input(p), old, cfg('custom', { redirect: { mode: 'off' } })));
    expect(ops.filter(isTokenOp).map((o) => o.path)).toEqual([
      '/spec/initContainers/0/volumeMounts',
      '/spec/containers/1/volumeMounts/-',
    ]);
    const out = expectNoReinvocation(p, cfg('custom', { redirect: { mode: 'off' } }), old);
    expect(holders(out)).toEqual({
      init: [['meshgate-init', VOLUME]],
      containers: [
        ['app', VOLUME],
        ['meshgate-proxy', VOLUME],
      ],
    });
  });

  it('a container with its own mount at the token path is left alone, as the plugin leaves it', () => {
    const own = { name: 'own-token', mountPath: TOKEN_MOUNT_PATH };
    const p = automounted(pod({ nodeName: 'good', containers: [{ name: 'app' }, { name: 'b', volumeMounts: [own] }] }));
    expect(holders(p).containers).toEqual([
      ['app', VOLUME],
      ['b', 'own-token'],
    ]);
    expect(holders(expectNoReinvocation(p, c)).containers).toEqual([
      ['app', VOLUME],
      ['b', 'own-token'],
    ]);
  });

  it('a proxy template that mounts something at the token path itself gets nothing more', () => {
    const mine = cfg('custom', {
      proxy: { volumeMounts: [{ name: 'proxy-token', mountPath: TOKEN_MOUNT_PATH, readOnly: true }] },
      volumes: [{ name: 'proxy-token', emptyDir: {} }],
    });
    const out = expectNoReinvocation(automounted(pod({ nodeName: 'good' })), mine);
    expect(holders(out).init).toEqual([
      ['meshgate-validate', VOLUME],
      ['meshgate-proxy', 'proxy-token'],
    ]);
  });

  it('automount evidently off: no mount, the patch as before', () => {
    for (const p of [
      pod({ nodeName: 'good' }),
      pod({ nodeName: 'good', volumes: [tokenVolume] }),
      {
        ...automounted(pod({ nodeName: 'good' })),
        spec: { ...automounted(pod()).spec, automountServiceAccountToken: false },
      },
    ]) {
      expect(patched(decide(input(p), verified, c)).filter(isTokenOp)).toEqual([]);
    }
  });

  it('containers another webhook added after the plugin ran get it too (the re-run would add it)', () => {
    const p = automounted(pod({ nodeName: 'good' }));
    p.spec.containers.push({ name: 'vault-agent', image: 'vault' });
    const out = expectNoReinvocation(p, c);
    expect(holders(out).containers).toEqual([
      ['app', VOLUME],
      ['vault-agent', VOLUME],
    ]);
  });

  it('never a refusal: mounts that would take the patch over MAX_PATCH_OPS are left to the re-run', () => {
    const p = automounted(pod({ nodeName: 'good' }));
    for (let i = 0; i < MAX_PATCH_OPS; i++) p.spec.containers.push({ name: `late-${i}`, image: 'x' });
    const ops = patched(decide(input(p), verified, c));
    expect(ops.filter(isTokenOp)).toEqual([]);
    expect(ops.length).toBeLessThan(10);
  });
});

describe('companion profiles: the validator, and the mesh injector’s containers, get the mount', () => {
  it('istio, CNI mode: istio-init replaced by the validator; istio-proxy (added after the plugin) too', () => {
    const p = istioPod({
      nodeName: 'good',
      containers: [mounted({ name: 'app', image: 'nginx' }), istio.proxy()],
      volumes: [tokenVolume],
    });
    expect(holders(expectNoReinvocation(p, cfg('istio')))).toEqual({
      init: [['istio-validation', VOLUME]],
      containers: [
        ['app', VOLUME],
        ['istio-proxy', VOLUME],
      ],
    });
  });

  it('istio, automount evidently off (no container mounts the volume): no mount', () => {
    const p = istioPod({ nodeName: 'good', volumes: [tokenVolume] });
    expect(patched(decide(input(p), verified, cfg('istio'))).filter(isTokenOp)).toEqual([]);
  });

  it('istio, CNI mode, native proxy, app mounted by the first run (the usual pod)', () => {
    const p = istioPod({
      nodeName: 'good',
      initContainers: [istio.init(), istio.proxy({ restartPolicy: 'Always' })],
      containers: [mounted({ name: 'app', image: 'nginx' })],
      volumes: [tokenVolume],
    });
    const ops = patched(decide(input(p), verified, cfg('istio')));
    // remove /spec/initContainers/0, add the validator there; the mounts address the lists as they end.
    expect(ops.filter(isTokenOp).map((o) => o.path)).toEqual([
      '/spec/initContainers/0/volumeMounts',
      '/spec/initContainers/1/volumeMounts',
    ]);
    expect(holders(expectNoReinvocation(p, cfg('istio')))).toEqual({
      init: [
        ['istio-validation', VOLUME],
        ['istio-proxy', VOLUME],
      ],
      containers: [['app', VOLUME]],
    });
  });

  it('istio, init mode with the validator: istio-init kept, the validator after it', () => {
    const alt = cfg('istio', { redirect: { onUnverifiedNode: 'validate' } });
    const p = istioPod({
      nodeName: 'bad',
      containers: [mounted({ name: 'app', image: 'nginx' }), istio.proxy()],
      volumes: [tokenVolume],
    });
    expect(holders(expectNoReinvocation(p, alt))).toEqual({
      init: [
        ['istio-init', VOLUME],
        ['istio-validation', VOLUME],
      ],
      containers: [
        ['app', VOLUME],
        ['istio-proxy', VOLUME],
      ],
    });
  });

  it('istio, CNI mode with Istio’s own validation already there: only the removal, and the mounts', () => {
    const p = istioPod({
      nodeName: 'good',
      initContainers: [istio.init(), istio.validation()],
      containers: [mounted({ name: 'app', image: 'nginx' }), istio.proxy()],
      volumes: [tokenVolume],
    });
    const ops = patched(decide(input(p), verified, cfg('istio')));
    expect(ops.filter(isTokenOp).map((o) => o.path)).toEqual([
      '/spec/initContainers/0/volumeMounts',
      '/spec/containers/1/volumeMounts',
    ]);
    expect(holders(expectNoReinvocation(p, cfg('istio'))).init).toEqual([['istio-validation', VOLUME]]);
  });

  it('linkerd, CNI mode', () => {
    const p = linkerdPod({
      nodeName: 'good',
      containers: [mounted({ name: 'app', image: 'nginx' }), linkerd.proxy()],
      volumes: [tokenVolume],
    });
    const alt = cfg('linkerd', { cni: { pluginType: 'linkerd-cni' } });
    const lverified = facts({ good: { verified: true, kubeletVersion: 'v1.34.1' } });
    expect(holders(expectNoReinvocation(p, alt, lverified))).toEqual({
      init: [['linkerd-network-validator', VOLUME]],
      containers: [
        ['app', VOLUME],
        ['linkerd-proxy', VOLUME],
      ],
    });
  });

  it('already adjusted (empty patch): nothing added, even where the mesh’s containers lack the mount', () => {
    const p = istioPod({
      nodeName: 'good',
      containers: [mounted({ name: 'app', image: 'nginx' }), istio.proxy()],
      volumes: [tokenVolume],
    });
    const once = apply(
      p,
      patched(decide(input(p), verified, cfg('istio'))).filter((o) => !isTokenOp(o)),
    );
    expect(decide(input(once), verified, cfg('istio'))).toMatchObject({ kind: 'skip', reason: 'already_injected' });
  });
});
