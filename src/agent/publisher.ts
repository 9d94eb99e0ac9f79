/**
 * Where the agent's verdicts go. The agent logic depends only on this interface, so its tests use a small
 * hand-written fake; src/agent/kube-publisher.ts writes to the Kubernetes API.
 */
import type { ChainVerdict } from '../cni/types.ts';
import type { PublishedState } from './node-state.ts';

export interface NodePublisher {
  /** What the Node says now (only meshgate's label/condition/annotation/taint). Throws when it cannot be read. */
  read(nodeName: string): Promise<PublishedState>;
  /**
   * Makes the Node say `verdict`. `taint`: whether the unverified taint is wanted while unverified
   * (--taint-unverified); when false, a leftover meshgate taint is removed. A quarantine mark on the Node overrules
   * a verified verdict (src/node/quarantine.ts). Returns what the Node says afterwards (undefined: what the verdict
   * makes it say, under the mark the agent last read). Throws when the write failed.
   */
  publish(nodeName: string, verdict: ChainVerdict, taint: boolean): Promise<PublishedState | undefined>;
  /**
   * Says the verdict on the Node still stands: readers treat a verdict whose heartbeat is older than their bound as
   * stale (an agent that died publishes nothing more). Renews the node's Lease (src/contract/node.ts) where the
   * publisher keeps one, else — and with `onNode` (while quarantined: the repair controller reads the condition's
   * heartbeat to see the agent re-verified) — refreshes only the MeshCNIVerified condition's lastHeartbeatTime.
   * `nodeUid`: the Node as last read (the Lease's owner).
   */
  heartbeat(nodeName: string, o?: { onNode?: boolean; nodeUid?: string }): Promise<void>;
}
