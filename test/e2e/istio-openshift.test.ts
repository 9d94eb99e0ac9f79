/**
 * Istio on OpenShift (issue 31 §1), on a real kube-apiserver with Istio 1.27's REAL injector started as istiod runs
 * there (PLATFORM=openshift: it reads each pod's namespace and runs the proxy as the last UID of the namespace's
 * openshift.io/sa.scc.uid-range), next to meshgate with `proxy.idsFrom: openshift`:
 * - meshgate computes the proxy's UID/GID from the namespace exactly as the injector writes them (istio-proxy's
 *   runAsUser/runAsGroup, istio-init's -u), over a table of annotation values;
 * - at enforce, with the default apps.privileges, bookinfo's pods are admitted (before: refused, every one), meshgate's
 *   validator runs as the namespace's proxy UID on a verified node, an app running as that UID is refused, and 1337
 *   is an ordinary UID there.
 * Not OpenShift itself: no SCC admission assigns UIDs here (docs/platforms/openshift.md says what was run).
 */
import { describe, expect, it } from 'vitest';
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import { istioOpenShiftProxyIds } from '../../src/mesh/istio-openshift.ts';
import { apiError, createNamespace } from './meshgate.ts';
import { shared } from './harness/shared.ts';
import { startIstioCompanion } from './harness/clusters.ts';

const RANGE = { 'openshift.io/sa.scc.uid-range': '1000650000/10000' };
/**
 * The cluster this file's tests share: Istio's real injector as on OpenShift (failing closed), and meshgate called
 * after it with the default apps.privileges (node), as a fresh install runs it.
 */
const s = shared(async (stopLater) => {
  const cluster = await startIstioCompanion(
    stopLater,
    { 'node-verified': true },
    {
      istio: { env: { PLATFORM: 'openshift' } },
      failurePolicy: 'Fail',
      config: { apps: { privileges: 'node' }, proxy: { idsFrom: 'openshift' } },
    },
  );
  await createNamespace(cluster.cp, 'shop', { 'istio-injection': 'enabled', 'meshgate.io/inject': 'enabled' }, RANGE);
  return cluster;
});

const all = (p: V1Pod): V1Container[] => [...(p.spec?.initContainers ?? []), ...(p.spec?.containers ?? [])];
const named = (p: V1Pod, name: string) => all(p).find((c) => c.name === name);

/** bookinfo's productpage as its manifest has it: no securityContext at all. */
function bookinfo(name: string, securityContext?: V1Container['securityContext'], nodeName?: string): V1Pod {
  return {
    metadata: { name, labels: { app: 'productpage', version: 'v1' } },
    spec: {
      nodeName,
      containers: [
        {
          name: 'productpage',
          image: 'docker.io/istio/examples-bookinfo-productpage-v1:1.20.3',
          ports: [{ containerPort: 9080 }],
          ...(securityContext ? { securityContext } : {}),
        },
      ],
    },
  };
}

describe("the proxy's IDs as istiod computes them on OpenShift", () => {
  /** Namespaces whose annotations the real injector reads; meshgate is not called there (no meshgate label). */
  const rows: Array<[string, Record<string, string>]> = [
    ['both annotations, one block', { ...RANGE, 'openshift.io/sa.scc.supplemental-groups': '1000650000/10000' }],
    ['the UID range alone', { 'openshift.io/sa.scc.uid-range': '1000720000/10000' }],
    [
      'a start-end range, groups of two blocks',
      { 'openshift.io/sa.scc.uid-range': '2000-2999', 'openshift.io/sa.scc.supplemental-groups': '5000/10,6000/10' },
    ],
    ['an unreadable range', { 'openshift.io/sa.scc.uid-range': 'abc' }],
    ['no annotations', {}],
    [
      'groups present but empty',
      { 'openshift.io/sa.scc.uid-range': '3000/5', 'openshift.io/sa.scc.supplemental-groups': '' },
    ],
  ];
  it.each(rows.map((r, i) => [...r, `ids-${i}`] as const))('%s', async (_n, annotations, ns) => {
    await createNamespace(s.cp, ns, { 'istio-injection': 'enabled' }, annotations);
    const p = await s.core.createNamespacedPod({ namespace: ns, body: bookinfo('p'), dryRun: 'All' });
    const proxy = named(p, 'istio-proxy')!;
    const init = named(p, 'istio-init')!;
    const u = init.args![init.args!.indexOf('-u') + 1];
    const want = istioOpenShiftProxyIds(annotations);
    expect({
      uid: proxy.securityContext?.runAsUser,
      gid: proxy.securityContext?.runAsGroup,
      initU: Number(u),
    }).toEqual({ uid: want.uid, gid: want.gid, initU: want.uid });
  });
});

describe('meshgate at enforce in an OpenShift namespace', () => {
  it("admits bookinfo's pod as Istio injected it, its validator running as the namespace's proxy UID", async () => {
    const p = await s.core.createNamespacedPod({ namespace: 'shop', body: bookinfo('pp', undefined, 'node-verified') });
    expect(named(p, 'istio-proxy')?.securityContext?.runAsUser).toBe(1000659999);
    expect(named(p, 'istio-init')).toBeUndefined();
    expect(named(p, 'istio-validation')?.securityContext).toMatchObject({
      runAsUser: 1000659999,
      runAsGroup: 1000659999,
    });
  });

  it("refuses an app running as the namespace's proxy UID, which istio-init exempts there", async () => {
    const err = await s.core
      .createNamespacedPod({ namespace: 'shop', body: bookinfo('as-proxy', { runAsUser: 1000659999 }) })
      .then(() => 'admitted', apiError);
    expect(err).toMatch(/runs as UID 1000659999, the proxy's.*\[proxy_identity\]/);
  });

  it('admits an app running as 1337: an ordinary UID in this namespace', async () => {
    const p = await s.core.createNamespacedPod({
      namespace: 'shop',
      body: bookinfo('as-1337', { runAsUser: 1337, runAsGroup: 1337 }),
    });
    expect(named(p, 'istio-proxy')).toBeDefined();
  });
});
