/**
 * Lists the pods meshgate guards, namespace by namespace: every pod where an entry selects the whole namespace, else
 * only the pods the entries' objectSelectors select, filtered by the apiserver (istio's pod-level entries select
 * nearly every namespace, but only pods labelled sidecar.istio.io/inject=true in them). A few namespaces at a time.
 */
import type { ReadError } from './facts.ts';
import { wholeNamespace, type OptedIn } from './judge-namespaces.ts';
import type { PodRecord } from './facts.ts';
import type { KubeReader } from './kube-reader.ts';
import { selectorQuery } from '../util/selector.ts';

/** Namespaces listed at once: a handful of requests in flight keeps the apiserver's priority & fairness content. */
const CONCURRENCY = 4;

type PodLister = Pick<KubeReader, 'pods'>;

export interface ListOptions {
  /** A requirement every list adds to its selector (the repair sweep: `!meshgate.io/redirect`). */
  also?: string;
  /** A namespace's lists are done. */
  onNamespace?: (namespace: string) => void;
}

/** Feeds each guarded pod to `each` once; returns the errors of lists that failed. */
export async function listGuardedPods(
  reader: PodLister,
  guarded: readonly OptedIn[],
  each: (p: PodRecord) => void,
  opts: ListOptions = {},
): Promise<string[]> {
  const { also } = opts;
  const withAlso = (q: string | undefined) => (also === undefined ? q : q ? `${q},${also}` : also);
  const errors: string[] = [];
  let next = 0;
  const worker = async () => {
    while (next < guarded.length) {
      const o = guarded[next++];
      const queries = wholeNamespace(o) ? [undefined] : o.mutating.map((e) => selectorQuery(e.objectSelector ?? {}));
      // An operator without a query form: list the namespace and let the tally filter.
      const lists = queries.includes(undefined) ? [undefined] : [...new Set(queries)];
      const seen = lists.length > 1 ? new Set<string>() : undefined;
      for (const q of lists.map(withAlso)) {
        const err: ReadError | undefined = await reader.pods(
          o.namespace,
          (p) => {
            if (seen?.has(p.name)) return;
            seen?.add(p.name);
            each(p);
          },
          q,
        );
        if (err) errors.push(err.error);
      }
      opts.onNamespace?.(o.namespace);
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, guarded.length) }, worker));
  return errors;
}
