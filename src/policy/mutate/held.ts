/**
 * Pods meshgate holds Pending on purpose, and what to do about them (issue 23 §5). A pod meshgate put in CNI mode
 * carries a required node affinity to verified nodes (label meshgate.io/cni-verified=true): a DaemonSet's pod for an
 * unverified node waits until that node is verified (`node_unverified_wait`), any other pod until a verified node
 * fits it (`affinity_verified`, `mode_required`, `cni_only`). The scheduler's own Event says only "didn't match Pod's
 * node affinity/selector"; this says why and what to do, for the repair controller's Event and `meshgate check`.
 * Read from the pod as the API returns it (status, meshgate's status annotation): pure.
 */
import { NODE_VERIFIED_LABEL } from '../../contract/names.ts';
import { readStatus } from '../status.ts';

export interface Held {
  /** The reason meshgate recorded when it pinned the pod. */
  reason: string;
  /** A DaemonSet's pod: the one node it waits for. */
  node?: string;
  /** What the scheduler said (the PodScheduled condition's message). */
  scheduler?: string;
}

interface RawPod {
  metadata?: { annotations?: Record<string, string> };
  spec?: { nodeName?: string };
  status?: {
    phase?: string;
    conditions?: Array<{ type?: string; status?: string; reason?: string; message?: string }>;
  };
}

/** Whether meshgate's affinity holds this pod Pending: unscheduled, in CNI mode with the affinity, unschedulable. */
export function heldPending(pod: unknown): Held | undefined {
  const p = pod as RawPod | undefined;
  if (p?.status?.phase !== 'Pending' || p.spec?.nodeName) return undefined;
  const status = readStatus(p.metadata?.annotations);
  if (!status || 'error' in status || status.mode !== 'cni' || !status.affinity) return undefined;
  const scheduled = p.status.conditions?.find((c) => c.type === 'PodScheduled');
  if (scheduled?.status !== 'False' || scheduled.reason !== 'Unschedulable') return undefined;
  return { reason: status.reason, node: status.node, scheduler: scheduled.message };
}

/** What the pod waits for and what to do, in one message (an Event's, a check item's). */
export function heldMessage(h: Held): string {
  const scheduler = h.scheduler ? ` The scheduler says: ${h.scheduler}` : '';
  if (h.node) {
    return (
      `meshgate holds this pod Pending: it is pinned to node ${h.node} (a DaemonSet's pod), whose CNI chain is not ` +
      `verified, and runs there once the node's meshgate agent verifies it [${h.reason}]. To do: see why with ` +
      `\`kubectl get node ${h.node} -L ${NODE_VERIFIED_LABEL}\` and \`meshgate check\` (nodes), fix the node's CNI ` +
      'chain or its node agent; nothing needs restarting.' +
      scheduler
    );
  }
  return (
    'meshgate holds this pod Pending: it runs without a privileged init container, redirected by the mesh CNI ' +
    `plugin, so it is pinned to nodes with a verified CNI chain (${NODE_VERIFIED_LABEL}=true), and the scheduler ` +
    `found none it may use [${h.reason}]. To do: see which nodes are verified with \`kubectl get nodes -L ` +
    `${NODE_VERIFIED_LABEL}\` and why others are not with \`meshgate check\`; the pod is scheduled as soon as a ` +
    'verified node fits it.' +
    scheduler
  );
}
