import type { NodeSelectorTerm, Pod } from '../contract/pod.ts';

/**
 * The node a pod will run on, when admission can know it, and how the pod names it:
 * - `nodeName`: `spec.nodeName` is set, so the pod is bound already and its node's kubelet runs it without asking
 *   the scheduler;
 * - `affinity`: every required node-affinity term pins the same single node with `matchFields metadata.name In
 *   [node]` — how the DaemonSet controller creates its pods (it adds that field selector to each term). The
 *   scheduler still binds such a pod, and honours any further requirement added to those terms.
 * Otherwise unknown: the scheduler decides later.
 */
export interface TargetNode {
  readonly name: string;
  readonly by: 'nodeName' | 'affinity';
}

export function targetNode(pod: Pod): TargetNode | undefined {
  if (pod.spec.nodeName) return { name: pod.spec.nodeName, by: 'nodeName' };
  const terms = pod.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
  if (!terms || terms.length === 0) return undefined;
  let node: string | undefined;
  for (const term of terms) {
    const pin = term.matchFields?.find(
      (f) => f.key === 'metadata.name' && f.operator === 'In' && f.values?.length === 1,
    );
    const name = pin?.values?.[0];
    if (name === undefined) return undefined;
    if (node !== undefined && node !== name) return undefined;
    node = name;
  }
  return node === undefined ? undefined : { name: node, by: 'affinity' };
}

/**
 * True when every required node-affinity term of the pod holds `key In [value]`, so the scheduler can bind it only
 * to a node with that label (terms are ORed, expressions within one ANDed). False with no terms.
 */
export function requiresNodeLabel(pod: Pod, key: string, value: string): boolean {
  const terms = pod.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
  if (!terms || terms.length === 0) return false;
  return terms.every((term) => termRequiresLabel(term, key, value));
}

/** True when the term holds the expression `key In [value]`. */
export function termRequiresLabel(term: NodeSelectorTerm, key: string, value: string): boolean {
  return (
    term.matchExpressions?.some(
      (e) => e.key === key && e.operator === 'In' && e.values?.length === 1 && e.values[0] === value,
    ) ?? false
  );
}
