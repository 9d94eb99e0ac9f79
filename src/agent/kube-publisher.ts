/**
 * `NodePublisher` on the Kubernetes API (meshgate's own client, src/kube/api). Needs RBAC `get`/`patch` on `nodes`
 * and `patch` on `nodes/status`; with Leases, `get`/`create`/`update` on `leases` in meshgate's namespace.
 * The Node is written only when the verdict it says changes; the heartbeat of an unchanged verdict renews the
 * node's Lease (src/agent/node-lease.ts), which reaches only the Lease's watchers, not every Node watcher.
 * A 409 (another writer changed the Node between the read and the patches, e.g. the repair controller withdrew it
 * while the agent was making it verified) means: read again and plan again.
 * See src/agent/node-patch.ts for why the Node gets a merge patch and nodes/status a strategic one.
 */
import type { ChainVerdict } from '../cni/types.ts';
import { AccessError, inClusterAccess, kubeconfigAccess, SERVICE_ACCOUNT_DIR } from '../kube/api/access.ts';
import { KubeClient } from '../kube/api/client.ts';
import type { Node } from '../kube/api/objects.ts';
import { core } from '../kube/api/paths.ts';
import { statusCode } from '../kube/errors.ts';
import { heartbeatPatch, planPatches, type NodePatches } from './node-patch.ts';
import { observeNode, type PublishedState } from './node-state.ts';
import type { NodePublisher } from './publisher.ts';
import { NodeLease } from './node-lease.ts';

export interface LeaseOptions {
  /** meshgate's namespace, where the agents' Leases live. */
  namespace: string;
  /** What each Lease says it lasts (readers use their own bound). */
  durationSeconds: number;
}

/** Identifies meshgate's writes in managedFields. */
export const NODE_AGENT_FIELD_MANAGER = 'meshgate-node-agent';

/** A 409 means another writer changed the Node between our read and our taints patch; re-read and retry this often. */
const CONFLICT_RETRIES = 3;

export class KubeNodePublisher implements NodePublisher {
  readonly #client: KubeClient;
  readonly #now: () => Date;
  readonly #leases: LeaseOptions | undefined;
  #held: { node: string; lease: NodeLease } | undefined;

  /** `leases`: heartbeat on a Lease per node in that namespace (src/agent/node-lease.ts); else on the Node. */
  constructor(client: KubeClient, now: () => Date = () => new Date(), leases?: LeaseOptions) {
    this.#client = client;
    this.#now = now;
    this.#leases = leases;
  }

  /** From --kubeconfig when given, else the in-cluster service account. */
  static async connect(
    kubeconfigPath: string | undefined,
    env: Readonly<Record<string, string | undefined>>,
    leases?: LeaseOptions,
  ): Promise<KubeNodePublisher> {
    const access = kubeconfigPath ? await kubeconfigAccess(kubeconfigPath) : inClusterAccess(env);
    if (!access) throw new AccessError(`no service-account token in ${SERVICE_ACCOUNT_DIR}: pass --kubeconfig`);
    return new KubeNodePublisher(new KubeClient(access), undefined, leases);
  }

  #readNode(nodeName: string): Promise<Node> {
    return this.#client.get<Node>(core('nodes', { name: nodeName }));
  }

  async read(nodeName: string): Promise<PublishedState> {
    return observeNode(await this.#readNode(nodeName));
  }

  async heartbeat(nodeName: string, o: { onNode?: boolean; nodeUid?: string } = {}): Promise<void> {
    const lease = this.#lease(nodeName);
    if (lease && !o.onNode) await lease.renew(this.#now(), o.nodeUid);
    else await this.#patchStatus(nodeName, heartbeatPatch(this.#now()));
  }

  /** The node's Lease, when the publisher keeps Leases and the node's name fits one. */
  #lease(nodeName: string): NodeLease | undefined {
    const o = this.#leases;
    if (!o || !NodeLease.fits(nodeName)) return undefined;
    if (this.#held?.node !== nodeName)
      this.#held = { node: nodeName, lease: new NodeLease(this.#client, o.namespace, nodeName, o.durationSeconds) };
    return this.#held.lease;
  }

  async publish(nodeName: string, verdict: ChainVerdict, taint: boolean): Promise<PublishedState> {
    for (let attempt = 0; ; attempt++) {
      const node = await this.#readNode(nodeName);
      const patches = planPatches(node, verdict, taint, this.#now());
      try {
        if (patches.guarded) await this.#verify(nodeName, node.metadata?.resourceVersion, patches);
        else await this.#unverify(nodeName, patches);
        return patches.state;
      } catch (err) {
        if (statusCode(err) !== 409 || attempt >= CONFLICT_RETRIES) throw err;
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
  #patchNode(nodeName: string, body: object): Promise<Node> {
    const query = { fieldManager: NODE_AGENT_FIELD_MANAGER };
    return this.#client.patch<Node>(core('nodes', { name: nodeName }), 'merge', body, { query });
  }

  /** nodes/status: a strategic merge patch, so the kubelet's conditions survive next to ours. */
  #patchStatus(nodeName: string, body: object): Promise<Node> {
    const query = { fieldManager: NODE_AGENT_FIELD_MANAGER };
    return this.#client.patch<Node>(core('nodes', { name: nodeName, sub: 'status' }), 'strategic', body, { query });
  }
}
