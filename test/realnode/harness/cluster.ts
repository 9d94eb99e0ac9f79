// A control plane (test/e2e/harness, no kwok) plus real nodes, inside the run's network namespace. Call only in
// the re-executed child (isolation.ts): startRealCluster refuses to run in the machine's own namespace.
//   const cluster = await startRealCluster({ runId, nodes: [{ name: 'rn-1', mesh: true }, { name: 'rn-2', mesh: false }] });
//   try { ... cluster.node('rn-1').writeConflist(...), cluster.redirectionOf(pod) ... } finally { await cluster.stop(); }
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { CoreV1Api, RbacAuthorizationV1Api, type V1Pod } from '@kubernetes/client-node';
import { startControlPlane, type ControlPlane, type StartOptions } from '../../e2e/harness/controlplane.ts';
import { describeError } from '../../e2e/harness/wait.ts';
import { findRealNodeBinaries, type RealNodeBinaries } from './binaries.ts';
import { ISTIO_CNI_USER, type TierMesh } from './cni.ts';
import type { TierRuntime } from './containerd2.ts';
import { grantLinkerdCni } from './linkerd-cni.ts';
import { linkerdProxyImage } from './linkerd-image.ts';
import {
  BASE,
  CGROUP_NAME,
  joinCgroup,
  leaveCgroups,
  leftovers,
  makeCgroup,
  mountRunDir,
  recordHostState,
  runCleanup,
} from './host.ts';
import type { BuiltImage } from './image.ts';
import { becomeProxyImage, pauseImage, proxyImage } from './images.ts';
import { pullOnEveryNode, startTierRegistry, type TierRegistry } from './registry.ts';
import { assertIsolated, isInside, setUpNamespace } from './isolation.ts';
import { redirectionOf, type Redirection } from './judge.ts';
import { nodeIp, startRealNode, type RealNode } from './node.ts';
import { Timings } from './timings.ts';

export interface RealClusterOptions {
  runId: string;
  nodes: { name: string; mesh: boolean }[];
  /** Whose mesh plugin the nodes chain and whose proxy image they hold; default istio. */
  meshName?: TierMesh;
  /** Which containerd the nodes run; default Debian's 1.6. */
  runtime?: TierRuntime;
  /** Istio ambient: istio-cni chained with ambient on (the istio-ambient line; harness/ambient.ts). */
  ambient?: boolean;
  controlPlane?: Omit<StartOptions, 'withKwok' | 'kubeletClientCert'>;
  timings?: Timings;
}

export interface RealCluster {
  runId: string;
  runDir: string;
  cp: ControlPlane;
  bins: RealNodeBinaries;
  nodes: RealNode[];
  images: {
    pause: BuiltImage;
    proxy: BuiltImage;
    becomeProxy: BuiltImage;
    /** meshName linkerd: Linkerd's proxy image (stand-in proxy, real proxy-init and validator). */
    linkerdProxy?: BuiltImage;
  };
  meshName: TierMesh;
  /** Istio ambient line (harness/ambient.ts). */
  ambient: boolean;
  timings: Timings;
  /** The registry meshgate's image (the release's) is pulled from (harness/registry.ts). */
  registry: TierRegistry;
  node(name: string): RealNode;
  /** Imports an image into every node's containerd. */
  importImage(image: BuiltImage): Promise<void>;
  /** Judges a pod on the node it is bound to (see judge.ts). */
  redirectionOf(pod: V1Pod): Promise<Redirection>;
  /** Deletes every pod, stops kubelets, containerds and the control plane, runs cleanup.sh; returns leftovers. */
  stop(): Promise<string[]>;
}

export async function startRealCluster(opts: RealClusterOptions): Promise<RealCluster> {
  if (!isInside())
    throw new Error(
      "startRealCluster must run inside the run's own network namespace (see test/realnode/harness/isolation.ts)",
    );
  const timings = opts.timings ?? new Timings();
  const { runId } = opts;
  const meshName = opts.meshName ?? 'istio';
  const runDir = join(BASE, 'runs', runId);

  const { sweep } = timings.sync('namespace setup + sweep of earlier runs', () =>
    setUpNamespace(opts.nodes.map((_, i) => nodeIp(i + 1))),
  );
  if (sweep.trim()) process.stderr.write(sweep);
  const { sysctls } = recordHostState();
  mkdirSync(runDir, { recursive: true });
  mountRunDir(runDir);
  makeCgroup(`${CGROUP_NAME}/${runId}/harness`);
  joinCgroup(`${CGROUP_NAME}/${runId}/harness`); // everything started from here on can be found and killed

  let cp: ControlPlane | undefined;
  let registry: TierRegistry | undefined;
  const nodes: RealNode[] = [];
  let stopped: Promise<string[]> | undefined;
  const stop = () =>
    (stopped ??= (async () => {
      await timings.async('teardown: delete pods', () => deleteAllPods(cp));
      await timings.async('teardown: stop kubelets + containerds', () => Promise.all(nodes.map((n) => n.stop())));
      await timings.async('teardown: stop control plane', async () => cp?.stop());
      await registry?.registry.stop();
      leaveCgroups();
      const log = timings.sync('teardown: cleanup.sh (shims, mounts, cgroups, sysctls)', () => runCleanup(runId));
      if (log.trim()) process.stderr.write(log);
      return leftovers(runId, runDir, sysctls);
    })());

  try {
    const bins = findRealNodeBinaries();
    const image = async (what: string, build: () => Promise<BuiltImage>) => {
      const t0 = performance.now();
      const img = await build();
      timings.entries.push({
        what: `image ${what} (${img.reused ? 'cached' : 'built'}, ${(img.bytes / 1e6).toFixed(1)} MB)`,
        ms: performance.now() - t0,
      });
      return img;
    };
    const images = {
      pause: await image('pause', () => pauseImage(bins)),
      proxy: await image('proxy stand-in', () => proxyImage(bins)),
      becomeProxy: await image('become-proxy (S9)', () => becomeProxyImage(bins)),
      ...(meshName === 'linkerd'
        ? { linkerdProxy: await image('linkerd proxy (stand-in proxy, real proxy-init)', () => linkerdProxyImage()) }
        : {}),
    };
    // The release's image, the registry and the push run while the control plane starts (neither needs the other).
    // Each is kept as soon as it is up, so that a failure of the other still tears it down.
    const [reg, plane] = await Promise.all([
      timings.async(
        'meshgate image (the release step) + registry + crane push (beside the next)',
        async () => (registry = await startTierRegistry(runDir)),
      ),
      timings.async(
        'control plane start',
        async () => (cp = await startControlPlane({ ...opts.controlPlane, withKwok: false, kubeletClientCert: true })),
      ),
    ]);
    cp = plane;
    const reused = reg.image.layers.filter((l) => l.reused).length;
    timings.entries.push({
      what: `  meshgate image ${reg.image.digest.slice(0, 19)}: ${(reg.image.bytes / 1e6).toFixed(1)} MB, ${reg.image.layers.length} layers (${reused} cached)`,
      ms: 0,
    });
    await grantIstioCni(cp);
    if (meshName === 'linkerd') await grantLinkerdCni(cp);
    const started = await timings.async('nodes start (containerd + image import + kubelet + Ready)', () =>
      Promise.all(
        opts.nodes.map((n, i) =>
          startRealNode(cp!, bins, runDir, runId, {
            name: n.name,
            index: i + 1,
            mesh: n.mesh,
            meshName,
            ambient: opts.ambient,
            runtime: opts.runtime,
            images: Object.values(images),
            registryHosts: reg.hostsDir,
          }),
        ),
      ),
    );
    nodes.push(...started);
    await timings.async('kubelets pull meshgate image from the registry', () =>
      pullOnEveryNode(
        cp!,
        started.map((n) => n.name),
        reg,
      ),
    );
    assertIsolated();
    const byName = (name: string) => {
      const n = nodes.find((x) => x.name === name);
      if (!n) throw new Error(`no real node named ${name} (have ${nodes.map((x) => x.name).join(', ')})`);
      return n;
    };
    return {
      runId,
      runDir,
      cp,
      bins,
      nodes,
      images,
      meshName,
      ambient: opts.ambient ?? false,
      timings,
      registry: reg,
      node: byName,
      importImage: async (img) => void (await Promise.all(nodes.map((n) => n.importImage(img)))),
      redirectionOf: (pod) => {
        if (!pod.spec?.nodeName) throw new Error(`pod ${pod.metadata?.name} is not bound to a node`);
        return redirectionOf(byName(pod.spec.nodeName), pod);
      },
      stop,
    };
  } catch (err) {
    const detail = nodes.map((n) => n.describe(20)).join('\n');
    await stop();
    throw new Error(`real cluster failed to start: ${describeError(err)}\n${detail}`, { cause: err });
  }
}

/**
 * istio-cni's identity (a client cert, see cni.ts) may read pods and namespaces, like the ClusterRole of Istio's
 * CNI chart (istio-cni) grants its DaemonSet.
 */
async function grantIstioCni(cp: ControlPlane): Promise<void> {
  const rbac = cp.kc.makeApiClient(RbacAuthorizationV1Api);
  await rbac.createClusterRole({
    body: {
      metadata: { name: 'meshgate-e2e:istio-cni' },
      rules: [{ apiGroups: [''], resources: ['pods', 'namespaces', 'nodes'], verbs: ['get', 'list', 'watch'] }],
    },
  });
  await rbac.createClusterRoleBinding({
    body: {
      metadata: { name: 'meshgate-e2e:istio-cni' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'meshgate-e2e:istio-cni' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: ISTIO_CNI_USER }],
    },
  });
}

/** Deletes every pod (their grace periods apply) and waits until the kubelets have removed them, 60 s at most. */
async function deleteAllPods(cp: ControlPlane | undefined): Promise<void> {
  if (!cp) return;
  const core = cp.kc.makeApiClient(CoreV1Api);
  try {
    const pods = (await core.listPodForAllNamespaces()).items;
    await Promise.all(
      pods.map((p) =>
        core.deleteNamespacedPod({ name: p.metadata!.name!, namespace: p.metadata!.namespace! }).catch(() => undefined),
      ),
    );
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline && (await core.listPodForAllNamespaces()).items.length > 0)
      await new Promise((r) => setTimeout(r, 250));
  } catch (err) {
    process.stderr.write(`teardown: could not delete pods (${describeError(err)}); cleanup.sh kills them\n`);
  }
}
