// Watches the pods of a scenario's namespaces and judges every pod whose app container runs, from inside its own
// network namespace (judge.ts), once per pod. What a scenario reports comes from here: pods created, pods whose
// app ran, and pods whose app ran WITHOUT redirection — the number meshgate exists to keep at 0.
// Polling (every POLL_MS) instead of a watch: a scenario runs a handful of pods, and a list is the pods' state at
// one instant, which is what "is it running now" needs. A pod that runs for less than POLL_MS is not seen; no
// scenario deletes a running pod that fast (eviction and repair take seconds).
import { CoreV1Api, type V1Pod } from '@kubernetes/client-node';
import { describeError } from '../../e2e/harness/wait.ts';
import type { RealCluster } from './cluster.ts';
import type { Redirection } from './judge.ts';

/** 300 ms: well below the seconds a pod takes to start, and a few cheap list calls per second. */
const POLL_MS = 300;

/** The container that stands for "the workload runs" in every scenario's pods. */
export const APP_CONTAINER = 'app';

export interface SeenPod {
  uid: string;
  namespace: string;
  name: string;
  node?: string;
  firstSeen: number;
  /** When its app container was first seen running. */
  appRunningAt?: number;
  /** meshgate's own record (meshgate.io/status mode), for the report: cni | init | (none). */
  mode?: string;
  redirection?: Redirection;
  /** The pod ran but could not be judged (gone before, or the judge failed): counted as a failure. */
  judgeError?: string;
  deleted?: boolean;
}

export const appRunning = (p: V1Pod) =>
  (p.status?.containerStatuses ?? []).some((s) => s.name === APP_CONTAINER && s.state?.running !== undefined);
export const redirected = (r: Redirection | undefined) => r?.rules && r.reachesProxy;

export class PodMonitor {
  readonly pods = new Map<string, SeenPod>();
  #core: CoreV1Api;
  #timer: NodeJS.Timeout | undefined;
  #queue: Promise<void> = Promise.resolve();
  #latest: V1Pod[] = [];
  #polling: Promise<void> | undefined;
  readonly #cluster: RealCluster;
  readonly #namespaces: string[];

  constructor(cluster: RealCluster, namespaces: string[]) {
    this.#cluster = cluster;
    this.#namespaces = namespaces;
    this.#core = cluster.cp.kc.makeApiClient(CoreV1Api);
  }

  start(): void {
    const tick = () => {
      this.#polling = this.#poll()
        .catch((err) => void process.stderr.write(`monitor: ${describeError(err)}\n`))
        .finally(() => {
          if (this.#timer !== undefined) this.#timer = setTimeout(tick, POLL_MS);
        });
    };
    this.#timer = setTimeout(tick, 0);
  }

  /** Stops polling and waits for the judging in flight. */
  async stop(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#polling;
    await this.#queue;
  }

  /** The pods as last listed (all namespaces of this monitor). */
  current(namespace?: string): V1Pod[] {
    return this.#latest.filter((p) => namespace === undefined || p.metadata?.namespace === namespace);
  }

  /** Waits until every running app seen so far has been judged (or failed to be). */
  async settled(): Promise<void> {
    await this.#polling;
    await this.#queue;
  }

  all(): SeenPod[] {
    return [...this.pods.values()];
  }

  ran(): SeenPod[] {
    return this.all().filter((p) => p.appRunningAt !== undefined);
  }

  /** Pods whose app ran and that were judged not redirected, or could not be judged. */
  unredirected(): SeenPod[] {
    return this.ran().filter(
      (p) => p.judgeError !== undefined || (p.redirection !== undefined && !redirected(p.redirection)),
    );
  }

  async #poll(): Promise<void> {
    const lists = await Promise.all(this.#namespaces.map((namespace) => this.#core.listNamespacedPod({ namespace })));
    this.#latest = lists.flatMap((l) => l.items);
    const live = new Set<string>();
    for (const pod of this.#latest) {
      const uid = pod.metadata!.uid!;
      live.add(uid);
      let seen = this.pods.get(uid);
      if (!seen) {
        seen = { uid, namespace: pod.metadata!.namespace!, name: pod.metadata!.name!, firstSeen: Date.now() };
        this.pods.set(uid, seen);
      }
      seen.node = pod.spec?.nodeName;
      seen.mode = modeOf(pod);
      if (seen.appRunningAt === undefined && appRunning(pod)) {
        seen.appRunningAt = Date.now();
        const s = seen;
        this.#queue = this.#queue.then(() => this.#judge(s, pod));
      }
    }
    for (const p of this.pods.values()) if (!live.has(p.uid)) p.deleted = true;
  }

  async #judge(seen: SeenPod, pod: V1Pod): Promise<void> {
    try {
      seen.redirection = await this.#cluster.redirectionOf(pod);
    } catch (err) {
      seen.judgeError = describeError(err);
    }
  }
}

function modeOf(pod: V1Pod): string | undefined {
  try {
    return (JSON.parse(pod.metadata?.annotations?.['meshgate.io/status'] ?? '') as { mode?: string }).mode;
  } catch {
    return undefined;
  }
}
