/**
 * The parts of a Pod meshgate reads, declared once in the shape language (contract/shape.ts): the types below are inferred from this
 * declaration, and `parsePod` (src/pod/parse.ts) checks a value against the same declaration, so values of these types
 * come only from it. Admission bodies are JSON from the apiserver and every field a pod may carry must survive
 * untouched, so the mappings a patch passes through are open (their other fields are kept, typed unknown). Fields
 * are checked in the order written: a pod's first problem is the one reported.
 */
import {
  boolean,
  type Infer,
  integer,
  list,
  mapping,
  nonEmptyString,
  open,
  optional,
  string,
  stringMap,
} from './shape.ts';

const strings = list(string());

const CAPABILITIES = mapping({ add: optional(strings), drop: optional(strings) });

const SECURITY_CONTEXT = open({
  runAsUser: optional(integer()),
  runAsGroup: optional(integer()),
  runAsNonRoot: optional(boolean()),
  privileged: optional(boolean()),
  allowPrivilegeEscalation: optional(boolean()),
  capabilities: optional(CAPABILITIES),
  readOnlyRootFilesystem: optional(boolean()),
});

const POD_SECURITY_CONTEXT = open({
  runAsUser: optional(integer()),
  runAsGroup: optional(integer()),
  fsGroup: optional(integer()),
  supplementalGroups: optional(list(integer())),
});

/** `valueFrom` and the rest are kept as they are. */
const ENV_VAR = open({ name: string(), value: optional(string()) });

const CONTAINER = open(
  {
    name: nonEmptyString(),
    image: optional(string()),
    command: optional(strings),
    args: optional(strings),
    env: optional(list(ENV_VAR)),
    restartPolicy: optional(string()),
    securityContext: optional(SECURITY_CONTEXT),
    /** Ephemeral containers only: whose namespaces (processes) it shares (`kubectl debug --target`). */
    targetContainerName: optional(string()),
  },
  { what: 'a container (a mapping)' },
);
const CONTAINERS = list(CONTAINER);

const REQUIREMENT = mapping({ key: string(), operator: string(), values: optional(strings) });
const SELECTOR_TERM = mapping({
  matchExpressions: optional(list(REQUIREMENT)),
  matchFields: optional(list(REQUIREMENT)),
});

const POD_SPEC = open({
  containers: CONTAINERS,
  initContainers: optional(CONTAINERS),
  ephemeralContainers: optional(CONTAINERS),
  volumes: optional(list(open({ name: string() }))),
  nodeName: optional(string()),
  hostNetwork: optional(boolean()),
  securityContext: optional(POD_SECURITY_CONTEXT),
  /** A LocalObjectReference: Kubernetes defaults a missing name to "" (no Secret), so it may be absent. */
  imagePullSecrets: optional(list(mapping({ name: optional(string()) }))),
  affinity: optional(
    open({
      nodeAffinity: optional(
        open({
          requiredDuringSchedulingIgnoredDuringExecution: optional(
            mapping({ nodeSelectorTerms: optional(list(SELECTOR_TERM)) }),
          ),
        }),
      ),
    }),
  ),
});

/** labels and annotations: the apiserver guarantees string values; anything else is named, never coerced. */
const OBJECT_META = open({
  labels: optional(stringMap()),
  annotations: optional(stringMap()),
  name: optional(string()),
  generateName: optional(string()),
  namespace: optional(string()),
  uid: optional(string()),
});

/** The declaration parsePod checks. */
export const POD = open({
  metadata: optional(OBJECT_META),
  spec: POD_SPEC,
  apiVersion: optional(string()),
  kind: optional(string()),
});

export type Capabilities = Infer<typeof CAPABILITIES>;
export type SecurityContext = Infer<typeof SECURITY_CONTEXT>;
export type PodSecurityContext = Infer<typeof POD_SECURITY_CONTEXT>;
export type EnvVar = Infer<typeof ENV_VAR>;
export type Container = Infer<typeof CONTAINER>;
export type NodeSelectorRequirement = Infer<typeof REQUIREMENT>;
export type NodeSelectorTerm = Infer<typeof SELECTOR_TERM>;
export type PodSpec = Infer<typeof POD_SPEC>;
export type ObjectMeta = Infer<typeof OBJECT_META>;
export type Pod = Infer<typeof POD>;

/** The three lists a pod's containers live in; ephemeral containers run in the pod's network namespace too. */
export type ContainerList = 'initContainers' | 'containers' | 'ephemeralContainers';
export const CONTAINER_LISTS: readonly ContainerList[] = ['initContainers', 'containers', 'ephemeralContainers'];

/** Name to show for a pod in messages: its name, or its generateName prefix while it has none yet. */
export function podDisplayName(pod: { metadata?: ObjectMeta }): string {
  return pod.metadata?.name || (pod.metadata?.generateName ? `${pod.metadata.generateName}*` : '<unnamed>');
}

/**
 * Every container of the pod, in all three lists and in the order they start: init containers, containers, then
 * ephemeral ones. The one answer to "which containers are in the pod": an ephemeral container (`kubectl debug`)
 * runs in the pod's namespaces like any other, so no question about the pod's containers may leave it out (issue 33).
 */
export function everyContainer(pod: Pod): readonly Container[] {
  return CONTAINER_LISTS.flatMap((list) => pod.spec[list] ?? []);
}

/** Names of every container of the pod (ephemeral ones included): one set for many lookups, each O(1). */
export function containerNames(pod: Pod): Set<string> {
  return new Set(everyContainer(pod).map((c) => c.name));
}
