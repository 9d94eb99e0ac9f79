// meshgate's image reaches the real nodes as it reaches a user's: the release step's image (scripts/release.ts
// buildImage: the OCI layout `npm run release` ships) is pushed by `crane push` to a real OCI registry (crane registry
// serve, test/release/crane.ts) on loopback inside the run's network namespace, and every node's containerd pulls it
// from there when a kubelet asks (CRI PullImage), under the reference the chart renders by default
// (MESHGATE_REF, e.g. ghcr.io/meshgate/meshgate:0.1.0). Each containerd reads the registry's address from a
// hosts.toml (containerd's registry config_path, the same file layout on 1.6 and 2.4): the chart's registry host is
// served by http://127.0.0.1:<port>, plain HTTP, and by nothing else, so no request leaves the namespace (the
// namespace has no route off the machine anyway). Before the scenarios, one pod per node with imagePullPolicy
// Always makes its kubelet pull the image (as an image pre-puller DaemonSet would), so no scenario waits on a pull.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CoreV1Api, type V1Pod } from '@kubernetes/client-node';
import type { ControlPlane } from '../../e2e/harness/controlplane.ts';
import { waitFor } from '../../e2e/harness/wait.ts';
import { buildImage, releaseFacts } from '../../../scripts/release.ts';
import type { ReleaseImage } from '../../../scripts/release-image.ts';
import { crane, type Registry, startRegistry } from '../../release/crane.ts';
import { MESHGATE_REF } from './images.ts';

/** The registry host of a reference (its first component when it names a host, else Docker Hub). */
export function registryHost(ref: string): string {
  const first = ref.split('/')[0];
  return ref.includes('/') && (first.includes('.') || first.includes(':') || first === 'localhost')
    ? first
    : 'docker.io';
}

/** `<host>/<repository>:<tag>` → the repository and tag within the registry. */
export function repositoryOf(ref: string): string {
  const host = registryHost(ref);
  return ref.startsWith(`${host}/`) ? ref.slice(host.length + 1) : ref;
}

/**
 * Writes `<dir>/<host>/hosts.toml` sending every pull of `host` to the plain-HTTP registry at `address`: the
 * registry as `server` (instead of https://<host>) and as the one `[host]` entry. containerd 1.6.20 refuses a file
 * with no `[host]` table ("failed to decode hosts.toml: invalid `host` tree") and then falls back to https://<host>.
 */
export function writeHostsConfig(dir: string, host: string, address: string): string {
  mkdirSync(join(dir, host), { recursive: true });
  writeFileSync(
    join(dir, host, 'hosts.toml'),
    `# ${host} is served by the run's registry (harness/registry.ts), plain HTTP on loopback, and by nothing else.\n` +
      `server = "http://${address}"\n\n[host."http://${address}"]\n  capabilities = ["pull", "resolve"]\n`,
  );
  return dir;
}

export interface TierRegistry {
  registry: Registry;
  image: ReleaseImage;
  /** containerd's registry config_path (certs.d layout) for every node. */
  hostsDir: string;
  /** Manifest requests for meshgate's image the registry answered so far (each pull asks at least once). */
  manifestPulls(): number;
}

/** Builds (or reuses) the release image, starts the registry in `runDir`, pushes the image under MESHGATE_REF. */
export async function startTierRegistry(runDir: string): Promise<TierRegistry> {
  const dir = join(runDir, 'registry');
  mkdirSync(dir, { recursive: true });
  const image = await buildImage(releaseFacts(), join(dir, 'meshgate-image'));
  const registry = await startRegistry(dir);
  const repo = repositoryOf(MESHGATE_REF);
  await crane(['push', image.layout, `${registry.address}/${repo}`, '--insecure']);
  const hostsDir = writeHostsConfig(join(dir, 'certs.d'), registryHost(MESHGATE_REF), registry.address);
  const name = repo.slice(0, repo.lastIndexOf(':'));
  return {
    registry,
    image,
    hostsDir,
    manifestPulls: () => registry.requests().filter((r) => r.startsWith(`GET /v2/${name}/manifests/`)).length,
  };
}

/**
 * One pod per node running `node -e 0` from meshgate's image with imagePullPolicy Always: each kubelet pulls it
 * through its containerd from the registry. Resolves once every pod Succeeded and is deleted; throws with the pods'
 * events when one cannot pull.
 */
export async function pullOnEveryNode(cp: ControlPlane, nodes: string[], reg: TierRegistry): Promise<void> {
  const core = cp.kc.makeApiClient(CoreV1Api);
  const before = reg.manifestPulls();
  const pod = (node: string): V1Pod => ({
    metadata: { name: `meshgate-pull-${node}`, namespace: 'default' },
    spec: {
      nodeName: node,
      restartPolicy: 'Never',
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      containers: [
        {
          name: 'pull',
          image: MESHGATE_REF,
          imagePullPolicy: 'Always',
          command: ['/nodejs/bin/node', '-e', '0'],
          securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
        },
      ],
    },
  });
  await Promise.all(nodes.map((n) => core.createNamespacedPod({ namespace: 'default', body: pod(n) })));
  const events = async () =>
    (await core.listNamespacedEvent({ namespace: 'default' })).items
      .map((e) => `${e.involvedObject?.name}: ${e.reason}: ${e.message}`)
      .join('\n');
  for (const n of nodes)
    await waitFor(
      `${n}: its kubelet pulls ${MESHGATE_REF} from the registry and runs it`,
      async () => {
        const p = await core.readNamespacedPod({ name: `meshgate-pull-${n}`, namespace: 'default' });
        if (p.status?.phase === 'Failed') throw new Error(`pod failed: ${JSON.stringify(p.status)}`);
        return p.status?.phase === 'Succeeded';
      },
      { timeoutMs: 180_000, describe: () => `events: see ${reg.registry.component.logPath}` },
    ).catch(async (err) => {
      throw new Error(`${(err as Error).message}\n${await events()}`, { cause: err });
    });
  const pulled = (await events()).split('\n').filter((l) => / Pulled: Successfully pulled image/.test(l));
  if (pulled.length < nodes.length || reg.manifestPulls() - before < nodes.length)
    throw new Error(
      `expected ${nodes.length} pulls of ${MESHGATE_REF}; kubelet events:\n${await events()}\nregistry requests: ` +
        reg.registry.requests().join(', '),
    );
  await Promise.all(
    nodes.map((n) =>
      core.deleteNamespacedPod({ name: `meshgate-pull-${n}`, namespace: 'default', gracePeriodSeconds: 0 }),
    ),
  );
  // Gone before any scenario starts watching pods.
  await waitFor('the pull pods deleted', async () =>
    (await core.listNamespacedPod({ namespace: 'default' })).items.every(
      (p) => !p.metadata?.name?.startsWith('meshgate-pull-'),
    ),
  );
}
