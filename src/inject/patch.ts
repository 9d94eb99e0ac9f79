/**
 * JSON Patch operations built directly from what is added or removed (RFC 6902). Never a diff of whole pods:
 * diffing is quadratic in pod size (Istio's and controller-runtime's multi-second injections of pods with many
 * env vars). Each builder knows whether its parent exists, since `add` into a missing object fails.
 */
import type { Pod, Container } from './pod.ts';
import { deepFreeze } from '../util/json.ts';
import { sharedOp } from './shared-op.ts';
import { cached } from '../util/cache.ts';

export type PatchOp =
  | { op: 'add'; path: string; value: unknown }
  | { op: 'remove'; path: string }
  | { op: 'replace'; path: string; value: unknown };

/** RFC 6901 escaping: `~` → `~0`, `/` → `~1` (label keys like meshgate.io/status contain slashes). */
export function escapePointer(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}

const FIELD_PATHS = { labels: '/metadata/labels', annotations: '/metadata/annotations' } as const;

/** Escaped pointers to metadata entries, per field and key: the same few keys in every review. */
const entryPaths = { labels: new Map<string, string>(), annotations: new Map<string, string>() };

function entryPath(field: 'labels' | 'annotations', key: string): string {
  return cached(entryPaths[field], key, (k) => `/metadata/${field}/${escapePointer(k)}`, 1024);
}

/**
 * Sets string entries of metadata.labels and metadata.annotations, creating metadata or either map when
 * absent (one op per missing parent, so two maps never race to create the same parent).
 */
export function setMetadataEntries(pod: Pod, entries: Partial<Record<'labels' | 'annotations', Record<string, string>>>): PatchOp[] {
  const meta = pod.metadata;
  if (!meta) return [{ op: 'add', path: '/metadata', value: entries }];
  const ops: PatchOp[] = [];
  for (const field of ['labels', 'annotations'] as const) {
    const want = entries[field];
    if (!want) continue;
    const existing = meta[field];
    if (!existing) {
      ops.push(sharedOp('add', FIELD_PATHS[field], want));
      continue;
    }
    // `add` on an existing member replaces it (RFC 6902 §4.1), so one op shape serves both cases.
    for (const key in want) if (existing[key] !== want[key]) ops.push(sharedOp('add', entryPath(field, key), want[key]));
  }
  return ops;
}

/** Inserts containers at the front of spec.initContainers, in the given order. */
export function prependInitContainers(pod: Pod, containers: readonly Container[], at = 0): PatchOp[] {
  if (containers.length === 0) return [];
  if (!pod.spec.initContainers || (pod.spec.initContainers.length === 0 && at === 0)) {
    return [sharedOp(pod.spec.initContainers ? 'replace' : 'add', '/spec/initContainers', containers)];
  }
  return containers.map((c, i) => sharedOp('add', `/spec/initContainers/${at + i}`, c));
}

export function appendContainer(c: Container): PatchOp {
  return sharedOp('add', '/spec/containers/-', c);
}

export function removeInitContainer(index: number): PatchOp {
  return sharedOp('remove', `/spec/initContainers/${index}`);
}

export function appendVolumes(pod: Pod, volumes: ReadonlyArray<{ name: string }>): PatchOp[] {
  if (volumes.length === 0) return [];
  if (!pod.spec.volumes) return [sharedOp('add', '/spec/volumes', volumes)];
  return volumes.map((v) => sharedOp('add', '/spec/volumes/-', v));
}

/** The values requireNodeLabel adds, built once per label and frozen, so their JSON is cached (util/json.ts). */
const requirements = new Map<string, Map<string, ReturnType<typeof buildRequirement>>>();

function buildRequirement(key: string, value: string) {
  const expr = { key, operator: 'In', values: [value] };
  const fresh = { nodeSelectorTerms: [{ matchExpressions: [expr] }] };
  const nodeAffinity = { requiredDuringSchedulingIgnoredDuringExecution: fresh };
  return deepFreeze({ expr, fresh, nodeAffinity, affinity: { nodeAffinity } });
}

function requirement(key: string, value: string): ReturnType<typeof buildRequirement> {
  const byValue = cached(requirements, key, () => new Map<string, ReturnType<typeof buildRequirement>>(), 64);
  return cached(byValue, value, (v) => buildRequirement(key, v), 64);
}

/**
 * Requires a node label for scheduling. Node selector terms are ORed and expressions within a term ANDed, so
 * the requirement is added to every existing term; with no terms, one term holding only it is created.
 */
export function requireNodeLabel(pod: Pod, key: string, value: string): PatchOp[] {
  const { expr, fresh, nodeAffinity, affinity: freshAffinity } = requirement(key, value);
  const affinity = pod.spec.affinity;
  const required = affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
  if (!affinity) return [sharedOp('add', '/spec/affinity', freshAffinity)];
  if (!affinity.nodeAffinity) return [sharedOp('add', '/spec/affinity/nodeAffinity', nodeAffinity)];
  const base = '/spec/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution';
  if (!required) return [sharedOp('add', base, fresh)];
  const terms = required.nodeSelectorTerms;
  if (!terms || terms.length === 0) return [sharedOp(terms ? 'replace' : 'add', `${base}/nodeSelectorTerms`, fresh.nodeSelectorTerms)];
  const ops: PatchOp[] = [];
  terms.forEach((term, i) => {
    const has = term.matchExpressions?.some((e) => e.key === key && e.operator === 'In' && e.values?.length === 1 && e.values[0] === value);
    if (has) return;
    ops.push(
      term.matchExpressions
        ? sharedOp('add', `${base}/nodeSelectorTerms/${i}/matchExpressions/-`, expr)
        : { op: 'add', path: `${base}/nodeSelectorTerms/${i}/matchExpressions`, value: [expr] },
    );
  });
  return ops;
}
