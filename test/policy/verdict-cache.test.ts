/**
 * The verdict cache of src/policy/verdict-cache.ts, on pods real injectors wrote (the corpus, test/corpus/data): a
 * verdict is reused only when everything its judgement reads is the same. Every field of the injected containers and
 * every part of the pod view (the volumes they mount, the ServiceAccount, the gateway, the container's place, the app's
 * capabilities Linkerd copies) is changed in turn: each change is a miss, and the verdict equals one judged afresh.
 * The pods' own token volume names are the one thing renamed before comparing: replicas share verdicts, and what the
 * renaming could get wrong (volumes, collisions, names outside the family, messages) is tested at the end.
 */
import { describe, expect, it } from 'vitest';
import type { Compiled } from '../../src/config/compile.ts';
import type { Container, Pod } from '../../src/contract/pod.ts';
import { parsePod } from '../../src/pod/parse.ts';
import { identifyPod, type PodMesh } from '../../src/policy/identify.ts';
import {
  type Judge,
  MAX_CHARS,
  MAX_ENTRIES,
  MAX_INPUT_CHARS,
  type RoleVerdict,
  VerdictCache,
} from '../../src/policy/verdict-cache.ts';
import type { JudgementInput } from '../../src/policy/verdict-input.ts';
import { corpusConfig } from '../corpus/judge.ts';
import { type ContainerContract, contractsFor } from '../../src/policy/judge/index.ts';
import type { MountsCheck } from '../../src/policy/judge/checks.ts';
import { TOKEN_MOUNT_PATH, TOKEN_VOLUME_NAME } from '../../src/pod/service-account-token.ts';
import { loadCorpus } from '../corpus/load.ts';
import { istio, istioPod } from './mutate/fixtures.ts';
import { testConfig } from '../support/config.ts';

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** What identifyPod found, comparable with toEqual (frozen or not). */
function summary(m: PodMesh) {
  const at = (f?: { list: string; index: number }) => f && `${f.list}[${f.index}]`;
  return {
    proxy: m.proxy && [at(m.proxy), m.proxy.own, m.proxy.native],
    init: m.init && [at(m.init), m.init.own, structuredClone(m.init.settings)],
    validator: m.validator && [at(m.validator), m.validator.own],
    impostors: m.impostors.map((f) => [at(f), f.problem]),
    apps: m.apps.map(at),
    pending: at(m.pending),
  };
}

/**
 * A corpus pod of `mesh` whose proxy and init container are the mesh's own (no impostor), as the mutating webhook
 * sees it: the corpus holds pods as the apiserver stored them, whose ServiceAccount token mount the apiserver added
 * to every container; at admission the injector's containers come after that plugin, without it (a container
 * mounting the pod's own token volume is judged on a renamed input, tested on its own below).
 */
function corpusPod(mesh: 'istio' | 'linkerd', cfg: Compiled): Pod {
  for (const c of loadCorpus()) {
    if (c.mesh !== mesh) continue;
    const p = parsePod(structuredClone(c.pod), 'pod');
    if (!p.ok) continue;
    for (const container of [...(p.pod.spec.initContainers ?? []), ...p.pod.spec.containers])
      if (/^(istio|linkerd)-/.test(container.name) && Array.isArray(container.volumeMounts))
        container.volumeMounts = (container.volumeMounts as Array<{ name: string }>).filter(
          (m) => !m.name.startsWith('kube-api-access-'),
        ) as typeof container.volumeMounts;
    const m = identifyPod(p.pod, cfg, new VerdictCache());
    if (m.proxy && m.init && m.impostors.length === 0) return p.pod;
  }
  throw new Error(`no ${mesh} corpus pod with the mesh's proxy and init container`);
}

/** Every way to change one thing in `v`: each leaf changed, each member removed, a member added to each object. */
function* edits(v: Json, path: (string | number)[] = []): Generator<[string, (root: Json) => void]> {
  const at = (root: Json): Json => path.reduce<Json>((x, k) => (x as Record<string, Json>)[k], root);
  const name = path.join('.');
  if (Array.isArray(v)) {
    if (v.length > 0) yield [`${name}: last item removed`, (root) => (at(root) as Json[]).pop()];
    for (const [i, x] of v.entries()) yield* edits(x, [...path, i]);
    return;
  }
  if (v !== null && typeof v === 'object') {
    yield [`${name}: member added`, (root) => ((at(root) as Record<string, Json>).zzExtra = 'x')];
    for (const [k, x] of Object.entries(v)) {
      if (path.length > 0 || k !== 'name')
        yield [`${name}.${k}: removed`, (root) => delete (at(root) as Record<string, Json>)[k]];
      yield* edits(x, [...path, k]);
    }
    return;
  }
  // The name gives the role: another name is an app container, which no contract judges.
  if (path.length === 1 && path[0] === 'name') return;
  const changed = typeof v === 'string' ? `${v}x` : typeof v === 'number' ? v + 1 : typeof v === 'boolean' ? !v : 'x';
  yield [
    `${name}: ${JSON.stringify(v)} → ${JSON.stringify(changed)}`,
    (root) => {
      const parent = path.slice(0, -1).reduce<Json>((x, k) => (x as Record<string, Json>)[k], root);
      (parent as Record<string | number, Json>)[path[path.length - 1]] = changed;
    },
  ];
}

/**
 * A cache that records which containers reached it, and which of them it had to judge (its misses). Its fingerprint
 * is one for all: every entry is compared by its key, so what is proven here is that the key alone is complete.
 */
class Recording extends VerdictCache {
  asked: unknown[] = [];
  judged: unknown[] = [];
  constructor() {
    super(MAX_ENTRIES, MAX_CHARS, () => 'one for all');
  }
  override verdict(j: JudgementInput, judge: Judge): RoleVerdict {
    this.asked.push(j.container);
    return super.verdict(j, (input) => {
      this.judged.push(j.container);
      return judge(input);
    });
  }
}

/**
 * Judges `pod` with a warm cache (which judged `base` before) and with a fresh one: every container of `changed`
 * (those whose input differs from base's) that is judged at all is judged afresh — a miss, never a verdict reused —
 * and both verdicts are the same. Returns how many of them were judged (a container that lost its place in the pod
 * is refused before any contract is asked).
 */
function expectMiss(base: Pod, pod: Pod, cfg: Compiled, changed: (p: Pod) => unknown[] = meshContainers): number {
  const cache = new Recording();
  identifyPod(structuredClone(base), cfg, cache);
  cache.asked = [];
  cache.judged = [];
  const cached = summary(identifyPod(pod, cfg, cache));
  const asked = changed(pod).filter((c) => cache.asked.includes(c));
  for (const c of asked) expect(cache.judged).toContain(c);
  expect(cached).toEqual(summary(identifyPod(structuredClone(pod), cfg, new VerdictCache())));
  return asked.length;
}

/** The containers under the mesh's names (and meshgate's). */
const meshContainers = (p: Pod) =>
  [...(p.spec.initContainers ?? []), ...p.spec.containers].filter((c) => /^(istio|linkerd|meshgate)-/.test(c.name));
const mountsOf = (c: Container) => ((c.volumeMounts ?? []) as Array<{ name: string }>).map((m) => m.name);
const named = (name: string) => (p: Pod) => meshContainers(p).filter((c) => c.name === name);

function expectHit(base: Pod, pod: Pod, cfg: Compiled): void {
  const cache = new VerdictCache();
  const first = summary(identifyPod(structuredClone(base), cfg, cache));
  const before = cache.misses;
  const again = summary(identifyPod(pod, cfg, cache));
  expect(cache.misses).toBe(before);
  expect(cache.hits).toBeGreaterThan(0);
  expect(again).toEqual(first);
}

const istioCfg = corpusConfig('istio', 'node');
const istioBase = corpusPod('istio', istioCfg);

describe('verdict cache: reused for the same input only', () => {
  it('a pod judged again is answered from the cache, with the same verdict', () => {
    const cache = new VerdictCache();
    const first = summary(identifyPod(structuredClone(istioBase), istioCfg, cache));
    expect(cache.misses).toBe(2);
    const again = summary(identifyPod(structuredClone(istioBase), istioCfg, cache));
    expect(cache.hits).toBe(2);
    expect(cache.misses).toBe(2);
    expect(again).toEqual(first);
  });

  for (const role of ['proxy', 'init'] as const) {
    const name = role === 'proxy' ? 'istio-proxy' : 'istio-init';
    it(`every field of ${name} is read: changing any one is a miss, judged as afresh`, () => {
      const index = istioBase.spec.initContainers!.findIndex((c) => c.name === name);
      const container = istioBase.spec.initContainers![index] as unknown as Json;
      let judged = 0;
      for (const [what, edit] of edits(container)) {
        const pod = structuredClone(istioBase);
        edit(pod.spec.initContainers![index] as unknown as Json);
        const edited = (p: Pod) => [p.spec.initContainers![index]];
        expect(() => (judged += expectMiss(istioBase, pod, istioCfg, edited)), `${name} ${what}`).not.toThrow();
      }
      // Not vacuous: all but the edits that take the container out of its place were judged again.
      expect(judged).toBeGreaterThan(role === 'proxy' ? 150 : 40);
    });
  }

  it('every volume a mesh container mounts is read: changing one is a miss', () => {
    const proxy = istioBase.spec.initContainers!.find((c) => c.name === 'istio-proxy')!;
    const mounted = new Set(mountsOf(proxy));
    const volumes = istioBase.spec.volumes!;
    let n = 0;
    for (const [i, v] of volumes.entries()) {
      if (!mounted.has(v.name)) continue;
      for (const [what, edit] of edits(v as unknown as Json)) {
        if (what.startsWith('.name')) continue; // another name is another volume: the mount then finds none
        const pod = structuredClone(istioBase);
        edit(pod.spec.volumes![i] as unknown as Json);
        const mounting = (p: Pod) => meshContainers(p).filter((c) => mountsOf(c).includes(v.name));
        expect(() => (n += expectMiss(istioBase, pod, istioCfg, mounting)), `volume ${v.name} ${what}`).not.toThrow();
      }
    }
    expect(n).toBeGreaterThan(10);
  });

  it('a pod with many volumes (found through a map of them) is judged the same: changing a mounted one is a miss', () => {
    const padded = structuredClone(istioBase);
    const extra = Array.from({ length: 20 }, (_, i) => ({ name: `pad-${i}`, emptyDir: {} }));
    padded.spec.volumes = [...extra, ...padded.spec.volumes!];
    const pod = structuredClone(padded);
    const envoy = pod.spec.volumes!.find((v) => v.name === 'istio-envoy')!;
    (envoy as Record<string, unknown>).emptyDir = { medium: 'Memory', sizeLimit: '1Gi' };
    expect(expectMiss(padded, pod, istioCfg, named('istio-proxy'))).toBe(1);
    expectHit(istioBase, padded, istioCfg);
  });

  it('a mounted volume removed from the pod is a miss', () => {
    const pod = structuredClone(istioBase);
    pod.spec.volumes = pod.spec.volumes!.filter((v) => v.name !== 'istio-envoy');
    expect(expectMiss(istioBase, pod, istioCfg, named('istio-proxy'))).toBe(1);
  });

  it("the pod's ServiceAccount is read (Istio's istio.<serviceAccount> Secret): another one is a miss", () => {
    const pod = structuredClone(istioBase);
    pod.spec.serviceAccountName = 'another';
    expect(expectMiss(istioBase, pod, istioCfg)).toBe(2);
  });

  it("the container's place is read: the proxy first among the containers or not is a miss", () => {
    const cfg = testConfig('istio');
    const base = istioPod();
    const pod = istioPod({ containers: [istio.proxy(), { name: 'app', image: 'nginx' }] });
    expect(expectMiss(base, pod, cfg, named('istio-proxy'))).toBe(1);
  });

  it("the container's list is read: meshgate's native-sidecar proxy among the regular containers is a miss", () => {
    const cfg = testConfig('custom');
    const native = structuredClone(cfg.own!.proxyNative) as Container;
    const app = { name: 'app', image: 'nginx' };
    const asSidecar = istioPod({ initContainers: [native], containers: [app] });
    const asContainer = istioPod({ initContainers: [], containers: [app, structuredClone(native)] });
    expect(expectMiss(asSidecar, asContainer, cfg, named(native.name))).toBe(1);
    expect(summary(identifyPod(asContainer, cfg, new VerdictCache())).impostors).toHaveLength(1);
  });

  it('whether the pod is a gateway running the proxy alone is read: a second container is a miss', () => {
    const cfg = testConfig('istio');
    const gateway = istio.proxy({ args: ['proxy', 'router'] });
    const alone = istioPod({ initContainers: [], containers: [gateway] });
    const shared = istioPod({ initContainers: [], containers: [gateway, { name: 'app', image: 'nginx' }] });
    expect(expectMiss(alone, shared, cfg)).toBe(1);
    expect(summary(identifyPod(alone, cfg, new VerdictCache())).proxy).toBeDefined();
    expect(summary(identifyPod(shared, cfg, new VerdictCache())).impostors).toHaveLength(1);
  });

  it("the app's capabilities are read (Linkerd copies them into linkerd-init): other ones are a miss", () => {
    const cfg = corpusConfig('linkerd', 'node');
    const base = corpusPod('linkerd', cfg);
    const app = base.spec.containers.find((c) => c.name !== 'linkerd-proxy')!;
    const pod = structuredClone(base);
    const target = pod.spec.containers.find((c) => c.name === app.name)!;
    target.securityContext = { ...target.securityContext, capabilities: { add: ['NET_BIND_SERVICE'], drop: ['ALL'] } };
    expect(expectMiss(base, pod, cfg)).toBe(2);
  });

  it('another configuration, even an equal one, is a miss', () => {
    const cache = new Recording();
    identifyPod(structuredClone(istioBase), istioCfg, cache);
    const other = corpusConfig('istio', 'restricted');
    identifyPod(structuredClone(istioBase), other, cache);
    expect(cache.misses).toBe(4);
  });

  it('what no judgement reads is a hit: app containers, labels, volumes no mesh container mounts', () => {
    const app = structuredClone(istioBase);
    app.spec.containers[0].image = 'example.com/another:1';
    expectHit(istioBase, app, istioCfg);
    const labelled = structuredClone(istioBase);
    labelled.metadata = { ...labelled.metadata, labels: { ...labelled.metadata?.labels, extra: 'x' } };
    expectHit(istioBase, labelled, istioCfg);
    const volume = structuredClone(istioBase);
    volume.spec.volumes = [...volume.spec.volumes!, { name: 'unmounted', emptyDir: {} }];
    expectHit(istioBase, volume, istioCfg);
  });
});

describe('verdict cache: bounded', () => {
  const cfg = testConfig('istio');
  const proxyPod = (domain: string) =>
    istioPod({
      initContainers: [],
      containers: [
        { name: 'app', image: 'nginx' },
        istio.proxy({ args: ['proxy', 'sidecar', '--domain', `$(POD_NAMESPACE).svc.${domain}`] }),
      ],
    });

  it('keeps at most its size; inputs met once pass through probation without pushing out those met again', () => {
    const cache = new VerdictCache(16); // 2 on probation, 14 protected
    identifyPod(proxyPod('hot.local'), cfg, cache);
    identifyPod(proxyPod('hot.local'), cfg, cache); // used again: protected
    for (let i = 0; i < 40; i++) identifyPod(proxyPod(`once-${i}.local`), cfg, cache);
    expect(cache.size).toBeLessThanOrEqual(16);
    const misses = cache.misses;
    identifyPod(proxyPod('hot.local'), cfg, cache);
    expect(cache.misses).toBe(misses);
    // A one-off from long ago is gone: judged again.
    identifyPod(proxyPod('once-0.local'), cfg, cache);
    expect(cache.misses).toBe(misses + 1);
  });

  it('keeps at most its size when every input is met again, the least recently used out first', () => {
    const cache = new VerdictCache(16);
    for (let i = 0; i < 40; i++)
      for (let replica = 0; replica < 2; replica++) identifyPod(proxyPod(`w-${i}.local`), cfg, cache);
    expect(cache.size).toBeLessThanOrEqual(16);
    const misses = cache.misses;
    identifyPod(proxyPod('w-39.local'), cfg, cache);
    expect(cache.misses).toBe(misses);
    identifyPod(proxyPod('w-0.local'), cfg, cache);
    expect(cache.misses).toBe(misses + 1);
  });

  it('judges a container too large to keep without keeping it', () => {
    const cache = new VerdictCache();
    const huge = istioPod({
      initContainers: [],
      containers: [
        { name: 'app', image: 'nginx' },
        istio.proxy({ env: [{ name: 'ISTIO_META_HUGE', value: 'x'.repeat(MAX_INPUT_CHARS) }] }),
      ],
    });
    const first = summary(identifyPod(huge, cfg, cache));
    expect(cache.size).toBe(0);
    expect(summary(identifyPod(huge, cfg, cache))).toEqual(first);
    expect(cache.misses).toBe(2);
  });

  it('hands out frozen verdicts: no review can change what the next one gets', () => {
    const m = identifyPod(structuredClone(istioBase), istioCfg, new VerdictCache());
    expect(Object.isFrozen(m.init?.settings)).toBe(true);
    expect(Object.isFrozen(m.init?.settings.exemptGids)).toBe(true);
  });
});

/** The token volume of a corpus pod (the apiserver's `kube-api-access-<random>`), under another name. */
function tokenNamed(base: Pod, name: string): Pod {
  const pod = structuredClone(base);
  const volume = pod.spec.volumes!.find((v) => TOKEN_VOLUME_NAME.test(v.name))!;
  const old = volume.name;
  volume.name = name;
  for (const c of [...(pod.spec.initContainers ?? []), ...pod.spec.containers])
    for (const m of (c.volumeMounts ?? []) as Array<{ name: string }>) if (m.name === old) m.name = name;
  return pod;
}

/** `base` with its token volume mounted into istio-proxy, as meshgate's patch mounts it (the validating webhook's view). */
function proxyMountingToken(base: Pod, name: string, readOnly = true): Pod {
  const pod = tokenNamed(base, name);
  const proxy = pod.spec.initContainers!.find((c) => c.name === 'istio-proxy')!;
  const mounts = (proxy.volumeMounts ?? []) as unknown[];
  proxy.volumeMounts = [...mounts, { name, mountPath: TOKEN_MOUNT_PATH, readOnly }] as typeof proxy.volumeMounts;
  return pod;
}

describe("verdict cache: the pod's own token volume name", () => {
  it('replicas whose token volumes have other names share verdicts, each as judged afresh', () => {
    const cache = new Recording();
    const first = identifyPod(proxyMountingToken(istioBase, 'kube-api-access-abcde'), istioCfg, cache);
    expect(first.proxy).toBeDefined();
    expect(first.impostors).toEqual([]);
    const misses = cache.misses;
    const judged = cache.judged.length;
    for (const name of ['kube-api-access-x7k2q', 'kube-api-access-00000', 'kube-api-access-z']) {
      const pod = proxyMountingToken(istioBase, name);
      const again = summary(identifyPod(pod, istioCfg, cache));
      expect(again).toEqual(summary(identifyPod(structuredClone(pod), istioCfg, new VerdictCache())));
    }
    expect(cache.misses).toBe(misses);
    expect(cache.judged).toHaveLength(judged);
    expect(cache.renamedInputs).toBe(4);
  });

  it("a problem found under a renamed input is judged again: its message quotes the pod's own volume", () => {
    const cache = new VerdictCache();
    identifyPod(proxyMountingToken(istioBase, 'kube-api-access-aaaaa', false), istioCfg, cache);
    const pod = proxyMountingToken(istioBase, 'kube-api-access-bbbbb', false);
    const m = identifyPod(pod, istioCfg, cache);
    expect(m.impostors.map((f) => f.problem)).toEqual([
      expect.stringContaining('mounts kube-api-access-bbbbb at /var/run/secrets/kubernetes.io/serviceaccount writable'),
    ]);
    expect(summary(m)).toEqual(summary(identifyPod(structuredClone(pod), istioCfg, new VerdictCache())));
  });

  it('the volume behind a renamed mount is judged under its new name: an emptyDir in its place is refused', () => {
    const cache = new VerdictCache();
    expect(identifyPod(proxyMountingToken(istioBase, 'kube-api-access-xyz12'), istioCfg, cache).proxy).toBeDefined();
    const pod = proxyMountingToken(istioBase, 'kube-api-access-abcde');
    const volume = pod.spec.volumes!.find((v) => v.name === 'kube-api-access-abcde')! as Record<string, unknown>;
    delete volume.projected;
    volume.emptyDir = {};
    const m = identifyPod(pod, istioCfg, cache);
    expect(m.proxy).toBeUndefined();
    expect(m.impostors.map((f) => f.problem)).toEqual([
      expect.stringContaining(
        "the pod's volume kube-api-access-abcde is not the projected ServiceAccount token volume",
      ),
    ]);
  });

  it('a name outside the family is not renamed, and never answered by a verdict on one inside it', () => {
    for (const outside of ['kube-api-access-ab-cd', 'kube-api-access-', 'kube-api-access-ABCDE', 'token-abcde']) {
      const pod = proxyMountingToken(istioBase, outside);
      const inside = proxyMountingToken(istioBase, 'kube-api-access-abcde');
      expect(() => expectMiss(inside, pod, istioCfg, named('istio-proxy')), outside).not.toThrow();
    }
  });

  it('two volumes of the family in one container are kept apart, whichever is mounted where', () => {
    const cache = new VerdictCache();
    const hostPath = { hostPath: { path: '/var/lib/kubelet' } };
    const both = (token: string, other: string, swap: boolean): Pod => {
      const pod = proxyMountingToken(istioBase, token);
      pod.spec.volumes!.push({ name: other, ...hostPath });
      const proxy = pod.spec.initContainers!.find((c) => c.name === 'istio-proxy')!;
      const extra = { name: other, mountPath: '/etc/istio/extra', readOnly: true };
      const mounts = (proxy.volumeMounts ?? []) as unknown[];
      proxy.volumeMounts = (swap ? [extra, ...mounts] : [...mounts, extra]) as typeof proxy.volumeMounts;
      return pod;
    };
    const pods = [
      both('kube-api-access-aaaaa', 'kube-api-access-bbbbb', false),
      both('kube-api-access-bbbbb', 'kube-api-access-aaaaa', false),
      both('kube-api-access-aaaaa', 'kube-api-access-bbbbb', true),
      both('kube-api-access-ccccc', 'kube-api-access-ddddd', true),
      proxyMountingToken(istioBase, 'kube-api-access-eeeee'),
    ];
    for (const pod of [...pods, ...pods]) {
      const cached = summary(identifyPod(pod, istioCfg, cache));
      expect(cached).toEqual(summary(identifyPod(structuredClone(pod), istioCfg, new VerdictCache())));
    }
    expect(summary(identifyPod(pods[0], istioCfg, new VerdictCache())).impostors).toHaveLength(1);
    expect(summary(identifyPod(pods[4], istioCfg, new VerdictCache())).impostors).toHaveLength(0);
    // Renamed to one name, the hostPath would be found as the token volume, as the last of a name is.
    const shadowed = proxyMountingToken(istioBase, 'kube-api-access-bbbbb');
    shadowed.spec.volumes!.push({ name: 'kube-api-access-aaaaa', ...hostPath });
    const proxy = shadowed.spec.initContainers!.find((c) => c.name === 'istio-proxy')!;
    const first = { name: 'kube-api-access-aaaaa', mountPath: TOKEN_MOUNT_PATH, readOnly: true };
    proxy.volumeMounts = [first, ...((proxy.volumeMounts ?? []) as unknown[])] as typeof proxy.volumeMounts;
    shadowed.spec.volumes!.push(
      shadowed.spec.volumes!.splice(
        shadowed.spec.volumes!.findIndex((v) => v.name === 'kube-api-access-bbbbb'),
        1,
      )[0],
    );
    expect(identifyPod(shadowed, istioCfg, cache).impostors.map((f) => f.problem)).toEqual([
      expect.stringContaining(
        "the pod's volume kube-api-access-aaaaa is not the projected ServiceAccount token volume",
      ),
    ]);
  });

  it('no contract names a volume of the family: its names are read only through TOKEN_VOLUME_NAME', () => {
    const configs = [
      testConfig('custom'),
      testConfig('istio'),
      testConfig('linkerd'),
      corpusConfig('istio', 'node'),
      corpusConfig('linkerd', 'node'),
      testConfig('istio', { ambient: { enabled: true } }),
    ];
    let rules = 0;
    for (const cfg of configs) {
      const c = contractsFor(cfg);
      const contracts: Array<ContainerContract | undefined> = [
        ...Object.values<ContainerContract | undefined>(c.mesh ?? {}),
        c.gatewayProxy,
        ...Object.values<ContainerContract | undefined>(c.own),
      ];
      for (const k of contracts) {
        for (const r of (k?.fields.volumeMounts as Partial<MountsCheck> | undefined)?.rules ?? []) {
          rules++;
          if (r.name === TOKEN_VOLUME_NAME) continue;
          const probes = ['kube-api-access-0', 'kube-api-access-abcde', 'kube-api-access-12345'];
          for (const probe of probes)
            expect(typeof r.name === 'string' ? r.name === probe : r.name.test(probe), `${r.name}`).toBe(false);
        }
      }
    }
    expect(rules).toBeGreaterThan(20);
  });
});
