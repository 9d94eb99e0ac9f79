/**
 * The refusals the real-workload corpus may show under meshgate's defaults (issue 31 §3): each a truly unsafe shape,
 * with why. Any other refusal fails test/corpus/corpus.test.ts, and so does an entry here that no longer happens.
 */
import type { ReasonCode } from '../../src/contract/reasons.ts';
import type { CorpusMesh } from './sources.ts';

export interface ListedRefusal {
  source: string;
  workload: string;
  /** The meshes it is refused under (all three unless said). */
  meshes?: readonly CorpusMesh[];
  reason: ReasonCode;
  why: string;
}

const HOST_NETWORK =
  "a hostNetwork DaemonSet (the node exporter reads the node): its traffic is the node's, which no proxy can " +
  'redirect; it belongs in a namespace meshgate does not guard';

export const EXPECTED_REFUSALS: readonly ListedRefusal[] = [
  {
    source: 'prometheus',
    workload: 'DaemonSet/prometheus-prometheus-node-exporter',
    reason: 'host_network',
    why: HOST_NETWORK,
  },
  {
    source: 'kube-prometheus-stack',
    workload: 'DaemonSet/kube-prometheus-stack-prometheus-node-exporter',
    reason: 'host_network',
    why: HOST_NETWORK,
  },
];
