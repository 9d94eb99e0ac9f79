/**
 * Part 3, run in its own process with --expose-gc: what the admission-path caches cost at cluster scale.
 *   5,000 Nodes  → NodeFactStore via factFromNode (what kube/node-cache.ts does per watch event)
 *   50,000 pods → PodNeedStore (the binding guard's cache, need judged from each pod's spec)
 * Objects arrive as JSON text and are parsed one at a time, as from the watch; only the stores stay referenced.
 * Memory = heapUsed after two forced GCs, minus the same before. Lookups in ns per call (best of 5 loops).
 */
import { performance } from 'node:perf_hooks';
import { NodeFactStore, factFromNode } from '../src/facts/node-facts.ts';
import { PodNeedStore } from '../src/kube/pod-mode-cache.ts';
import { testConfig } from '../test/support/config.ts';
import { kubeletNode } from './nodes.ts';
import { nsPerCall, round } from './stats.ts';

export const NODES = 5_000;
export const PODS = 50_000;
export const NODE_TARGET_MB = 50;

export interface FactsScale {
  nodes: { count: number; nodeJsonKiB: { min: number; max: number }; heapMB: number; relistMs: number; pass: boolean };
  nodeLookupNs: { getHit: number; getMiss: number; anyVerified: number; nativeSidecars: number };
  pods: { count: number; heapMB: number; relistMs: number };
  podLookupNs: { getHit: number; getMiss: number };
  /** The same timing loop around a function returning a constant: the harness's share of each figure. */
  callOverheadNs: number;
}

const ITERATIONS = 200_000;

function heapAfterGc(): number {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with --expose-gc');
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

/** Feeds the store like a watch would: one JSON document at a time, parsed and dropped. */
function fillNodes(store: NodeFactStore, texts: string[]): void {
  for (const t of texts)
    store.upsert(factFromNode(JSON.parse(t), { pluginType: 'istio-cni', maxVerdictAgeMs: 1_200_000 }));
}

function podJson(i: number): string {
  const ns = `team-${i % 200}`;
  const name = `web-${Math.floor(i / 200)}-7d9c8b5f4-${(i * 7919).toString(36).padStart(5, 'x')}`;
  return JSON.stringify({
    metadata: {
      name,
      namespace: ns,
      labels: { app: 'web', 'pod-template-hash': '7d9c8b5f4', 'meshgate.io/redirect': 'cni' },
    },
  });
}

export function measureFactsScale(): FactsScale {
  // The JSON texts are the apiserver's, not ours: they stay alive across both heap readings so that only what
  // the store retains shows up in the difference.
  const texts = Array.from({ length: NODES }, (_, i) => JSON.stringify(kubeletNode(i)));
  const sizes = texts.map((t) => Buffer.byteLength(t) / 1024);
  const nodeStore = new NodeFactStore();
  const nodeBase = heapAfterGc();
  fillNodes(nodeStore, texts);
  const t0 = performance.now();
  nodeStore.replaceAll(
    texts.map((t) => factFromNode(JSON.parse(t), { pluginType: 'istio-cni', maxVerdictAgeMs: 1_200_000 })),
  ); // a relist: the same nodes again
  const relistMs = performance.now() - t0;
  const nodeHeap = heapAfterGc() - nodeBase;
  if (texts.length !== NODES) throw new Error('unreachable: keeps the texts alive until after the reading');
  const names = Array.from({ length: NODES }, (_, i) => kubeletNode.nameOf(i));
  const missing = names.map((n) => `${n}-gone`);

  const podTexts = Array.from({ length: PODS }, (_, i) => podJson(i));
  const podStore = new PodNeedStore(testConfig('istio'));
  const podBase = heapAfterGc();
  const p0 = performance.now();
  podStore.replace(podTexts.map((t) => JSON.parse(t)));
  const podRelistMs = performance.now() - p0;
  const podHeap = heapAfterGc() - podBase;
  const podKeys = podTexts.map((t) => JSON.parse(t).metadata as { name: string; namespace: string });

  const mb = (b: number) => round(b / 2 ** 20, 2);
  return {
    nodes: {
      count: nodeStore.size(),
      nodeJsonKiB: { min: round(Math.min(...sizes), 1), max: round(Math.max(...sizes), 1) },
      heapMB: mb(nodeHeap),
      relistMs: round(relistMs, 1),
      pass: nodeHeap / 2 ** 20 < NODE_TARGET_MB,
    },
    nodeLookupNs: {
      getHit: round(
        nsPerCall((i) => nodeStore.get(names[i % NODES]), ITERATIONS),
        1,
      ),
      getMiss: round(
        nsPerCall((i) => nodeStore.get(missing[i % NODES]), ITERATIONS),
        1,
      ),
      anyVerified: round(
        nsPerCall(() => nodeStore.anyVerified(), ITERATIONS),
        1,
      ),
      nativeSidecars: round(
        nsPerCall((i) => nodeStore.nativeSidecars(i & 1 ? 'all' : 'verified'), ITERATIONS),
        1,
      ),
    },
    pods: { count: podStore.size(), heapMB: mb(podHeap), relistMs: round(podRelistMs, 1) },
    callOverheadNs: round(
      nsPerCall(() => 1, ITERATIONS),
      1,
    ),
    podLookupNs: {
      getHit: round(
        nsPerCall((i) => podStore.get(podKeys[i % PODS].namespace, podKeys[i % PODS].name), ITERATIONS),
        1,
      ),
      getMiss: round(
        nsPerCall((i) => podStore.get(podKeys[i % PODS].namespace, 'no-such-pod'), ITERATIONS),
        1,
      ),
    },
  };
}

if (import.meta.main) process.send!(measureFactsScale());
