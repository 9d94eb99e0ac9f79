import type { Pod } from '../pod/types.ts';

/**
 * The node a pod will run on, when admission can know it: `spec.nodeName`, or the single node that every
 * required node-affinity term pins with `matchFields metadata.name In [node]` — how the DaemonSet controller
 * creates its pods (it adds that field selector to each term). Otherwise unknown: the scheduler decides later.
 */
export function targetNode(pod: Pod): string | undefined {
  if (pod.spec.nodeName) return pod.spec.nodeName;
  const terms = pod.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
  if (!terms || terms.length === 0) return undefined;
  let node: string | undefined;
  for (const term of terms) {
    const pin = term.matchFields?.find(
      (f) => f.key === 'metadata.name' && f.operator === 'In' && f.values?.length === 1,
    );
    if (!pin) return undefined;
    const name = pin.values![0];
    if (node !== undefined && node !== name) return undefined;
    node = name;
  }
  return node;
}
