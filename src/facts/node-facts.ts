/**
 * What the admission path knows about nodes: a verdict per node and the kubelet version, kept in memory and
 * fed by a watch (kube/node-cache.ts) or a static file (facts/node-state.ts). Lookups are O(1); the aggregate
 * questions the decision core asks ("is any node verified?", "do all kubelets support native sidecars?") are
 * answered from counters kept up to date on every change, never by scanning 5,000 nodes per review.
 */
import { NATIVE_SIDECAR_MIN_MINOR } from '../contract/names.ts';
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
  /** When the agent last stood by a verified verdict (the condition's lastHeartbeatTime), ms since the epoch. */
  heartbeatAt?: number;
}

export interface NodeFacts {
  get(name: string): NodeFact | undefined;
  anyVerified(): boolean;
  /** Whether every node (or every verified node) runs a kubelet with native sidecars; undefined if none known. */
  nativeSidecars(scope: 'all' | 'verified'): boolean | undefined;
  synced(): boolean;
  size(): number;
  /**
   * Every node's fact, for the metrics' counts by reason at scrape time (server/metrics.ts); never on the admission
   * path.
   */
  facts(): Iterable<NodeFact>;
}

/** kubelet minor version, e.g. "v1.34.1" → 34; undefined when unparsable (treated as not supporting). */
export function kubeletMinor(version: string | undefined): number | undefined {
  const m = /^v?1\.(\d+)/.exec(version ?? '');
  return m ? Number(m[1]) : undefined;
}

export function supportsNativeSidecars(version: string | undefined): boolean {
  const minor = kubeletMinor(version);
  return minor !== undefined && minor >= NATIVE_SIDECAR_MIN_MINOR;
}

/** Why a node is not verified, besides the agent's own reason codes (src/cni/reasons.ts). */
export const NODE_REASONS = {
  not_published: 'the node agent has not published a verdict for this node',
  condition_missing:
    `the node carries label ${VERIFIED_LABEL} but no ${CONDITION_TYPE} condition: ` +
    'a label alone (which others can set) never verifies a node',
  label_mismatch: `label ${VERIFIED_LABEL} contradicts the ${CONDITION_TYPE} condition`,
  evidence_missing: `the verdict has no readable evidence (annotation ${EVIDENCE_ANNOTATION})`,
  plugin_mismatch: 'the node was verified for another mesh CNI plugin than the one meshgate is configured for',
  runtime_changed:
    "the node was verified for its container runtime's libcni line, and the node now reports a runtime whose line " +
    'differs (upgraded in place?): unverified until the node agent judges it again',
  stale_verdict:
    'the node agent has not re-confirmed its verdict for longer than cni.maxVerdictAgeSeconds (is it running?)',
  node_not_found: 'the node is not known to meshgate (no Node object in its cache)',
  [QUARANTINE_REASON]:
    "the meshgate repair controller withdrew the node's verification after redirect validation failed for pods on it " +
    `(annotation ${QUARANTINE_ANNOTATION})`,
} as const;

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

/** The fact as time passes: a verified one whose heartbeat is too old becomes `stale_verdict`. */
export function aged(f: NodeFact, maxAgeMs: number, now: number): NodeFact {
  if (!f.verified || (f.heartbeatAt !== undefined && now - f.heartbeatAt <= maxAgeMs)) return f;
  const seen =
    f.heartbeatAt === undefined ? 'no heartbeat' : `last heartbeat ${Math.round((now - f.heartbeatAt) / 1000)} s ago`;
  return {
    name: f.name,
    verified: false,
    reason: 'stale_verdict',
    message: `${NODE_REASONS.stale_verdict} (${seen})`,
    kubeletVersion: f.kubeletVersion,
    heartbeatAt: f.heartbeatAt,
  };
}

/**
 * A node is verified only by the node agent's published verdict: the MeshCNIVerified condition True (nodes/status,
 * restricted by the chart's admission policy to the agent of that node), its evidence naming the configured mesh
 * plugin, and the scheduling label agreeing. A label alone — which a kubelet sets at registration and anyone with
 * node patch can set — never counts. A quarantine mark (src/node/quarantine.ts) unverifies a node whatever else it
 * says.
 */
export function factFromNode(node: VerdictNode, expect: NodeExpectations, now = Date.now()): NodeFact {
  const name = node.metadata?.name ?? '';
  const label = node.metadata?.labels?.[VERIFIED_LABEL];
  const { condition: cond, heartbeatAt } = verdictCondition(node);
  const kubeletVersion = node.status?.nodeInfo?.kubeletVersion;
  const runtimeVersion = node.status?.nodeInfo?.containerRuntimeVersion || undefined;
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
      reason: cond.reason || 'condition_false',
      message: cond.message || `condition ${CONDITION_TYPE} is ${cond.status}`,
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
  const fact = {
    name,
    verified: true,
    reason: cond.reason || 'verified',
    message: cond.message || 'verified',
    ...versions,
    heartbeatAt,
  };
  return aged(fact, expect.maxVerdictAgeMs, now);
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

/** The in-memory store behind every NodeFacts source. */
export class NodeFactStore implements NodeFacts {
  #facts = new Map<string, NodeFact>();
  #verified = 0;
  #oldKubelets = 0;
  #oldVerifiedKubelets = 0;
  #synced = false;

  #count(f: NodeFact, sign: 1 | -1): void {
    const old = !supportsNativeSidecars(f.kubeletVersion);
    if (f.verified) this.#verified += sign;
    if (old) this.#oldKubelets += sign;
    if (old && f.verified) this.#oldVerifiedKubelets += sign;
  }

  upsert(f: NodeFact): void {
    const prev = this.#facts.get(f.name);
    if (prev) this.#count(prev, -1);
    this.#facts.set(f.name, f);
    this.#count(f, 1);
  }

  delete(name: string): void {
    const prev = this.#facts.get(name);
    if (!prev) return;
    this.#count(prev, -1);
    this.#facts.delete(name);
  }

  replaceAll(facts: Iterable<NodeFact>): void {
    this.#facts.clear();
    this.#verified = this.#oldKubelets = this.#oldVerifiedKubelets = 0;
    for (const f of facts) this.upsert(f);
  }

  /**
   * Re-judges the verified facts by age: a node whose agent stopped heartbeating gets no watch event, so the
   * cache ages its facts itself (O(verified nodes), every few seconds).
   */
  expireStale(maxAgeMs: number, now: number): number {
    let expired = 0;
    for (const f of this.#facts.values()) {
      if (!f.verified) continue;
      const a = aged(f, maxAgeMs, now);
      if (a !== f) {
        this.upsert(a);
        expired++;
      }
    }
    return expired;
  }

  markSynced(): void {
    this.#synced = true;
  }

  get(name: string): NodeFact | undefined {
    return this.#facts.get(name);
  }

  anyVerified(): boolean {
    return this.#verified > 0;
  }

  nativeSidecars(scope: 'all' | 'verified'): boolean | undefined {
    if (scope === 'all') return this.#facts.size === 0 ? undefined : this.#oldKubelets === 0;
    return this.#verified === 0 ? undefined : this.#oldVerifiedKubelets === 0;
  }

  synced(): boolean {
    return this.#synced;
  }

  size(): number {
    return this.#facts.size;
  }

  facts(): Iterable<NodeFact> {
    return this.#facts.values();
  }
}
