/**
 * The parts of a Pod meshgate reads, typed loosely: admission bodies are JSON from the apiserver, and every
 * field a pod may carry must survive untouched, so unknown fields are kept as `unknown`.
 */
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

export function isPodShaped(value: unknown): value is Pod {
  if (typeof value !== 'object' || value === null) return false;
  const spec = (value as { spec?: unknown }).spec;
  return typeof spec === 'object' && spec !== null && Array.isArray((spec as { containers?: unknown }).containers);
}
