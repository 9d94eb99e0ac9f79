/**
 * `NodePublisher` on the Kubernetes API (@kubernetes/client-node 2.x). Needs RBAC `get`/`patch` on `nodes` and
 * `patch` on `nodes/status`.
 * A 409 (another writer changed the Node between the read and the patches, e.g. the repair controller withdrew it
 * while the agent was making it verified) means: read again and plan again.
 *
 * client-node 2.x picks the first patch content type of the OpenAPI list (application/json-patch+json) unless a
 * request option overrides the header: `setHeaderOptions('Content-Type', PatchStrategy.…)` adds a middleware
 * that does. See src/agent/node-patch.ts for why the Node gets a merge patch and nodes/status a strategic one.
 */
import {
  ApiException,
  CoreV1Api,
  KubeConfig,
  PatchStrategy,
  setHeaderOptions,
  type V1Node,
} from '@kubernetes/client-node';
import type { Verdict } from '../cni/types.ts';
import { heartbeatPatch, planPatches, type NodePatches } from './node-patch.ts';
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

  async heartbeat(nodeName: string): Promise<void> {
    await this.#patchStatus(nodeName, heartbeatPatch(this.#now()));
  }

  async publish(nodeName: string, verdict: Verdict, taint: boolean): Promise<PublishedState> {
    for (let attempt = 0; ; attempt++) {
      const node = await this.#api.readNode({ name: nodeName });
      const patches = planPatches(node, verdict, taint, this.#now());
      try {
        if (patches.guarded) await this.#verify(nodeName, node.metadata?.resourceVersion, patches);
        else await this.#unverify(nodeName, patches);
        return patches.state;
      } catch (err) {
        if (!(err instanceof ApiException && err.code === 409) || attempt >= CONFLICT_RETRIES) throw err;
      }
    }
  }

  /**
   * Making (or keeping) the node verified: the condition first, then the label, each write carrying the
   * resourceVersion of the one before, so nobody (the repair controller withdrawing the node) changed it meanwhile.
   * The label comes last because it is what wakes others: the DaemonSet controller creates a pod when a Node's
   * labels change, and that pod must find the condition already True in the webhook's cache (real-node S7).
   */
  async #verify(nodeName: string, resourceVersion: string | undefined, patches: NodePatches): Promise<void> {
    const status = await this.#patchStatus(nodeName, { ...patches.status, metadata: { resourceVersion } });
    const metadata = { ...(patches.node.metadata as object), resourceVersion: status.metadata?.resourceVersion };
    await this.#patchNode(nodeName, { ...patches.node, metadata });
  }

  /** Making the node unverified: the label first, so schedulers and caches stop choosing it at once. */
  async #unverify(nodeName: string, patches: NodePatches): Promise<void> {
    await this.#patchNode(nodeName, patches.node);
    await this.#patchStatus(nodeName, patches.status);
  }

  /** The Node itself (labels, annotations, taints): a JSON merge patch. */
  #patchNode(nodeName: string, body: object): Promise<V1Node> {
    return this.#api.patchNode(
      { name: nodeName, body, fieldManager: FIELD_MANAGER },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
  }

  /** nodes/status: a strategic merge patch, so the kubelet's conditions survive next to ours. */
  #patchStatus(nodeName: string, body: object): Promise<V1Node> {
    return this.#api.patchNodeStatus(
      { name: nodeName, body, fieldManager: FIELD_MANAGER },
      setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
    );
  }
}
