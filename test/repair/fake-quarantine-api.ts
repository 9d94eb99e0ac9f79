/**
 * A hand-written QuarantineApi for the node quarantine's unit tests: Nodes as the apiserver would hold them after
 * the real patches (the mark and history annotations, label, condition, taints), probe pods whose verdict the test
 * sets, and a record of every write and Event. The node agent is played by `agentVerifies`.
 */
import { CONDITION_TYPE, UNVERIFIED_TAINT, VERIFIED_LABEL } from '../../src/contract/node.ts';
import {
  describeMark,
  QUARANTINE_ANNOTATION,
  QUARANTINE_HISTORY_ANNOTATION,
  QUARANTINE_REASON,
  writeHistory,
  writeMark,
} from '../../src/node/quarantine.ts';
import { nodeView, type NodeView } from '../../src/repair/quarantine/node-view.ts';
import type { ProbeResult } from '../../src/repair/quarantine/probe-pod.ts';
import type { ProbeView } from '../../src/repair/quarantine/decide.ts';
import type { QuarantineApi } from '../../src/repair/quarantine/quarantine.ts';

interface FakeNode {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  taints: Array<{ key: string; effect: string }>;
  condition: { status: string; reason: string; message: string; heartbeatAt: number };
  rv: number;
}

export class FakeQuarantineApi implements QuarantineApi {
  readonly nodes = new Map<string, FakeNode>();
  readonly probes = new Map<string, ProbeView>();
  readonly calls: string[] = [];
  readonly events: Array<{ node: string; type: string; reason: string; message: string }> = [];
  #rv = 1;
  /** The next N writes fail, as an unavailable apiserver would. */
  failures = 0;

  readonly now: () => number;

  constructor(now: () => number) {
    this.now = now;
  }

  /** A node its agent verified at `at`. */
  addNode(name: string, at = this.now()): void {
    this.nodes.set(name, {
      labels: { [VERIFIED_LABEL]: 'true' },
      annotations: {},
      taints: [],
      condition: { status: 'True', reason: 'verified', message: 'ok', heartbeatAt: at },
      rv: this.#rv++,
    });
  }

  /** The node agent re-reads the Node and verifies its files at `at`: under the mark it says node_quarantined. */
  agentVerifies(name: string, at = this.now()): void {
    const n = this.nodes.get(name)!;
    const marked = n.annotations[QUARANTINE_ANNOTATION] !== undefined;
    n.labels[VERIFIED_LABEL] = marked ? 'false' : 'true';
    n.condition = marked
      ? { status: 'False', reason: QUARANTINE_REASON, message: 'agent: withdrawn', heartbeatAt: at }
      : { status: 'True', reason: 'verified', message: 'ok', heartbeatAt: at };
    if (!marked) n.taints = n.taints.filter((t) => t.key !== UNVERIFIED_TAINT.key);
    n.rv = this.#rv++;
  }

  view(name: string): NodeView {
    const n = this.nodes.get(name)!;
    return nodeView({
      metadata: {
        name,
        uid: `uid-${name}`,
        resourceVersion: String(n.rv),
        labels: { ...n.labels },
        annotations: { ...n.annotations },
      },
      spec: { taints: n.taints },
      status: {
        conditions: [
          {
            type: CONDITION_TYPE,
            status: n.condition.status,
            reason: n.condition.reason,
            message: n.condition.message,
            lastHeartbeatTime: new Date(n.condition.heartbeatAt),
          },
        ],
      },
    });
  }

  #fail(): void {
    if (this.failures > 0) {
      this.failures--;
      throw new Error('apiserver unavailable');
    }
  }

  async readNode(name: string) {
    return this.nodes.has(name) ? this.view(name) : undefined;
  }

  async withdraw(
    v: NodeView,
    mark: Parameters<QuarantineApi['withdraw']>[1],
    history: Parameters<QuarantineApi['withdraw']>[2],
  ) {
    this.#fail();
    const n = this.nodes.get(v.name)!;
    n.labels[VERIFIED_LABEL] = 'false';
    n.annotations[QUARANTINE_ANNOTATION] = writeMark(mark);
    n.annotations[QUARANTINE_HISTORY_ANNOTATION] = writeHistory(history);
    if (mark.taint && !n.taints.some((t) => t.key === UNVERIFIED_TAINT.key)) n.taints.push({ ...UNVERIFIED_TAINT });
    // The heartbeat stays the agent's.
    n.condition = {
      ...n.condition,
      status: 'False',
      reason: QUARANTINE_REASON,
      message: describeMark({ ok: true, mark }),
    };
    n.rv = this.#rv++;
    this.calls.push(`withdraw ${v.name}`);
    return this.view(v.name);
  }

  async release(v: NodeView, history: Parameters<QuarantineApi['release']>[1]) {
    this.#fail();
    const n = this.nodes.get(v.name)!;
    delete n.annotations[QUARANTINE_ANNOTATION];
    n.annotations[QUARANTINE_HISTORY_ANNOTATION] = writeHistory(history);
    n.rv = this.#rv++;
    this.calls.push(`release ${v.name}`);
    return this.view(v.name);
  }

  async nodeEvent(v: NodeView, type: string, reason: string, message: string) {
    this.events.push({ node: v.name, type, reason, message });
  }

  async readProbe(node: string) {
    return this.probes.get(node);
  }

  async createProbe(node: string) {
    this.#fail();
    this.probes.set(node, { createdAt: this.now(), deleting: false, result: { state: 'running' } });
    this.calls.push(`create probe ${node}`);
  }

  async deleteProbe(node: string) {
    if (this.probes.delete(node)) this.calls.push(`delete probe ${node}`);
  }

  /** The probe's kubelet reports its validator's result. */
  probeResult(node: string, result: ProbeResult): void {
    this.probes.get(node)!.result = result;
  }

  mark(name: string) {
    return JSON.parse(this.nodes.get(name)!.annotations[QUARANTINE_ANNOTATION] ?? 'null');
  }

  reasons(): string[] {
    return this.events.map((e) => e.reason);
  }
}
