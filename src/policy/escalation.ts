/**
 * Who can become the proxy (docs/security.md, "Who can become the proxy"). The redirect exempts the proxy's UID
 * (and Istio's GID too), so any process that runs as it, or can switch to it, sends past the proxy: a root
 * container keeps the runtime's default CAP_SETUID/CAP_SETGID and can `setuid(1337)`; any container whose
 * privilege escalation is allowed can run a set-user-ID binary owned by 1337 from its image; a container whose UID
 * the spec leaves to its image may simply be 1337; root with CAP_NET_RAW writes packets the nat rules never see.
 *
 * Under `apps.privileges: restricted` every container that is not the mesh's must provably do none of that:
 *   1. its UID is known: `runAsUser` on the container or the pod (admission cannot read an image's USER);
 *   2. where the mesh exempts a GID (Istio), its GID is known too (`runAsGroup`): the image's passwd entry decides
 *      it otherwise;
 *   3. `allowPrivilegeEscalation: false` (no set-user-ID binaries);
 *   4. SETUID, SETGID and NET_RAW are not in its capability set (drop them, or ALL), as the runtime on its node reads
 *      the names (containerd drops `CAP_SETUID` as the unknown `CAP_CAP_SETUID`) — whatever its UID: the runtime
 *      hands a non-root process its capability set as permitted before the first execve, and a file capability on
 *      the entrypoint (which the pod's `command` chooses) keeps them even under no_new_privs (the kernel only
 *      intersects gained capabilities with the permitted set the process had: security/commoncap.c).
 * The explicit proxy UID/GID and network-admin rights are refused under every setting (src/policy/rules.ts).
 */
import type { MeshIdentity } from '../mesh/types.ts';
import type { NodeFacts } from '../facts/node-facts.ts';
import { type CapabilityReading, capabilityReading, holdsCapability } from '../pod/capabilities.ts';
import { effectiveGroup, effectiveUser } from '../pod/security.ts';
import type { Container, Pod } from '../contract/pod.ts';

/** What no container may hold: a way to any UID, to any GID, and to packets past the nat table. */
const MUST_LACK = ['SETUID', 'SETGID', 'NET_RAW'] as const;

/**
 * How the runtime on the pod's node reads its capabilities (issue 33 §5, src/pod/capabilities.ts): known only for a
 * pod bound to a node the cache knows; a pod the scheduler has yet to place, or a node reporting another runtime,
 * gets the strictest reading.
 */
export function podCapabilityReading(pod: Pod, nodes: NodeFacts): CapabilityReading {
  const node = pod.spec.nodeName;
  return node ? capabilityReading(nodes.get(node)?.runtimeVersion) : 'strictest';
}

/**
 * Why this container could run as, or become, the proxy's identity; undefined when it provably cannot. The text
 * completes "container app …".
 */
export function escalationProblem(
  pod: Pod,
  c: Container,
  id: Pick<MeshIdentity, 'proxyUid' | 'proxyGid'>,
  reading: CapabilityReading = 'strictest',
): string | undefined {
  const uid = effectiveUser(pod, c);
  if (uid === undefined)
    return (
      `sets no runAsUser (nor does the pod): it runs as its image's USER, which admission cannot see ` +
      `and which could be the proxy's UID ${id.proxyUid}`
    );
  if (id.proxyGid !== undefined && effectiveGroup(pod, c) === undefined)
    return (
      `sets no runAsGroup (nor does the pod): its group comes from its image and could be ` +
      `the proxy's GID ${id.proxyGid}`
    );
  if (c.securityContext?.allowPrivilegeEscalation !== false)
    return (
      'does not set allowPrivilegeEscalation: false, so a set-user-ID binary or file capability in its image ' +
      `could switch it to the proxy's UID ${id.proxyUid}`
    );
  const held = MUST_LACK.filter((cap) => holdsCapability(c, cap, reading));
  if (held.length > 0)
    return (
      `holds ${held.join(', ')} (the runtime's default set): ${uid === 0 ? 'as root' : 'through a file capability on its entrypoint'} ` +
      `it can switch to the proxy's UID ${id.proxyUid} or send raw packets past the redirect; ` +
      `drop ${MUST_LACK.join(', ')} (or ALL)`
    );
  return undefined;
}
