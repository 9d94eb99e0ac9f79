/**
 * The corpus' injection passes: one control plane, then each mesh's REAL injector registered in turn — Istio 1.27's
 * (test/istio, pkg/kube/inject), the same with PLATFORM=openshift (istiod's OpenShift mode: the proxy's IDs from
 * the namespace's UID range), Linkerd's proxy injector (shared/vendor/linkerd2) — and every workload's pod created
 * in that mesh's namespace with a server-side dry run: the apiserver's defaults and the injector's mutation, nothing
 * stored, nothing scheduled. What comes back is the pod as the cluster would hold it before meshgate's webhooks.
 */
import { CoreV1Api, SchedulingV1Api, type V1Pod } from '@kubernetes/client-node';
import { startControlPlane, startIstioInjector, type ControlPlane } from '../e2e/harness/index.ts';
import { startLinkerdInjector } from '../e2e/harness/linkerd.ts';
import { createNamespace } from '../e2e/meshgate.ts';
import { CORPUS_NODE, type WorkloadPod } from './render.ts';
import { type CorpusMesh, OPENSHIFT_NAMESPACE_ANNOTATIONS } from './sources.ts';

/** Each mesh's namespace: how its injector selects it. */
const NAMESPACES: Readonly<
  Record<CorpusMesh, { labels: Record<string, string>; annotations: Record<string, string> }>
> = {
  istio: { labels: { 'istio-injection': 'enabled' }, annotations: {} },
  'istio-openshift': { labels: { 'istio-injection': 'enabled' }, annotations: { ...OPENSHIFT_NAMESPACE_ANNOTATIONS } },
  linkerd: { labels: {}, annotations: { 'linkerd.io/inject': 'enabled' } },
};

export const namespaceOf = (mesh: CorpusMesh) => `corpus-${mesh}`;

/** What each pod names that the apiserver's admission checks exist: ServiceAccounts and PriorityClasses. */
async function prerequisites(cp: ControlPlane, pods: readonly WorkloadPod[], namespace: string): Promise<void> {
  const core = cp.kc.makeApiClient(CoreV1Api);
  const accounts = new Set(pods.map((p) => (p.pod.spec as { serviceAccountName?: string }).serviceAccountName));
  for (const name of accounts) {
    if (!name || name === 'default') continue;
    await core.createNamespacedServiceAccount({ namespace, body: { metadata: { name } } });
  }
  const scheduling = cp.kc.makeApiClient(SchedulingV1Api);
  const classes = new Set(pods.map((p) => (p.pod.spec as { priorityClassName?: string }).priorityClassName));
  for (const name of classes) {
    if (!name || name.startsWith('system-')) continue;
    await scheduling
      .createPriorityClass({ body: { metadata: { name }, value: 1000 } })
      .catch((e: unknown) => (String(e).includes('AlreadyExists') ? undefined : Promise.reject(e)));
  }
}

/** Each pod as injected, in the order given; undefined for a pod this mesh does not run. */
async function dryRunAll(
  cp: ControlPlane,
  pods: readonly WorkloadPod[],
  mesh: CorpusMesh,
): Promise<Array<V1Pod | undefined>> {
  const core = cp.kc.makeApiClient(CoreV1Api);
  const namespace = namespaceOf(mesh);
  const out: Array<V1Pod | undefined> = [];
  for (const p of pods) {
    if (p.meshes && !p.meshes.includes(mesh)) {
      out.push(undefined);
      continue;
    }
    try {
      out.push(await core.createNamespacedPod({ namespace, body: p.pod as V1Pod, dryRun: 'All' }));
    } catch (err) {
      throw new Error(`${p.workload} in ${namespace}: ${String((err as { body?: unknown }).body ?? err)}`);
    }
  }
  return out;
}

/** Every pod injected by each mesh, in the order given, and the trust anchors of the Linkerd install that injected them. */
export async function injectAll(
  pods: readonly WorkloadPod[],
): Promise<{ pods: Record<CorpusMesh, Array<V1Pod | undefined>>; linkerdTrustRoots: string }> {
  const cp = await startControlPlane({ nodes: [{ name: CORPUS_NODE, kubeletVersion: 'v1.34.2' }] });
  try {
    for (const [mesh, ns] of Object.entries(NAMESPACES) as [CorpusMesh, (typeof NAMESPACES)[CorpusMesh]][]) {
      await createNamespace(cp, namespaceOf(mesh), ns.labels, ns.annotations);
      await prerequisites(cp, pods, namespaceOf(mesh));
    }
    const out = {} as Record<CorpusMesh, Array<V1Pod | undefined>>;
    for (const [mesh, env] of [
      ['istio', {}],
      ['istio-openshift', { PLATFORM: 'openshift' }],
    ] as const) {
      const istio = await startIstioInjector(cp, { env, logLevel: 'warn' });
      try {
        await istio.register({ failurePolicy: 'Fail' });
        out[mesh] = await dryRunAll(cp, pods, mesh);
      } finally {
        await istio.stop();
      }
    }
    const l5d = await startLinkerdInjector(cp, {}, { logLevel: 'warn' });
    try {
      await l5d.register({ failurePolicy: 'Fail' });
      out.linkerd = await dryRunAll(cp, pods, 'linkerd');
      // What its linkerd-identity-trust-roots ConfigMap holds, which meshgate learns (src/kube/learned-control-plane.ts).
      return { pods: out, linkerdTrustRoots: l5d.rendered.trustRoots };
    } finally {
      await l5d.stop();
    }
  } finally {
    await cp.stop();
  }
}
