/**
 * Part 4: the node agent, from a change in the CNI conf dir to the verdict published. The real NodeAgent with
 * its real fs.watch watcher and default 100 ms debounce, over a temp dir laid out like a node (net.d + bin),
 * and a fake publisher that records when each verdict arrives. Changes alternate between the corpus's
 * istio-chained Calico conflist (verified) and plain Calico (mesh_plugin_missing), half written in place,
 * half renamed in (how installers replace files), so every change flips the verdict and is published.
 * The agent's own work (read the dirs + judge them) is timed separately, to split the latency into
 * debounce window + work.
 */
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { NodeAgent, type AgentConfig, type AgentLog } from '../src/agent/agent.ts';
import { desiredState, type PublishedState } from '../src/agent/node-state.ts';
import type { NodePublisher } from '../src/agent/publisher.ts';
import { judgeSnapshot } from '../src/agent/judge.ts';
import { readSnapshot, type ChainVerdict } from '../src/cni/index.ts';
import { CORPUS_DIR } from './corpus.ts';
import { median, round, summary } from './stats.ts';

export const DEBOUNCE_MS = 100;
/** Generous: with a real apiserver on a loaded 2-core box one publish is two GETs and two PATCHes. */
const PUBLISH_TIMEOUT_MS = 10_000;

/**
 * Records when each publish completed (after the inner publisher's write, when there is one: then the
 * apiserver has acknowledged the Node update); `next(match)` resolves on the next matching one.
 */
class RecordingPublisher implements NodePublisher {
  readonly #inner: NodePublisher | undefined;
  state: PublishedState | undefined;
  /** Publishes that matched no waiter (e.g. a half-written file judged unparsable before the rest arrived). */
  unmatched = 0;
  #waiter:
    | { match: (v: ChainVerdict) => boolean; resolve: (p: { at: number; verdict: ChainVerdict }) => void }
    | undefined;

  constructor(inner?: NodePublisher) {
    this.#inner = inner;
  }

  async read(node: string): Promise<PublishedState> {
    return this.#inner ? this.#inner.read(node) : (this.state ?? { tainted: false });
  }

  async heartbeat(node: string): Promise<void> {
    await this.#inner?.heartbeat(node);
  }

  async publish(node: string, verdict: ChainVerdict, taint: boolean): Promise<PublishedState> {
    const published = await this.#inner?.publish(node, verdict, taint);
    const at = performance.now();
    const state = published ?? desiredState(verdict, taint);
    this.state = state;
    if (!this.#waiter?.match(verdict)) {
      this.unmatched++;
      return state;
    }
    this.#waiter.resolve({ at, verdict });
    this.#waiter = undefined;
    return state;
  }

  next(match: (v: ChainVerdict) => boolean): Promise<{ at: number; verdict: ChainVerdict }> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`no matching publish within ${PUBLISH_TIMEOUT_MS} ms`)),
        PUBLISH_TIMEOUT_MS,
      );
      this.#waiter = {
        match,
        resolve: (p) => {
          clearTimeout(timer);
          resolve(p);
        },
      };
    });
  }
}

const quiet: AgentLog = { info: () => {}, warn: () => {}, error: () => {} };

export interface AgentLatency {
  changes: number;
  debounceMs: number;
  /** Extra publishes of an intermediate verdict (a reader catching a file mid-write); 0 is the ideal. */
  intermediatePublishes: number;
  writeToPublishMs: { median: number; p95: number; max: number };
  byOperation: Record<string, { n: number; median: number; max: number }>;
  /** readSnapshot + judgeSnapshot (every libcni line) on the same dirs, median of 20: the agent's work after the debounce. */
  readAndVerifyMs: number;
  verifyOnlyMs: number;
}

/** `inner`: a real publisher (the Kubernetes one, for --with-apiserver) whose completed writes are timed. */
export async function measureAgentLatency(
  changes = 20,
  inner?: NodePublisher,
  nodeName = 'bench-node',
): Promise<AgentLatency> {
  const cni = (f: string) => readFileSync(join(CORPUS_DIR, 'cni', f), 'utf8');
  const meshed = cni('istio__10-calico.conflist-istioconfig');
  const primary = cni('istio__calico.conflist');
  const root = mkdtempSync(join(tmpdir(), 'meshgate-bench-agent-'));
  const confDir = join(root, 'net.d');
  const binDir = join(root, 'bin');
  mkdirSync(confDir);
  mkdirSync(binDir);
  for (const b of ['calico', 'calico-ipam', 'portmap', 'istio-cni']) {
    writeFileSync(join(binDir, b), '#!/bin/sh\n');
    chmodSync(join(binDir, b), 0o755);
  }
  const file = join(confDir, '10-calico.conflist');
  writeFileSync(file, primary);
  const config: AgentConfig = {
    nodeName,
    confDir,
    binDirs: [binDir],
    pluginType: 'istio-cni',
    runtime: 'containerd',
    libcni: 'auto',
    maxConfNum: 1,
    resyncMs: 300_000,
    debounceMs: DEBOUNCE_MS,
    taintUnverified: false,
  };
  const pub = new RecordingPublisher(inner);
  const agent = new NodeAgent(config, { publisher: pub, log: quiet });
  const all: number[] = [];
  const byOp: Record<string, number[]> = { 'write in place': [], 'rename in': [] };
  try {
    await agent.start();
    if (agent.lastVerdict?.reason !== 'mesh_plugin_missing')
      throw new Error(`unexpected start verdict ${agent.lastVerdict?.reason}`);
    pub.unmatched = 0; // the start-up publish had no waiter
    for (let i = 0; i < changes; i++) {
      const wantVerified = i % 2 === 0;
      const content = wantVerified ? meshed : primary;
      const op = i % 4 < 2 ? 'write in place' : 'rename in';
      const staged = join(root, `staged-${i}.tmp`);
      if (op === 'rename in') writeFileSync(staged, content);
      const published = pub.next((v) => v.verified === wantVerified);
      const t0 = performance.now();
      if (op === 'rename in') renameSync(staged, file);
      else writeFileSync(file, content);
      const { at } = await published;
      all.push(at - t0);
      byOp[op].push(at - t0);
      await new Promise((r) => setTimeout(r, 20)); // let late inotify events of this change drain
    }
  } finally {
    await agent.stop();
  }
  const reads: number[] = [];
  const verifies: number[] = [];
  for (let i = 0; i < 20; i++) {
    const t0 = performance.now();
    const snap = await readSnapshot(confDir, [binDir]);
    const t1 = performance.now();
    // As the agent judges it before its Node is read: by every libcni line.
    judgeSnapshot(snap, config, undefined, () => new Date());
    const t2 = performance.now();
    reads.push(t2 - t0);
    verifies.push(t2 - t1);
  }
  rmSync(root, { recursive: true, force: true });
  const s = summary(all);
  return {
    changes: all.length,
    debounceMs: DEBOUNCE_MS,
    intermediatePublishes: pub.unmatched,
    writeToPublishMs: { median: round(s.median, 1), p95: round(s.p95, 1), max: round(s.max, 1) },
    byOperation: Object.fromEntries(
      Object.entries(byOp).map(([op, v]) => {
        const x = summary(v);
        return [op, { n: x.n, median: round(x.median, 1), max: round(x.max, 1) }];
      }),
    ),
    readAndVerifyMs: round(median(reads), 2),
    verifyOnlyMs: round(median(verifies), 3),
  };
}
