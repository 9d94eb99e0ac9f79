/**
 * One fresh replica of the webhook or the repair controller, started as the chart and image start it (the tree
 * compiled as the image holds it, its Node flags: bench/footprint/image.ts) against the bench's cluster, and watched
 * from the moment it is spawned:
 * - RSS (`VmRSS`) every SAMPLE_MS: the peak over its start and first WINDOW_S after ready, and the steady figure
 *   (the median of the last STEADY_S one-second samples, as `--footprint` takes it);
 * - ready: the time from spawn to its first /readyz 200 (polled every SAMPLE_MS);
 * - the webhook's reviews from the moment it is ready, REVIEWS_PER_S over HTTPS keep-alive for WINDOW_S (a pod
 *   CREATE through /mutate, a binding of a pod waiting for a node — the cache's — and of a pod the cache does not
 *   hold, which costs a GET): each one's latency, the worst printed — a replica that says ready must not stall;
 * - V8's heap in use at the end (its own /metrics, nodejs_heap_size_used_bytes).
 */
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { request as httpRequest } from 'node:http';
import { rssBytes } from '../footprint/daemons.ts';
import { startMeshgate, stopChild, type ImageTree } from '../footprint/image.ts';
import { percentile } from '../stats.ts';
import { nodeName, scalePod } from './objects.ts';

const SAMPLE_MS = 100;
/** After ready: the minute the issue asks about ("worst review in its first minute"), then the steady samples. */
export const WINDOW_S = 60;
const STEADY_S = 10;
const REVIEWS_PER_S = 10;
/** A replica not ready by then has failed this size (the bar is 30 s). */
const READY_TIMEOUT_MS = 300_000;
const MiB = 1024 * 1024;

export interface ReviewFigures {
  count: number;
  failed: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

export interface ReplicaFigures {
  readyS?: number;
  /** CPU seconds from spawn to ready: the replica's own, and the apiserver's and etcd's meanwhile. */
  startCpu?: { replicaS: number; apiserverS: number; etcdS: number };
  peakMiB: number;
  steadyMiB: number;
  heapMiB?: number;
  exited?: string;
  /** All reviews, and each kind: a pod CREATE, a binding the cache answers, a binding that costs a GET. */
  reviews?: ReviewFigures & { byKind: Record<string, ReviewFigures> };
}

interface Reply {
  status: number;
  body: string;
}

const insecure = new Agent({ keepAlive: true, maxSockets: 4, rejectUnauthorized: false });

function call(url: string, body?: string): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const done = (res: import('node:http').IncomingMessage) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    };
    const method = body === undefined ? 'GET' : 'POST';
    const headers = body === undefined ? {} : { 'content-type': 'application/json' };
    const req = url.startsWith('https:')
      ? request(url, { method, headers, agent: insecure }, done)
      : httpRequest(url, { method, headers }, done);
    req.setTimeout(15_000, () => req.destroy(new Error(`${method} ${url}: no answer in 15 s`)));
    req.on('error', reject);
    req.end(body);
  });
}

function review(uid: string, object: unknown, o: { name: string; namespace: string; binding: boolean }) {
  return JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid,
      kind: o.binding ? { group: '', version: 'v1', kind: 'Binding' } : { group: '', version: 'v1', kind: 'Pod' },
      resource: { group: '', version: 'v1', resource: 'pods' },
      ...(o.binding ? { subResource: 'binding' } : {}),
      name: o.name,
      namespace: o.namespace,
      operation: 'CREATE',
      userInfo: {
        username: o.binding ? 'system:kube-scheduler' : 'system:serviceaccount:kube-system:replicaset-controller',
      },
      object,
    },
  });
}

/** The three reviews sent in turn. Pod 0 waits for a node (objects.ts PENDING_EVERY); pod 300 is bound. */
function reviews(nodes: number): Array<{ kind: string; route: string; body: string }> {
  const pod = scalePod(1, 0);
  const binding = (i: number) => ({
    apiVersion: 'v1',
    kind: 'Binding',
    metadata: { name: `app-${i}`, namespace: 'team-0' },
    target: { apiVersion: 'v1', kind: 'Node', name: nodeName(i % Math.max(1, nodes)) },
  });
  return [
    {
      kind: 'pod CREATE',
      route: 'mutate',
      body: review('m', pod, { name: 'app-1', namespace: 'team-1', binding: false }),
    },
    {
      kind: 'binding, cached',
      route: 'validate',
      body: review('b0', binding(0), { name: 'app-0', namespace: 'team-0', binding: true }),
    },
    {
      kind: 'binding, GET',
      route: 'validate',
      body: review('b1', binding(300), { name: 'app-300', namespace: 'team-0', binding: true }),
    },
  ];
}

/** CPU seconds a process has used (utime + stime, /proc/<pid>/stat in clock ticks of 1/100 s); 0 once gone. */
export function cpuSeconds(pid: number | undefined): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / 100;
  } catch {
    return 0;
  }
}

function summary(latencies: number[], failed: number): ReviewFigures {
  const sorted = [...latencies].sort((a, b) => a - b);
  return {
    count: latencies.length,
    failed,
    p50Ms: percentile(sorted, 0.5),
    p99Ms: percentile(sorted, 0.99),
    maxMs: sorted.at(-1) ?? 0,
  };
}

export async function runReplica(
  tree: ImageTree,
  role: 'webhook' | 'repair',
  argv: string[],
  port: number,
  log: NodeJS.WritableStream,
  nodes: number,
  pids: { apiserver?: number; etcd?: number },
  /** Once it is ready (the webhook's configurations are registered then: a Service sends only to ready pods). */
  onReady: () => Promise<void> = async () => undefined,
): Promise<ReplicaFigures> {
  const base = role === 'webhook' ? `https://127.0.0.1:${port}` : `http://127.0.0.1:${port}`;
  const spawnedAt = performance.now();
  const cpu0 = { apiserver: cpuSeconds(pids.apiserver), etcd: cpuSeconds(pids.etcd) };
  const child: ChildProcess = startMeshgate(tree, role, argv, log);
  const rss: Array<{ at: number; bytes: number }> = [];
  let exited: string | undefined;
  child.once('exit', (code, signal) => (exited = `exited ${signal ?? code}`));
  const sampler = setInterval(() => rss.push({ at: performance.now(), bytes: rssBytes(child.pid) }), SAMPLE_MS);
  const out: ReplicaFigures = { peakMiB: 0, steadyMiB: 0 };
  try {
    let readyAt: number | undefined;
    while (readyAt === undefined && !exited && performance.now() - spawnedAt < READY_TIMEOUT_MS) {
      const r = await call(`${base}/readyz`).catch(() => undefined);
      if (r?.status === 200) readyAt = performance.now();
      else await new Promise((res) => setTimeout(res, SAMPLE_MS));
    }
    if (readyAt === undefined) {
      out.exited = exited ?? `not ready within ${READY_TIMEOUT_MS / 1000} s`;
      return out;
    }
    out.readyS = (readyAt - spawnedAt) / 1000;
    out.startCpu = {
      replicaS: cpuSeconds(child.pid),
      apiserverS: cpuSeconds(pids.apiserver) - cpu0.apiserver,
      etcdS: cpuSeconds(pids.etcd) - cpu0.etcd,
    };
    await onReady();
    const latencies: Record<string, number[]> = {};
    const failed: Record<string, number> = {};
    const bodies = reviews(nodes);
    const until = readyAt + WINDOW_S * 1000;
    const pending: Promise<unknown>[] = [];
    for (let n = 0; performance.now() < until && !exited; n++) {
      if (role === 'webhook') {
        const { kind, route, body } = bodies[n % bodies.length];
        const t0 = performance.now();
        const fail = () => {
          failed[kind] = (failed[kind] ?? 0) + 1;
        };
        const answered = (r: Reply) => {
          if (r.status !== 200) return fail();
          latencies[kind] ??= [];
          latencies[kind].push(performance.now() - t0);
        };
        pending.push(call(`${base}/${route}`, body).then(answered, fail));
      }
      await new Promise((res) => setTimeout(res, 1000 / REVIEWS_PER_S));
    }
    await Promise.all(pending);
    const metrics = await call(`${base}/metrics`).catch(() => undefined);
    const heap = /^nodejs_heap_size_used_bytes (\S+)$/m.exec(metrics?.body ?? '')?.[1];
    if (heap) out.heapMiB = Number(heap) / MiB;
    if (role === 'webhook') {
      const kinds = bodies.map((b) => b.kind);
      out.reviews = {
        ...summary(
          kinds.flatMap((k) => latencies[k] ?? []),
          kinds.reduce((s, k) => s + (failed[k] ?? 0), 0),
        ),
        byKind: Object.fromEntries(kinds.map((k) => [k, summary(latencies[k] ?? [], failed[k] ?? 0)])),
      };
    }
    out.exited = exited;
    return out;
  } finally {
    clearInterval(sampler);
    await stopChild(child);
    out.peakMiB = Math.max(0, ...rss.map((s) => s.bytes)) / MiB;
    const end = rss.at(-1)?.at ?? 0;
    const steady = rss
      .filter((s) => s.at > end - STEADY_S * 1000 && s.bytes > 0)
      .map((s) => s.bytes)
      .sort((a, b) => a - b);
    out.steadyMiB = (steady[steady.length >> 1] ?? 0) / MiB;
  }
}
