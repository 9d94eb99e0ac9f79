/**
 * Bounds on what one review may cost meshgate, each checked before the work it bounds (issue 21: a 0.9 MB review
 * held the event loop for 22.9 s). The apiserver stores pods of up to ~1.5 MiB (etcd's request limit) but hands a
 * mutating webhook anything under its 3 MiB request limit. Most of meshgate's work is linear in the pod and cheap
 * per field; bounded here are what grows with the pod beyond that: the node requirement ANDed into every required
 * node-selector term (one op per term: 120,000 empty terms made a 36 MB patch), and what meshgate parses on a
 * mesh's behalf (annotation values, the mesh containers' command lines), whose cost and whose quotes in messages
 * grow with their text. Lists inside those values are bounded by util/values.ts MAX_LIST_ENTRIES.
 */
import type { Compiled } from '../config/compile.ts';
import { STATUS_ANNOTATION } from '../contract/names.ts';
import { CONTAINER_LISTS, type Container, type Pod } from '../contract/pod.ts';
import { describeFound } from './identify.ts';

/**
 * The scheduler ORs a pod's node-selector terms; real pods carry a handful. 64 leaves room for generated
 * affinities and keeps the patch under ~8 KB of affinity ops.
 */
export const MAX_NODE_SELECTOR_TERMS = 64;

/** Far above any real patch (about a dozen ops plus one per term): a ceiling for whatever the builders emit. */
export const MAX_PATCH_OPS = 256;

export function nodeSelectorTermCount(spec: {
  affinity?: { nodeAffinity?: { requiredDuringSchedulingIgnoredDuringExecution?: { nodeSelectorTerms?: unknown[] } } };
}): number {
  return spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms?.length ?? 0;
}

/**
 * Arguments of a container under the mesh's proxy, init or validator name, which the flag readers and contracts parse
 * before that container is judged: istiod 1.27 gives istio-init 20, Linkerd's injector gives linkerd-init 16. 256
 * leaves room for templates that add flags and for flags given twice.
 */
export const MAX_MESH_ARGS = 256;

/**
 * Environment variables of such a container (istio-iptables takes flags from them too): istiod gives istio-init none
 * and istio-proxy ~25 plus the mesh's proxyMetadata, Linkerd's proxy ~55.
 */
export const MAX_MESH_ENV = 256;

/**
 * Entries of each other list of such a container that its contract walks (volumeMounts, ports, envFrom,
 * volumeDevices, resizePolicy) and capabilities dropped (issue 33 §7: 60,000 proxy volumeMounts, each a valid
 * user mount, cost 220-420 ms of CPU per review). istiod writes about ten mounts and one port on istio-proxy,
 * Linkerd's injector four mounts and two ports; sidecar.istio.io/userVolumeMount adds a few. 256 is far beyond both.
 */
export const MAX_MESH_LIST = 256;

/** The lists of a mesh container bounded by MAX_MESH_LIST, with how a message names each. */
const MESH_LISTS = [
  ['volumeMounts', 'volume mounts'],
  ['ports', 'ports'],
  ['envFrom', 'envFrom sources'],
  ['volumeDevices', 'volume devices'],
  ['resizePolicy', 'resize policies'],
] as const;

/**
 * Characters of such a container's arguments and variable values together. The longest real value is an exclusion
 * list at its entry cap (util/values.ts MAX_LIST_ENTRIES: 256 IPv6 CIDRs of at most 43 characters, 11 KiB), and
 * istio-init takes four lists; what is read is also quoted back in messages, so it is bounded before it is read.
 */
export const MAX_MESH_TEXT = 64 * 1024;

/**
 * Characters of one annotation value meshgate or the mesh profile reads: an exclusion list at its entry cap is the
 * longest (11 KiB); sidecar.istio.io/status, which meshgate parses as JSON and writes back, is a few hundred
 * characters as istiod writes it, meshgate.io/status under 1 KiB.
 */
export const MAX_ANNOTATION_VALUE = 16 * 1024;

/**
 * Capabilities one container may add, and may drop: Linux names 41 (CAP_CHOWN to CAP_CHECKPOINT_RESTORE), so 128 holds each
 * spelled with and without `CAP_`, and ALL. Every container's list is read (src/policy/rules.ts: who may rewrite
 * the network), one name at a time.
 */
export const MAX_CAPABILITIES = 128;

/** Whether any of the pod's annotations holds more than `max` characters. */
function someValueOver(annotations: Readonly<Record<string, string>>, max: number): boolean {
  for (const k in annotations) if ((annotations[k]?.length ?? 0) > max) return true;
  return false;
}

/** Why the annotation `key` is too long to be read, if it is. */
function annotationTooLong(annotations: Readonly<Record<string, string>>, key: string): string | undefined {
  const n = annotations[key]?.length ?? 0;
  if (n <= MAX_ANNOTATION_VALUE) return undefined;
  return `annotation ${key} holds ${n} characters; meshgate reads at most ${MAX_ANNOTATION_VALUE} of an annotation it parses`;
}

/**
 * Why a container under the mesh's proxy, init or validator name is too large for its command line to be read, as the
 * rest of a sentence that starts with the container.
 */
function meshContainerTooLarge(c: Container): string | undefined {
  const args = c.args?.length ?? 0;
  const env = c.env?.length ?? 0;
  const ours = "for the mesh's own containers";
  if (args > MAX_MESH_ARGS) return ` has ${args} arguments; meshgate reads at most ${MAX_MESH_ARGS} ${ours}`;
  if (env > MAX_MESH_ENV) return ` has ${env} environment variables; meshgate reads at most ${MAX_MESH_ENV} ${ours}`;
  for (const [field, what] of MESH_LISTS) {
    const list = (c as Record<string, unknown>)[field];
    const n = Array.isArray(list) ? list.length : 0;
    if (n > MAX_MESH_LIST) return ` has ${n} ${what}; meshgate reads at most ${MAX_MESH_LIST} ${ours}`;
  }
  let text = 0;
  for (const a of c.args ?? []) text += a.length;
  for (const e of c.env ?? []) text += e.value?.length ?? 0;
  if (text > MAX_MESH_TEXT)
    return `'s arguments and environment values hold ${text} characters; meshgate reads at most ${MAX_MESH_TEXT} ${ours}`;
  return undefined;
}

/**
 * Why the pod is too large to be read, found before anything parses it: an annotation meshgate reads (its
 * status under every profile, then the profile's), the command line of a container under the mesh's init or
 * validator name, any container's added capabilities. Counts only: constant work per annotation key and per
 * container, and per argument of those few containers. On every review: no allocation unless a bound is passed.
 */
export function tooLargeToRead(pod: Pod, cfg: Compiled): string | undefined {
  const annotations = pod.metadata?.annotations;
  // The keys meshgate reads are looked up in order only when some value is that long (most pods: none is).
  if (annotations && someValueOver(annotations, MAX_ANNOTATION_VALUE)) {
    const status = annotationTooLong(annotations, STATUS_ANNOTATION);
    if (status) return status;
    for (const key of cfg.profile.annotations) {
      const problem = annotationTooLong(annotations, key);
      if (problem) return problem;
    }
  }
  const { proxy, init, validator } = cfg.names;
  for (const list of CONTAINER_LISTS) {
    const containers = pod.spec[list];
    if (!containers) continue;
    for (const container of containers) {
      const caps = container.securityContext?.capabilities;
      const adds = caps?.add?.length ?? 0;
      const drops = caps?.drop?.length ?? 0;
      if (adds > MAX_CAPABILITIES || drops > MAX_CAPABILITIES) {
        const [verb, n] = adds > MAX_CAPABILITIES ? ['adds', adds] : ['drops', drops];
        return `${describeFound({ list, container })} ${verb} ${n} capabilities; meshgate reads at most ${MAX_CAPABILITIES} (Linux has 41)`;
      }
      const problem =
        container.name === proxy || container.name === init || container.name === validator
          ? meshContainerTooLarge(container)
          : undefined;
      if (problem) return `${describeFound({ list, container })}${problem}`;
    }
  }
  return undefined;
}
