/**
 * A hand-written NodePublisher for agent tests: keeps one Node's marks in memory (as the real Node would after
 * the patches), records every publish with a monotonic timestamp, and can be told to fail.
 */
import { performance } from 'node:perf_hooks';
import type { ChainVerdict } from '../../src/cni/types.ts';
import type { AgentLog } from '../../src/agent/agent.ts';
import { desiredState, type PublishedState } from '../../src/agent/node-state.ts';
import type { NodePublisher } from '../../src/agent/publisher.ts';
import { readMark, underQuarantine, wantsTaint } from '../../src/node/quarantine.ts';

export interface Publish {
  at: number;
  verdict: ChainVerdict;
  taint: boolean;
}

type Waiter = { match: (v: ChainVerdict) => boolean; resolve: (p: Publish) => void };

export class FakePublisher implements NodePublisher {
  /** What the Node says; undefined = never judged. */
  state: PublishedState | undefined;
  readonly publishes: Publish[] = [];
  reads = 0;
  /** The next N calls (read or publish) throw, as an unavailable apiserver would. */
  failures = 0;
  /** What they throw. */
  failWith: () => Error = () => new Error('apiserver unavailable');
  #waiters: Waiter[] = [];

  constructor(initial?: PublishedState) {
    this.state = initial;
  }

  async read(_nodeName: string): Promise<PublishedState> {
    this.reads++;
    this.#maybeFail();
    return this.state ?? { tainted: false };
  }

  /** Heartbeats received (times from performance.now()). */
  readonly heartbeats: number[] = [];
  /** Where each heartbeat was asked to go: 'node' (the condition: onNode) or 'lease', and the Node's UID given. */
  readonly beatsTo: Array<{ to: 'node' | 'lease'; nodeUid?: string }> = [];

  async heartbeat(_nodeName: string, o: { onNode?: boolean; nodeUid?: string } = {}): Promise<void> {
    this.#maybeFail();
    this.heartbeats.push(performance.now());
    this.beatsTo.push({ to: o.onNode ? 'node' : 'lease', nodeUid: o.nodeUid });
  }

  /** As the real publisher: the quarantine mark on the Node (only the repair controller writes it) overrules a verified verdict. */
  async publish(_nodeName: string, verdict: ChainVerdict, taint: boolean): Promise<PublishedState> {
    this.#maybeFail();
    const quarantine = this.state?.quarantine;
    const mark = readMark(quarantine);
    // The kubelet's nodeInfo stays what it was: only meshgate's marks change.
    const runtimeVersion = this.state?.runtimeVersion;
    this.state = {
      ...desiredState(underQuarantine(verdict, mark), wantsTaint(taint, mark)),
      quarantine,
      runtimeVersion,
    };
    const p = { at: performance.now(), verdict, taint };
    this.publishes.push(p);
    const matched = this.#waiters.filter((w) => w.match(verdict));
    this.#waiters = this.#waiters.filter((w) => !matched.includes(w));
    for (const w of matched) w.resolve(p);
    return this.state;
  }

  /** The next publish (from now on) whose verdict matches; rejects after `timeoutMs`. */
  next(match: (v: ChainVerdict) => boolean, timeoutMs = 5_000): Promise<Publish> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no matching publish within ${timeoutMs} ms`)), timeoutMs);
      this.#waiters.push({
        match,
        resolve: (p) => {
          clearTimeout(timer);
          resolve(p);
        },
      });
    });
  }

  get last(): ChainVerdict | undefined {
    return this.publishes.at(-1)?.verdict;
  }

  #maybeFail(): void {
    if (this.failures > 0) {
      this.failures--;
      throw this.failWith();
    }
  }
}

/** A logger that keeps what it was told, for assertions and for quiet test output. */
export function memoryLog(): AgentLog & { lines: Array<{ level: string; msg: string; obj: object }> } {
  const lines: Array<{ level: string; msg: string; obj: object }> = [];
  const at = (level: string) => (obj: object, msg: string) => void lines.push({ level, msg, obj });
  return { lines, info: at('info'), warn: at('warn'), error: at('error') };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
