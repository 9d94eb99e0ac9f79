/**
 * What each meshgate-labelled pod not yet bound to a node needs from its node (src/policy/validate/binding.ts RedirectNeed),
 * for the binding guard: judged from the pod's spec when the watch delivers it, kept as one short string per pod (a
 * Map of "namespace/name" → need; 50,000 pods would cost about 13 MB, `npm run bench` part 3), never whole Pods.
 * Why only unbound pods: a Binding names a pod the scheduler has yet to place, and a pod that has a node is never
 * bound again, so the watch selects `spec.nodeName=` and the apiserver drops a pod from it (a DELETED event) once it
 * is bound. The cache holds the pods waiting for a node (a few hundred in a busy cluster), not every pod: its cost no
 * longer grows with the cluster (issue 32). The label only selects which pods to watch: a pod whose label was
 * removed, or that the watch has not delivered yet, is read with one GET.
 */
import type { Compiled } from '../config/compile.ts';
import { parsePod } from '../pod/parse.ts';
import { redirectNeed, type RedirectNeed } from '../policy/validate/binding.ts';
import type { KubeClient } from './api/client.ts';
import { core } from './api/paths.ts';
import { meshgatePodReflector } from './meshgate-pods.ts';
import { mapSink, type ListSink } from './reflector.ts';

type PodLike = { metadata?: { name?: string; namespace?: string } };
const key = (p: PodLike) => `${p.metadata?.namespace}/${p.metadata?.name}`;

/** Pods the scheduler has yet to place: the only ones a Binding can name. */
export const UNBOUND = 'spec.nodeName=';

/**
 * The one GET a binding review may cost runs while the apiserver waits for meshgate's answer (the chart's
 * timeoutSeconds is 10 by default): one attempt, bounded to half of that, so a failure still answers in time.
 */
const ADMISSION_GET = { attempts: 1, timeoutMs: 5_000 };

export interface PodNeeds {
  /** The pod's need when cached, else undefined (the caller falls back to one GET). */
  get(namespace: string, name: string): RedirectNeed | undefined;
  /** One GET of the pod, judged from its spec. Throws when the pod cannot be read. */
  fetch(namespace: string, name: string): Promise<RedirectNeed>;
}

/** A pod that does not parse cannot be bound safely: it needs what an unmeshed pod needs (nothing is allowed). */
export function needOf(p: unknown, cfg: Compiled): RedirectNeed {
  const parsed = parsePod(p);
  if (!parsed.ok) return 'unmeshed';
  return redirectNeed(parsed.pod, parsed.pod.metadata?.namespace ?? '', cfg);
}

/**
 * The configuration a namespace's pods are judged with, as the handlers read it now (it changes when the mesh's
 * images are learned; on OpenShift it holds the namespace's proxy IDs: src/config/per-namespace.ts).
 */
export type ConfigOf = (namespace: string) => Compiled;

export class PodNeedStore {
  #needs = new Map<string, RedirectNeed>();
  readonly #cfg: ConfigOf;

  constructor(cfg: Compiled | ConfigOf) {
    this.#cfg = typeof cfg === 'function' ? cfg : () => cfg;
  }

  set(p: PodLike): void {
    this.#needs.set(key(p), needOf(p, this.#cfg(p.metadata?.namespace ?? '')));
  }

  delete(p: PodLike): void {
    this.#needs.delete(key(p));
  }

  /** A (re)list (src/kube/reflector.ts): each pod judged as it arrives into a new map, swapped in at the end. */
  list(): ListSink {
    return mapSink<RedirectNeed>(
      (p) => key(p as PodLike),
      (p) => needOf(p, this.#cfg((p as PodLike).metadata?.namespace ?? '')),
      (next) => (this.#needs = next),
    );
  }

  replace(items: PodLike[]): void {
    const sink = this.list();
    for (const p of items) sink.add(p);
    sink.done();
  }

  get(namespace: string, name: string): RedirectNeed | undefined {
    return this.#needs.get(`${namespace}/${name}`);
  }

  size(): number {
    return this.#needs.size;
  }
}

/**
 * `after`: the list starts once it resolves (the learned images: a pod is judged with the images the mesh injects).
 */
export function startPodNeedCache(
  client: KubeClient,
  cfg: Compiled | ConfigOf,
  onError?: (err: unknown) => void,
  after: Promise<unknown> = Promise.resolve(),
): PodNeeds & { stop(): void; store: PodNeedStore; ready: Promise<void> } {
  const store = new PodNeedStore(cfg);
  const current: ConfigOf = typeof cfg === 'function' ? cfg : () => cfg;
  const reflector = meshgatePodReflector(
    client,
    {
      list: () => store.list(),
      upsert: (p) => store.set(p as PodLike),
      remove: (p) => store.delete(p as PodLike),
      onError,
    },
    { fieldSelector: UNBOUND },
  );
  const ready = after.then(() => reflector.start());
  ready.catch((err) => onError?.(err));
  return {
    store,
    ready,
    get: (ns, name) => store.get(ns, name),
    fetch: async (ns, name) =>
      needOf(await client.get(core('pods', { namespace: ns, name }), ADMISSION_GET), current(ns)),
    stop: () => reflector.stop(),
  };
}
