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
/**
 * The repair controller's withdrawal of a node's verification (src/node/quarantine.ts says what it holds and who
 * reads it): here because the node codes' sentences name it (src/contract/codes/webhook.ts).
 */
export const QUARANTINE_ANNOTATION = 'meshgate.io/cni-quarantine';

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

/**
 * The node agent's liveness: a coordination.k8s.io Lease per node in meshgate's namespace, as the kubelet's own
 * heartbeat moved from the Node to a Lease (KEP-589). The agent renews it once per resync; its renewTime is the
 * heartbeat readers age a verified verdict by (the later of it and the condition's lastHeartbeatTime). Renewing a
 * Lease costs the apiserver less than a nodes/status patch and reaches only the Lease watchers, instead of sending
 * the whole Node (~9 KB) to every Node watcher of the cluster (issue 32). Named NODE_LEASE_PREFIX + the node's name
 * and labelled NODE_LEASE_LABEL (readers select by the label and trust only the name); the chart's admission policy
 * lets only the agent of that node create or renew it. A node whose name is too long for the prefix
 * (nodeLeaseName: undefined) keeps the heartbeat on the condition.
 */
export const NODE_LEASE_PREFIX = 'meshgate-node-';
export const NODE_LEASE_LABEL = 'meshgate.io/node-lease';
/** Object names are DNS subdomains: at most 253 characters. */
const MAX_NAME = 253;

export function nodeLeaseName(node: string): string | undefined {
  const name = `${NODE_LEASE_PREFIX}${node}`;
  return node && name.length <= MAX_NAME ? name : undefined;
}

/** What a reader of a node agent's Lease needs: its name and when it was last renewed (RFC 3339, as the API has it). */
export interface LeaseRenewal {
  metadata?: { name?: string };
  spec?: { renewTime?: string };
}

/** A Lease's renewal as ms since the epoch; undefined when it has none or it is unreadable. */
export function renewedAt(lease: LeaseRenewal): number | undefined {
  const t = lease.spec?.renewTime ? Date.parse(lease.spec.renewTime) : Number.NaN;
  return Number.isNaN(t) ? undefined : t;
}

/** The node a Lease speaks for, from its name; undefined for any other Lease. */
export function leaseNode(leaseName: string | undefined): string | undefined {
  return leaseName?.startsWith(NODE_LEASE_PREFIX) && leaseName.length > NODE_LEASE_PREFIX.length
    ? leaseName.slice(NODE_LEASE_PREFIX.length)
    : undefined;
}
