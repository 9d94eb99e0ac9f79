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
   * (--taint-unverified); when false, a leftover meshgate taint is removed. Throws when the write failed.
   */
  publish(nodeName: string, verdict: Verdict, taint: boolean): Promise<void>;
}
