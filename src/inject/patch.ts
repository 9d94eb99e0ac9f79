/**
 * JSON Patch operations built directly from what is added or removed (RFC 6902). Never a diff of whole pods:
 * diffing is quadratic in pod size (Istio's and controller-runtime's multi-second injections of pods with many
 * env vars). Each builder knows whether its parent exists, since `add` into a missing object fails.
 */
import type { Pod, Container } from './pod.ts';

export type PatchOp =
  | { op: 'add'; path: string; value: unknown }
  | { op: 'remove'; path: string }
  | { op: 'replace'; path: string; value: unknown };

/** RFC 6901 escaping: `~` → `~0`, `/` → `~1` (label keys like meshgate.io/status contain slashes). */
export function escapePointer(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** Sets string entries of metadata.labels or metadata.annotations, creating the map when absent. */
export function setMetadataEntries(pod: Pod, field: 'labels' | 'annotations', entries: Record<string, string>): PatchOp[] {
  const existing = pod.metadata?.[field];
  const changed = Object.entries(entries).filter(([k, v]) => existing?.[k] !== v);
  if (changed.length === 0) return [];
  if (!pod.metadata) return [{ op: 'add', path: '/metadata', value: { [field]: Object.fromEntries(changed) } }];
  if (!existing) return [{ op: 'add', path: `/metadata/${field}`, value: Object.fromEntries(changed) }];
  // `add` on an existing member replaces it (RFC 6902 §4.1), so one op shape serves both cases.
  return changed.map(([k, v]) => ({ op: 'add', path: `/metadata/${field}/${escapePointer(k)}`, value: v }));
}

/** Inserts containers at the front of spec.initContainers, in the given order. */
export function prependInitContainers(pod: Pod, containers: Container[], at = 0): PatchOp[] {
  if (containers.length === 0) return [];
  if (!pod.spec.initContainers || (pod.spec.initContainers.length === 0 && at === 0)) {
    return [{ op: pod.spec.initContainers ? 'replace' : 'add', path: '/spec/initContainers', value: containers } as PatchOp];
  }
  return containers.map((c, i) => ({ op: 'add', path: `/spec/initContainers/${at + i}`, value: c }));
}

export function appendContainer(c: Container): PatchOp {
  return { op: 'add', path: '/spec/containers/-', value: c };
}

export function removeInitContainer(index: number): PatchOp {
  return { op: 'remove', path: `/spec/initContainers/${index}` };
}

export function appendVolumes(pod: Pod, volumes: Array<{ name: string }>): PatchOp[] {
  if (volumes.length === 0) return [];
  if (!pod.spec.volumes) return [{ op: 'add', path: '/spec/volumes', value: volumes }];
  return volumes.map((v) => ({ op: 'add', path: '/spec/volumes/-', value: v }));
}

/**
 * Requires a node label for scheduling. Node selector terms are ORed and expressions within a term ANDed, so
 * the requirement is added to every existing term; with no terms, one term holding only it is created.
 */
export function requireNodeLabel(pod: Pod, key: string, value: string): PatchOp[] {
  const expr = { key, operator: 'In', values: [value] };
  const affinity = pod.spec.affinity;
  const required = affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
  const fresh = { nodeSelectorTerms: [{ matchExpressions: [expr] }] };
  if (!affinity) return [{ op: 'add', path: '/spec/affinity', value: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: fresh } } }];
  if (!affinity.nodeAffinity) return [{ op: 'add', path: '/spec/affinity/nodeAffinity', value: { requiredDuringSchedulingIgnoredDuringExecution: fresh } }];
  const base = '/spec/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution';
  if (!required) return [{ op: 'add', path: base, value: fresh }];
  const terms = required.nodeSelectorTerms;
  if (!terms || terms.length === 0) return [{ op: terms ? 'replace' : 'add', path: `${base}/nodeSelectorTerms`, value: fresh.nodeSelectorTerms } as PatchOp];
  const ops: PatchOp[] = [];
  terms.forEach((term, i) => {
    const has = term.matchExpressions?.some((e) => e.key === key && e.operator === 'In' && e.values?.length === 1 && e.values[0] === value);
    if (has) return;
    ops.push(
      term.matchExpressions
        ? { op: 'add', path: `${base}/nodeSelectorTerms/${i}/matchExpressions/-`, value: expr }
        : { op: 'add', path: `${base}/nodeSelectorTerms/${i}/matchExpressions`, value: [expr] },
    );
  });
  return ops;
}
