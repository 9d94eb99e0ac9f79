/**
 * Where the agent's verdicts go. The agent logic depends only on this interface, so its tests use a small
 * hand-written fake; src/agent/kube-publisher.ts writes to the Kubernetes API.
 */
import type { Verdict } from '../cni/types.ts';
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
  publish(nodeName: string, verdict: Verdict, taint: boolean): Promise<PublishedState | undefined>;
  /**
   * Refreshes only the MeshCNIVerified condition's lastHeartbeatTime: the verdict still stands. Readers treat a
   * verdict whose heartbeat is older than their bound as stale (an agent that died publishes nothing more).
   */
  heartbeat(nodeName: string): Promise<void>;
}
