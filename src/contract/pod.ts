/**
 * The parts of a Pod meshgate reads. Admission bodies are JSON from the apiserver and every field a pod may carry
 * must survive untouched, so unknown fields are kept as `unknown`. Values of this type come only from
 * `parsePod` (src/pod/parse.ts), which checks the shape of every field meshgate reads or patches.
 */

export interface Capabilities {
  add?: string[];
  drop?: string[];
}

export interface SecurityContext {
  runAsUser?: number;
  runAsGroup?: number;
  runAsNonRoot?: boolean;
  privileged?: boolean;
  allowPrivilegeEscalation?: boolean;
  readOnlyRootFilesystem?: boolean;
  capabilities?: Capabilities;
  [key: string]: unknown;
}

export interface PodSecurityContext {
  runAsUser?: number;
  runAsGroup?: number;
  fsGroup?: number;
  supplementalGroups?: number[];
  [key: string]: unknown;
}

export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: unknown;
}

export interface Container {
  name: string;
  image?: string;
  command?: string[];
  args?: string[];
  env?: EnvVar[];
  restartPolicy?: string;
  securityContext?: SecurityContext;
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
  ephemeralContainers?: Container[];
  volumes?: Array<{ name: string; [key: string]: unknown }>;
  nodeName?: string;
  hostNetwork?: boolean;
  securityContext?: PodSecurityContext;
  imagePullSecrets?: Array<{ name?: string }>;
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
  uid?: string;
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

/** The three lists a pod's containers live in; ephemeral containers run in the pod's network namespace too. */
export type ContainerList = 'initContainers' | 'containers' | 'ephemeralContainers';
export const CONTAINER_LISTS: readonly ContainerList[] = ['initContainers', 'containers', 'ephemeralContainers'];

/** Name to show for a pod in messages: its name, or its generateName prefix while it has none yet. */
export function podDisplayName(pod: { metadata?: ObjectMeta }): string {
  return pod.metadata?.name || (pod.metadata?.generateName ? `${pod.metadata.generateName}*` : '<unnamed>');
}

/** Names of every container and init container of the pod: one set for many lookups, each O(1). */
export function containerNames(pod: Pod): Set<string> {
  const names = new Set<string>();
  for (const c of pod.spec.containers) names.add(c.name);
  for (const c of pod.spec.initContainers ?? []) names.add(c.name);
  return names;
}
