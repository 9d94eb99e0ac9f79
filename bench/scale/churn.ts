/**
 * What a live cluster sends every watcher while a replica is measured: each kubelet's Node status report (one per
 * node every KUBELET_REPORT_S, the kubelet's nodeStatusReportFrequency: a strategic merge patch of its Ready
 * condition's heartbeat, which every Node watcher receives whole), capped at MAX_NODE_PATCHES_PER_S on this 2-core
 * machine; and pod churn in the guarded namespaces (a pod created and an older one deleted every second), which the
 * apiserver sends through meshgate's webhooks when they are registered.
 */
import type { KubeClient } from '../../src/kube/api/client.ts';
import { core } from '../../src/kube/api/paths.ts';
import { nodeName, scalePod } from './objects.ts';

const KUBELET_REPORT_S = 300;
const MAX_NODE_PATCHES_PER_S = 50;

export interface Churn {
  stop(): Promise<{ nodePatches: number; pods: number; failures: number; firstFailure?: string }>;
}

/** Churned pods numbered across all churns of a run, so a later one never meets an earlier one's leftovers. */
let k = 0;

export function startChurn(client: KubeClient, nodes: number): Churn {
  let stopped = false;
  const counts: Awaited<ReturnType<Churn['stop']>> = { nodePatches: 0, pods: 0, failures: 0 };
  const perSecond = Math.min(MAX_NODE_PATCHES_PER_S, Math.ceil(nodes / KUBELET_REPORT_S));
  const fail = (err: unknown) => {
    counts.failures++;
    counts.firstFailure ??= (err as Error).message;
  };
  let n = 0;
  const first = k;
  const loop = (async () => {
    while (!stopped) {
      const tick = new Promise((r) => setTimeout(r, 1000));
      const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
      const calls: Promise<unknown>[] = [];
      for (let i = 0; i < perSecond && nodes > 0; i++, n++) {
        const body = { status: { conditions: [{ type: 'Ready', status: 'True', lastHeartbeatTime: now }] } };
        const path = core('nodes', { name: nodeName(n % nodes), sub: 'status' });
        calls.push(client.patch(path, 'strategic', body).then(() => counts.nodePatches++, fail));
      }
      // Churned pods are numbered far above the populated ones, and guarded: pod 300 × j lives in team-0.
      const i = 300 * (33_334 + k++);
      const pod = scalePod(i, nodes);
      calls.push(client.create(core('pods', { namespace: 'team-0' }), pod).then(() => counts.pods++, fail));
      if (k - first > 5) {
        const old = core('pods', { namespace: 'team-0', name: `app-${i - 5 * 300}` });
        calls.push(client.delete(old, { gracePeriodSeconds: 0 }).catch(fail));
      }
      await Promise.all([tick, ...calls]);
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      return counts;
    },
  };
}
