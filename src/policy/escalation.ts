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
 *   4. SETUID, SETGID and NET_RAW are not in its capability set (drop them, or ALL) — whatever its UID: the runtime
 *      hands a non-root process its capability set as permitted before the first execve, and a file capability on
 *      the entrypoint (which the pod's `command` chooses) keeps them even under no_new_privs (the kernel only
 *      intersects gained capabilities with the permitted set the process had: security/commoncap.c).
 * Under `apps.privileges: node` (the default) admission refuses only what the spec itself states: SETUID or SETGID
 * added by name (`statedEscalationProblem`). What only the node can see — the image's USER, the runtime's default
 * capabilities of a root container, set-user-ID binaries and file capabilities — is the node side's to prove on the
 * pods meshgate guards (docs/security.md "Who can become the proxy").
 * The explicit proxy UID/GID and network-admin rights are refused under every setting (src/policy/rules.ts).
 */
import type { AppPrivileges } from '../config/types.ts';
import type { MeshIdentity } from '../mesh/types.ts';
import { holdsCapability } from '../pod/capabilities.ts';
import { addedCapabilities, effectiveGroup, effectiveUser } from '../pod/security.ts';
import type { Container, Pod } from '../contract/pod.ts';

/** What no container may hold: a way to any UID, to any GID, and to packets past the nat table. */
const MUST_LACK = ['SETUID', 'SETGID', 'NET_RAW'] as const;

/**
 * Why this container could run as, or become, the proxy's identity; undefined when it provably cannot. The text
 * completes "container app …".
 */
export function escalationProblem(
  pod: Pod,
  c: Container,
  id: Pick<MeshIdentity, 'proxyUid' | 'proxyGid'>,
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
  const held = MUST_LACK.filter((cap) => holdsCapability(c, cap));
  if (held.length > 0)
    return (
      `holds ${held.join(', ')} (the runtime's default set): ${uid === 0 ? 'as root' : 'through a file capability on its entrypoint'} ` +
      `it can switch to the proxy's UID ${id.proxyUid} or send raw packets past the redirect; ` +
      `drop ${MUST_LACK.join(', ')} (or ALL)`
    );
  return undefined;
}

/**
 * Capabilities that, added by name, say in the spec that the container means to change its UID or GID: the way to
 * the proxy's identity. NET_RAW is not among them: added by name it is no more than every root container holds by
 * the runtime's default, so refusing it at admission would refuse the hardened shape (`drop: [ALL]`, `add:
 * [NET_RAW]`, an ICMP prober) and admit the careless one; the node side judges what the process really holds.
 */
const STATED = ['SETUID', 'SETGID'] as const;

/**
 * `apps.privileges: node`: why the spec itself says this container can switch to the proxy's identity; undefined
 * when it says nothing of the kind (what it really holds at run time is the node side's to prove).
 */
export function statedEscalationProblem(
  c: Container,
  id: Pick<MeshIdentity, 'proxyUid' | 'proxyGid'>,
): string | undefined {
  const added = addedCapabilities(c);
  const held = STATED.filter((cap) => added.has(cap) && holdsCapability(c, cap));
  if (held.length === 0) return undefined;
  const target = held.includes('SETUID') ? `UID ${id.proxyUid}` : `GID ${id.proxyGid ?? id.proxyUid}`;
  return (
    `adds ${held.join(' and ')} (securityContext.capabilities.add), with which it can switch to the proxy's ` +
    `${target}; remove ${held.join(', ')} from capabilities.add`
  );
}

/** The apps section as the rules read it. */
export interface AppsPolicy {
  readonly privileges: AppPrivileges;
  readonly restrictedNamespaces: readonly string[];
  readonly baselineNamespaces: readonly string[];
}

/**
 * The level a namespace is held to, and whether its findings are only warnings: `apps.restrictedNamespaces` holds a
 * namespace to `restricted` whatever the cluster-wide setting; `apps.baselineNamespaces` admits what the level would
 * refuse, with a warning. Both lists are the cluster admin's (meshgate's config), never a namespace's own label.
 */
export function privilegesIn(apps: AppsPolicy, namespace: string): { level: AppPrivileges; relaxed: boolean } {
  const level = apps.restrictedNamespaces.includes(namespace) ? 'restricted' : apps.privileges;
  return { level, relaxed: apps.baselineNamespaces.includes(namespace) };
}
