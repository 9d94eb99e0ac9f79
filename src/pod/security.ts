/**
 * What a container really runs as, from the fields Kubernetes uses: the container's securityContext overrides
 * the pod's. A UID or GID that neither sets comes from the image, which admission cannot see; callers treat
 * `undefined` as "not known here" (see the threat model in the README).
 */
import type { Capabilities, Container, Pod } from '../contract/pod.ts';

export function effectiveUser(pod: Pod, c: Container): number | undefined {
  return c.securityContext?.runAsUser ?? pod.spec.securityContext?.runAsUser;
}

export function effectiveGroup(pod: Pod, c: Container): number | undefined {
  return c.securityContext?.runAsGroup ?? pod.spec.securityContext?.runAsGroup;
}

/**
 * Capabilities added to the container's bounding set (upper-cased, `CAP_` prefix removed, as the runtime reads
 * them).
 */
export function addedCapabilities(c: Container): Set<string> {
  return capabilitySet(c.securityContext?.capabilities?.add);
}

export function droppedCapabilities(c: Container): Set<string> {
  return capabilitySet(c.securityContext?.capabilities?.drop);
}

function capabilitySet(list: Capabilities['add']): Set<string> {
  return new Set((list ?? []).map((cap) => cap.toUpperCase().replace(/^CAP_/, '')));
}

/**
 * Whether the container can change the pod's network configuration (flush or rewrite the redirect rules):
 * privileged, or NET_ADMIN / SYS_ADMIN added (or ALL). Only the mesh's own init container may.
 */
export function canRewriteNetwork(c: Container): string | undefined {
  if (c.securityContext?.privileged === true) return 'runs privileged';
  const added = addedCapabilities(c);
  for (const cap of ['ALL', 'NET_ADMIN', 'SYS_ADMIN']) if (added.has(cap)) return `adds capability ${cap}`;
  return undefined;
}
