/**
 * The node agent's liveness Lease (src/contract/node.ts): one coordination.k8s.io/v1 Lease per node in meshgate's
 * namespace, renewed once per resync, the way the kubelet renews its own in kube-node-lease. A renewal is one PUT of
 * the Lease as last written (its resourceVersion a precondition); a 409 or 404 (someone changed or deleted it, the
 * garbage collector after the Node was replaced) reads it again or creates it. The Lease names its Node as owner,
 * so it goes with the Node. RBAC: get, create, update on leases in meshgate's namespace; the chart's admission
 * policy (node-lease-policy.yaml) lets the agent write only its own node's Lease, and nobody else write it.
 */
import type { KubeClient } from '../kube/api/client.ts';
import type { Lease } from '../kube/api/objects.ts';
import { group } from '../kube/api/paths.ts';
import { statusCode } from '../kube/errors.ts';
import { NODE_LEASE_LABEL, nodeLeaseName } from '../contract/node.ts';

/** MicroTime as the apiserver parses it: RFC 3339 with exactly six fractional digits. */
const microTime = (d: Date) => d.toISOString().replace('Z', '000Z');

export class NodeLease {
  readonly #client: KubeClient;
  readonly #namespace: string;
  readonly #node: string;
  readonly #name: string;
  readonly #durationSeconds: number;
  /** The Lease as last written or read; undefined: read it (or create it) before the next write. */
  #held: Lease | undefined;

  /**
   * @param durationSeconds what the Lease says it lasts: readers use their own bound (cni.maxVerdictAgeSeconds),
   *   this is for people reading it.
   */
  constructor(client: KubeClient, namespace: string, node: string, durationSeconds: number) {
    const name = nodeLeaseName(node);
    if (name === undefined) throw new Error(`node name ${node} is too long for a Lease name`);
    this.#client = client;
    this.#namespace = namespace;
    this.#node = node;
    this.#name = name;
    this.#durationSeconds = durationSeconds;
  }

  /** Whether a node's name fits a Lease name (else the agent heartbeats on the Node's condition). */
  static fits(node: string): boolean {
    return nodeLeaseName(node) !== undefined;
  }

  get name(): string {
    return this.#name;
  }

  /** Renews the Lease at `now`; `nodeUid` (the Node as last read) makes the Node its owner. */
  async renew(now: Date, nodeUid: string | undefined): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      const held = this.#held ?? (await this.#read());
      const next = this.#body(now, nodeUid, held);
      try {
        this.#held = held
          ? await this.#client.update<Lease>(this.#path(), next)
          : await this.#client.create<Lease>(this.#collection(), next);
        return;
      } catch (err) {
        this.#held = undefined;
        const code = statusCode(err);
        // Changed, deleted or created by someone since it was read: read it again, once.
        if ((code !== 409 && code !== 404) || attempt >= 1) throw err;
      }
    }
  }

  async #read(): Promise<Lease | undefined> {
    try {
      return await this.#client.get<Lease>(this.#path());
    } catch (err) {
      if (statusCode(err) === 404) return undefined;
      throw err;
    }
  }

  #body(now: Date, nodeUid: string | undefined, held: Lease | undefined): Lease {
    const owners = nodeUid
      ? [{ apiVersion: 'v1', kind: 'Node', name: this.#node, uid: nodeUid }]
      : held?.metadata?.ownerReferences;
    return {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: {
        name: this.#name,
        namespace: this.#namespace,
        resourceVersion: held?.metadata?.resourceVersion,
        labels: { ...held?.metadata?.labels, [NODE_LEASE_LABEL]: 'true' },
        ...(owners ? { ownerReferences: owners } : {}),
      },
      spec: {
        holderIdentity: this.#node,
        leaseDurationSeconds: this.#durationSeconds,
        renewTime: microTime(now),
      },
    };
  }

  #collection(): string {
    return group('coordination.k8s.io/v1', 'leases', { namespace: this.#namespace });
  }

  #path(): string {
    return group('coordination.k8s.io/v1', 'leases', { namespace: this.#namespace, name: this.#name });
  }
}
