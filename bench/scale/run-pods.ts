/**
 * `--scale-running`: what a kubelet reports of each bound guarded pod once it runs — phase Running, Ready, its Istio
 * validation init container terminated with 0, the native-sidecar proxy and the app running — written as one merge
 * patch of `pods/status` per pod, CONCURRENCY in flight. A real cluster's guarded pods are nearly all Running; the
 * bench's pods stay Pending without it (no kubelet), and what a repair controller must read at its start depends on
 * that (src/repair/failed/watch.ts reads only pods not Running in full). Pods left unscheduled (PENDING_EVERY) stay
 * Pending, as a scheduler would leave them. Idempotent: pods already Running are skipped, so a run restored from a
 * snapshot saved after it (`--scale-save`) patches nothing.
 */
import type { KubeClient } from '../../src/kube/api/client.ts';
import { core } from '../../src/kube/api/paths.ts';
import { REDIRECT_LABEL } from '../../src/contract/names.ts';

const CONCURRENCY = 24;
const PROGRESS_MS = 15_000;

interface ListedPod {
  metadata?: { name?: string; namespace?: string; creationTimestamp?: string };
  spec?: {
    nodeName?: string;
    initContainers?: Array<{ name: string; image?: string }>;
    containers?: Array<{ name: string; image?: string }>;
  };
  status?: { phase?: string };
}

/** The status a kubelet reports for `pod` running on its node. */
export function runningStatus(pod: ListedPod, i: number): Record<string, unknown> {
  const started = pod.metadata?.creationTimestamp ?? new Date().toISOString();
  const id = (name: string) => `containerd://${(i.toString(16) + name).padEnd(64, '0').slice(0, 64)}`;
  const cond = (type: string) => ({ type, status: 'True', lastProbeTime: null, lastTransitionTime: started });
  const ip = `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
  const [validator, ...sidecars] = pod.spec?.initContainers ?? [];
  const running = (c: { name: string; image?: string }) => ({
    name: c.name,
    image: c.image,
    imageID: `${c.image}@sha256:${'0'.repeat(64)}`,
    containerID: id(c.name),
    ready: true,
    started: true,
    restartCount: 0,
    state: { running: { startedAt: started } },
  });
  return {
    phase: 'Running',
    conditions: ['PodReadyToStartContainers', 'Initialized', 'Ready', 'ContainersReady', 'PodScheduled'].map(cond),
    hostIP: '172.18.0.2',
    hostIPs: [{ ip: '172.18.0.2' }],
    podIP: ip,
    podIPs: [{ ip }],
    startTime: started,
    qosClass: 'Burstable',
    initContainerStatuses: [
      ...(validator
        ? [
            {
              name: validator.name,
              image: validator.image,
              imageID: `${validator.image}@sha256:${'0'.repeat(64)}`,
              containerID: id(validator.name),
              ready: true,
              restartCount: 0,
              started: false,
              state: {
                terminated: {
                  exitCode: 0,
                  reason: 'Completed',
                  startedAt: started,
                  finishedAt: started,
                  containerID: id(validator.name),
                },
              },
            },
          ]
        : []),
      ...sidecars.map(running),
    ],
    containerStatuses: (pod.spec?.containers ?? []).map(running),
  };
}

/** Marks every bound guarded pod not yet Running as Running; returns how many were patched. */
export async function runGuardedPods(client: KubeClient, log: (s: string) => void): Promise<number> {
  const todo: ListedPod[] = [];
  await client.listItems<ListedPod>(core('pods'), 500, { labelSelector: REDIRECT_LABEL }, (p) => {
    if (p.spec?.nodeName && p.status?.phase !== 'Running')
      todo.push({
        metadata: p.metadata,
        spec: { nodeName: p.spec.nodeName, initContainers: p.spec.initContainers, containers: p.spec.containers },
      });
  });
  let next = 0;
  let done = 0;
  const t0 = performance.now();
  let shown = t0;
  const worker = async () => {
    while (next < todo.length) {
      const i = next++;
      const p = todo[i];
      const path = core('pods', { namespace: p.metadata?.namespace, name: p.metadata?.name, sub: 'status' });
      await client.patch(path, 'merge', { status: runningStatus(p, i) });
      done++;
      const now = performance.now();
      if (now - shown > PROGRESS_MS) {
        shown = now;
        log(`    pods Running: ${done} of ${todo.length} (${Math.round(done / ((now - t0) / 1000))}/s)`);
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  log(`    pods Running: ${todo.length} patched in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  return todo.length;
}
