/**
 * The parts of a Pod meshgate reads, typed loosely: admission bodies are JSON from the apiserver, and every
 * field a pod may carry must survive untouched, so unknown fields are kept as `unknown`.
 */
import { isObject } from '../util/json.ts';

export interface Container {
  name: string;
  image?: string;
  restartPolicy?: string;
  [key: string]: unknown;
}

export interface NodeSelectorRequirement {
  key: string;
  operator: string;
  values?: string[];
}

export interface NodeSelectorTerm {
  matchExpressions?: NodeSelectorRequirement[];
  matchFields?: NodeSelectorRequirement[];
}

export interface PodSpec {
  containers: Container[];
  initContainers?: Container[];
  volumes?: Array<{ name: string; [key: string]: unknown }>;
  nodeName?: string;
  hostNetwork?: boolean;
  affinity?: {
    nodeAffinity?: {
      requiredDuringSchedulingIgnoredDuringExecution?: { nodeSelectorTerms?: NodeSelectorTerm[] };
      [key: string]: unknown;
    };
    [key: string]: unknown;
  };
  [key: string]: unknown;
}

export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  [key: string]: unknown;
}

export interface Pod {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  spec: PodSpec;
  [key: string]: unknown;
}

/** Name to show for a pod in messages: its name, or its generateName prefix while it has none yet. */
export function podDisplayName(pod: { metadata?: ObjectMeta }): string {
  return pod.metadata?.name || (pod.metadata?.generateName ? `${pod.metadata.generateName}*` : '<unnamed>');
}

export function findContainer(pod: Pod, name: string): { list: 'containers' | 'initContainers'; index: number } | undefined {
  const i = pod.spec.containers?.findIndex((c) => c.name === name) ?? -1;
  if (i >= 0) return { list: 'containers', index: i };
  const j = pod.spec.initContainers?.findIndex((c) => c.name === name) ?? -1;
  if (j >= 0) return { list: 'initContainers', index: j };
  return undefined;
}

/** Names of every container and init container of the pod, for many lookups (findContainer answers one). */
export function containerNames(pod: Pod): Set<string> {
  const names = new Set<string>();
  for (const c of pod.spec.containers) names.add(c.name);
  for (const c of pod.spec.initContainers ?? []) names.add(c.name);
  return names;
}

/** Node selector requirements: mappings with string key and operator and, optionally, a list of strings. */
function requirements(v: unknown): boolean {
  return v === undefined || (Array.isArray(v) && v.every((r) => isObject(r) && typeof r.key === 'string' && typeof r.operator === 'string'
    && (r.values === undefined || (Array.isArray(r.values) && r.values.every((x) => typeof x === 'string')))));
}

function namedList(v: unknown): boolean {
  return Array.isArray(v) && v.every((x) => isObject(x) && typeof x.name === 'string');
}

/**
 * Why a value is not a pod meshgate can patch, or undefined. The apiserver only sends valid pods, but the
 * handlers are also reachable by anything that can POST, and every field an op touches must have the shape
 * the op assumes, or the patch would not apply.
 */
export function podShapeProblem(value: unknown): string | undefined {
  if (!isObject(value)) return 'the object is not a mapping';
  const { metadata, spec } = value;
  if (metadata !== undefined) {
    if (!isObject(metadata)) return 'metadata is not a mapping';
    if (metadata.labels !== undefined && !isObject(metadata.labels)) return 'metadata.labels is not a mapping';
    if (metadata.annotations !== undefined && !isObject(metadata.annotations)) return 'metadata.annotations is not a mapping';
  }
  if (!isObject(spec)) return 'spec is missing';
  if (!namedList(spec.containers)) return 'spec.containers is not a list of named containers';
  if (spec.initContainers !== undefined && !namedList(spec.initContainers)) return 'spec.initContainers is not a list of named containers';
  if (spec.volumes !== undefined && !namedList(spec.volumes)) return 'spec.volumes is not a list of named volumes';
  if (spec.nodeName !== undefined && typeof spec.nodeName !== 'string') return 'spec.nodeName is not a string';
  const affinity = spec.affinity;
  if (affinity !== undefined) {
    if (!isObject(affinity)) return 'spec.affinity is not a mapping';
    const na = affinity.nodeAffinity;
    if (na !== undefined) {
      if (!isObject(na)) return 'spec.affinity.nodeAffinity is not a mapping';
      const req = na.requiredDuringSchedulingIgnoredDuringExecution;
      if (req !== undefined) {
        if (!isObject(req)) return 'spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution is not a mapping';
        const terms = req.nodeSelectorTerms;
        if (terms !== undefined && (!Array.isArray(terms) || !terms.every((t) => isObject(t) && requirements(t.matchExpressions) && requirements(t.matchFields)))) {
          return 'spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms is not a list of terms';
        }
      }
    }
  }
  return undefined;
}
