/**
 * `NodePublisher` on the Kubernetes API (@kubernetes/client-node 2.x). Needs RBAC `get`/`patch` on `nodes` and
 * `patch` on `nodes/status`.
 *
 * client-node 2.x picks the first patch content type of the OpenAPI list (application/json-patch+json) unless a
 * request option overrides the header: `setHeaderOptions('Content-Type', PatchStrategy.…)` adds a middleware
 * that does. See src/agent/node-patch.ts for why the Node gets a merge patch and nodes/status a strategic one.
 */
import { ApiException, CoreV1Api, KubeConfig, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import type { Verdict } from '../cni/types.ts';
import { planPatches } from './node-patch.ts';
import { observeNode, type PublishedState } from './node-state.ts';
import type { NodePublisher } from './publisher.ts';

/** Identifies meshgate's writes in managedFields. */
export const FIELD_MANAGER = 'meshgate-node-agent';

/** A 409 means another writer changed the Node between our read and our taints patch; re-read and retry this often. */
const CONFLICT_RETRIES = 3;

export class KubeNodePublisher implements NodePublisher {
  readonly #api: CoreV1Api;
  readonly #now: () => Date;

  constructor(kubeConfig: KubeConfig, now: () => Date = () => new Date()) {
    this.#api = kubeConfig.makeApiClient(CoreV1Api);
    this.#now = now;
  }

  /** From --kubeconfig when given, else the in-cluster service account. */
  static fromFlags(kubeconfigPath: string | undefined): KubeNodePublisher {
    const kc = new KubeConfig();
    if (kubeconfigPath) kc.loadFromFile(kubeconfigPath);
    else kc.loadFromCluster();
    return new KubeNodePublisher(kc);
  }

  async read(nodeName: string): Promise<PublishedState> {
    return observeNode(await this.#api.readNode({ name: nodeName }));
  }

  async publish(nodeName: string, verdict: Verdict, taint: boolean): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      const node = await this.#api.readNode({ name: nodeName });
      const patches = planPatches(node, verdict, taint, this.#now());
      try {
        // The Node first: the label is what caches select on, and it must not lag behind the condition.
        await this.#api.patchNode(
          { name: nodeName, body: patches.node, fieldManager: FIELD_MANAGER },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        );
        await this.#api.patchNodeStatus(
          { name: nodeName, body: patches.status, fieldManager: FIELD_MANAGER },
          setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
        );
        return;
      } catch (err) {
        if (!(err instanceof ApiException && err.code === 409) || attempt >= CONFLICT_RETRIES) throw err;
      }
    }
  }
}
