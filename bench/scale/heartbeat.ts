/**
 * What a node agent's heartbeat costs the cluster, the old way against the new (issue 32), with the agent's own
 * publisher (src/agent/kube-publisher.ts) on the bench's apiserver:
 * - on the Node: a strategic merge patch of nodes/status moving the MeshCNIVerified condition's lastHeartbeatTime
 *   (what every agent did once per resync), which sends the whole Node to every Node watcher;
 * - on a Lease: one PUT of the node's Lease (src/agent/node-lease.ts), each publisher already holding its Lease, as
 *   an agent does from its second resync on.
 * Each way, BEATS heartbeats of distinct nodes, CONCURRENCY at a time; measured: the apiserver's and etcd's CPU time
 * (utime + stime from /proc, so the bench's own work is not in it) per heartbeat, and the bytes and events one
 * Node watcher (a raw watch of every Node, as each kubelet-side or controller informer holds) received meanwhile.
 */
import { KubeNodePublisher } from '../../src/agent/kube-publisher.ts';
import type { KubeClient } from '../../src/kube/api/client.ts';
import { core } from '../../src/kube/api/paths.ts';
import { nodeName } from './objects.ts';
import { cpuSeconds } from './replica.ts';

const BEATS = 1000;
const CONCURRENCY = 8;
const cpuMs = (pid: number | undefined) => cpuSeconds(pid) * 1000;

export interface BeatCost {
  beats: number;
  apiserverCpuMs: number;
  etcdCpuMs: number;
  /** Bytes one Node watcher received per heartbeat. */
  nodeWatchBytes: number;
  nodeWatchEvents: number;
}

export interface HeartbeatFigures {
  node: BeatCost;
  lease: BeatCost;
}

/** A raw watch of every Node from now on, counting what arrives. */
async function nodeWatcher(client: KubeClient): Promise<{ bytes: () => number; events: () => number; stop(): void }> {
  const list = await client.get<{ metadata: { resourceVersion: string } }>(core('nodes'), { query: { limit: 1 } });
  const abort = new AbortController();
  const { response } = await client.open(
    'GET',
    core('nodes'),
    { watch: true, resourceVersion: list.metadata.resourceVersion, timeoutSeconds: 600 },
    { signal: abort.signal },
  );
  let bytes = 0;
  let events = 0;
  response.on('data', (c: Buffer) => {
    bytes += c.length;
    for (const b of c) if (b === 10) events++;
  });
  response.on('error', () => undefined);
  return { bytes: () => bytes, events: () => events, stop: () => abort.abort() };
}

async function pool(n: number, fn: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < n) await fn(next++);
    }),
  );
}

async function measure(
  client: KubeClient,
  pids: { apiserver?: number; etcd?: number },
  beat: (i: number) => Promise<void>,
): Promise<BeatCost> {
  const watcher = await nodeWatcher(client);
  await new Promise((r) => setTimeout(r, 1000));
  const [a0, e0, b0, n0] = [cpuMs(pids.apiserver), cpuMs(pids.etcd), watcher.bytes(), watcher.events()];
  await pool(BEATS, beat);
  await new Promise((r) => setTimeout(r, 2000)); // the last events reach the watcher
  const figures = {
    beats: BEATS,
    apiserverCpuMs: (cpuMs(pids.apiserver) - a0) / BEATS,
    etcdCpuMs: (cpuMs(pids.etcd) - e0) / BEATS,
    nodeWatchBytes: (watcher.bytes() - b0) / BEATS,
    nodeWatchEvents: (watcher.events() - n0) / BEATS,
  };
  watcher.stop();
  return figures;
}

/** Both ways over the first BEATS nodes (which must exist, with their Leases: populate.ts). */
export async function measureHeartbeats(
  client: KubeClient,
  pids: { apiserver?: number; etcd?: number },
  meshgateNamespace: string,
): Promise<HeartbeatFigures> {
  const onNode = new KubeNodePublisher(client);
  const node = await measure(client, pids, (i) => onNode.heartbeat(nodeName(i), { onNode: true }));
  // One publisher per node, as one agent per node: each holds its Lease after a first renewal (not measured).
  const leases = { namespace: meshgateNamespace, durationSeconds: 1200 };
  const agents = Array.from({ length: BEATS }, () => new KubeNodePublisher(client, undefined, leases));
  await pool(BEATS, (i) => agents[i].heartbeat(nodeName(i)));
  const lease = await measure(client, pids, (i) => agents[i].heartbeat(nodeName(i)));
  return { node, lease };
}
