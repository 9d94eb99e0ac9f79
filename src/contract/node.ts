/**
 * The names on a Node through which the node agent publishes its verdict, defined once for every writer and
 * reader (the agent, the webhook's node cache, the repair controller, the chart's policies and affinity):
 * - label      `meshgate.io/cni-verified`: "true" | "false" — for scheduling only (anyone with node patch, and a
 *              kubelet at registration, can set labels: a label alone never verifies a node)
 * - condition  `MeshCNIVerified` on nodes/status: status "True"/"False", reason = the verdict's code — the verdict
 * - annotation `meshgate.io/cni-evidence`: the verdict's evidence (file, chain, plugin type) as compact JSON
 * - taint      `meshgate.io/cni-unverified:NoSchedule` while unverified (optional)
 * The chart's ValidatingAdmissionPolicy lets only the node agent (for its own Node) and the repair controller
 * (only to withdraw) change any of them.
 */
export const VERIFIED_LABEL = 'meshgate.io/cni-verified';
export const CONDITION_TYPE = 'MeshCNIVerified';
export const EVIDENCE_ANNOTATION = 'meshgate.io/cni-evidence';
export const UNVERIFIED_TAINT = { key: 'meshgate.io/cni-unverified', effect: 'NoSchedule' } as const;

/** The agent's condition as a Node carries it (client-node's V1NodeCondition fits). */
export interface VerdictCondition {
  type?: string;
  status?: string;
  reason?: string;
  message?: string;
  lastHeartbeatTime?: string | Date;
}

/** The parts of a Node the verdict's readers look at (client-node's V1Node fits). */
export interface VerdictNode {
  metadata?: { name?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  status?: {
    conditions?: VerdictCondition[];
    nodeInfo?: { kubeletVersion?: string; containerRuntimeVersion?: string };
  };
}

/** The node's MeshCNIVerified condition, and its heartbeat in ms since the epoch (absent or unreadable: undefined). */
export function verdictCondition(node: VerdictNode): { condition?: VerdictCondition; heartbeatAt?: number } {
  const condition = node.status?.conditions?.find((c) => c.type === CONDITION_TYPE);
  const beat = condition?.lastHeartbeatTime === undefined ? NaN : new Date(condition.lastHeartbeatTime).getTime();
  return { condition, heartbeatAt: Number.isNaN(beat) ? undefined : beat };
}
