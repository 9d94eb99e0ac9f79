/**
 * A node's fact as its Node object says it (pure): the node agent's published verdict, read as the admission path
 * trusts it (src/facts/node-facts.ts says why), and its age. Shared by the webhook's node cache, `meshgate check`
 * and `explain`; the store of facts is in node-facts.ts, which re-exports these.
 */
import { meaningsOf } from '../contract/codes/entry.ts';
import { NODE_CODES } from '../contract/codes/index.ts';
import {
  CONDITION_TYPE,
  EVIDENCE_ANNOTATION,
  VERIFIED_LABEL,
  verdictCondition,
  type VerdictNode,
} from '../contract/node.ts';
import { parseRuntimeVersion } from '../cni/runtime-version.ts';
import { describeMark, QUARANTINE_ANNOTATION, QUARANTINE_REASON, readMark } from '../node/quarantine.ts';

export interface NodeFact {
  name: string;
  verified: boolean;
  /** Stable code from the node agent (condition reason), or why meshgate does not trust the node. */
  reason: string;
  message: string;
  kubeletVersion?: string;
  /**
   * The Node's `status.nodeInfo.containerRuntimeVersion` ("containerd://2.4.2"): how its runtime reads a pod's
   * capabilities (src/pod/capabilities.ts).
   */
  runtimeVersion?: string;
  /**
   * When the agent last stood by a verified verdict (the condition's lastHeartbeatTime; the store also reads the
   * agent's Lease), ms since the epoch.
   */
  heartbeatAt?: number;
}

/**
 * Why a node is not verified, besides the agent's own reason codes (src/cni/reasons.ts): each code's sentence, from
 * the catalogue (src/contract/codes/webhook.ts).
 */
export const NODE_REASONS = meaningsOf(NODE_CODES);

/** What a verdict must say to count: the mesh plugin meshgate is configured for. */
export interface NodeExpectations {
  pluginType: string;
  /** A verified verdict older than this (by its heartbeat) is stale. */
  maxVerdictAgeMs: number;
}

/** The expectations the configured CNI section sets (config.cni: its plugin type and maximum verdict age). */
export function expectationsOf(cni: { pluginType: string; maxVerdictAgeSeconds: number }): NodeExpectations {
  return { pluginType: cni.pluginType, maxVerdictAgeMs: cni.maxVerdictAgeSeconds * 1000 };
}

/**
 * The fact as time passes: a verified one whose heartbeat (`beat`: the fact's own, or a later one the agent's Lease
 * gave) is too old becomes `stale_verdict`.
 */
export function aged(f: NodeFact, maxAgeMs: number, now: number, beat = f.heartbeatAt): NodeFact {
  if (!f.verified || (beat !== undefined && now - beat <= maxAgeMs)) return f;
  const seen = beat === undefined ? 'no heartbeat' : `last heartbeat ${Math.round((now - beat) / 1000)} s ago`;
  return {
    name: f.name,
    verified: false,
    reason: 'stale_verdict',
    message: `${NODE_REASONS.stale_verdict} (${seen})`,
    kubeletVersion: f.kubeletVersion,
    ...(f.runtimeVersion ? { runtimeVersion: f.runtimeVersion } : {}),
    heartbeatAt: beat,
  };
}

/**
 * A node is verified only by the node agent's published verdict: the MeshCNIVerified condition True (nodes/status,
 * restricted by the chart's admission policy to the agent of that node), its evidence naming the configured mesh
 * plugin, and the scheduling label agreeing. A label alone — which a kubelet sets at registration and anyone with
 * node patch can set — never counts. A quarantine mark (src/node/quarantine.ts) unverifies a node whatever else it
 * says.
 */
export function factFromNode(
  node: VerdictNode,
  expect: NodeExpectations,
  now = Date.now(),
  leaseAt?: number,
): NodeFact {
  const f = judgeNode(node, expect);
  return aged(f, expect.maxVerdictAgeMs, now, laterBeat(f.heartbeatAt, leaseAt));
}

/** The later of two heartbeats (the condition's, the Lease's), either possibly unknown. */
export function laterBeat(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined ? b : b === undefined ? a : Math.max(a, b);
}

/**
 * The fact as the Node says it, before its age is judged (the store ages it, with the Lease's heartbeat):
 * factFromNode's rules without the clock.
 */
export function judgeNode(node: VerdictNode, expect: Pick<NodeExpectations, 'pluginType'>): NodeFact {
  const name = node.metadata?.name ?? '';
  const label = node.metadata?.labels?.[VERIFIED_LABEL];
  const { condition: cond, heartbeatAt } = verdictCondition(node);
  const kubeletVersion = shared(node.status?.nodeInfo?.kubeletVersion);
  const runtimeVersion = shared(node.status?.nodeInfo?.containerRuntimeVersion || undefined);
  const versions = runtimeVersion ? { kubeletVersion, runtimeVersion } : { kubeletVersion };
  const no = (reason: keyof typeof NODE_REASONS, detail?: string): NodeFact => ({
    name,
    verified: false,
    reason,
    message: detail ? `${NODE_REASONS[reason]} (${detail})` : NODE_REASONS[reason],
    ...versions,
  });
  if (!cond)
    return label === undefined ? no('not_published') : no('condition_missing', `label ${VERIFIED_LABEL}=${label}`);
  if (cond.status !== 'True') {
    return {
      name,
      verified: false,
      reason: shared(cond.reason || 'condition_false'),
      message: shared(cond.message || `condition ${CONDITION_TYPE} is ${cond.status}`),
      ...versions,
    };
  }
  // The repair controller's withdrawal (src/node/quarantine.ts) overrules a True condition until it gives the node
  // back.
  const mark = readMark(node.metadata?.annotations?.[QUARANTINE_ANNOTATION]);
  if (mark) return { name, verified: false, reason: QUARANTINE_REASON, message: describeMark(mark), ...versions };
  if (label !== 'true')
    return no('label_mismatch', `label is ${label === undefined ? 'absent' : `"${label}"`}, the condition True`);
  let evidence: { pluginType?: unknown; runtime?: unknown; libcni?: unknown; runtimeVersion?: unknown } | null;
  try {
    evidence = JSON.parse(node.metadata?.annotations?.[EVIDENCE_ANNOTATION] ?? '');
  } catch {
    return no('evidence_missing');
  }
  const pluginType = evidence?.pluginType;
  if (typeof pluginType !== 'string') return no('evidence_missing');
  if (pluginType !== expect.pluginType)
    return no('plugin_mismatch', `verified for ${pluginType}, configured for ${expect.pluginType}`);
  const changed = runtimeChange(evidence, node.status?.nodeInfo?.containerRuntimeVersion);
  if (changed) return no('runtime_changed', changed);
  return {
    name,
    verified: true,
    reason: shared(cond.reason || 'verified'),
    message: shared(cond.message || 'verified'),
    ...versions,
    heartbeatAt,
  };
}

/**
 * Strings thousands of facts hold alike (a kubelet version, the agent's reason and message): one copy each instead
 * of the one per Node that parsing its JSON makes. Bounded: past SHARED_MAX distinct values, values are kept as
 * they come (a message that names its node is no use to share).
 */
const SHARED_MAX = 4096;
const sharedStrings = new Map<string, string>();
function shared<T extends string | undefined>(s: T): T {
  if (s === undefined) return s;
  const held = sharedStrings.get(s);
  if (held !== undefined) return held as T;
  if (sharedStrings.size < SHARED_MAX) sharedStrings.set(s, s);
  return s;
}

/**
 * A verdict judged by the libcni line of the runtime version it names (evidence `libcni`, `runtimeVersion`) no
 * longer holds once the Node reports a runtime of another line: the kubelet updates nodeInfo when the runtime is
 * upgraded in place, sooner than the agent's next resync. A verdict judged by every line ("all") or by a line named
 * by flag (no `runtimeVersion`) holds for any runtime.
 */
function runtimeChange(
  evidence: { runtime?: unknown; libcni?: unknown; runtimeVersion?: unknown } | null,
  reported: string | undefined,
): string | undefined {
  const { runtime, libcni, runtimeVersion } = evidence ?? {};
  if (typeof runtimeVersion !== 'string' || typeof libcni !== 'string' || libcni === 'all') return undefined;
  if (!reported || reported === runtimeVersion) return undefined;
  const now = parseRuntimeVersion(reported);
  if (now.line === libcni && now.runtime === runtime) return undefined;
  const line = now.line ? `libcni ${now.line}` : 'libcni line unknown';
  return `verified under ${runtimeVersion} (libcni ${libcni}), the node reports ${reported} (${line})`;
}
