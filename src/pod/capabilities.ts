/**
 * Which Linux capabilities a container's first process really holds, from the fields Kubernetes passes to the
 * runtime. containerd and CRI-O apply them in the same order (containerd internal/cri/opts WithCapabilities; CRI-O
 * internal/config/capabilities): start from the runtime's default set, add everything for `add: [ALL]`, remove
 * everything for `drop: [ALL]`, then add each named one, then drop each named one — so a named drop always wins, and
 * `drop: [ALL]` + `add: [X]` leaves X.
 *
 * The runtime gives them to the container's first process whatever its UID (as its permitted set, before the first
 * execve): a root process keeps them; another UID keeps those that a file capability on its entrypoint names, even
 * under no_new_privs (src/policy/escalation.ts).
 */
import type { Container } from '../contract/pod.ts';

/**
 * The default set of containerd's CRI plugin and of CRI-O (and Docker's): what a root container holds unless it
 * drops them. SETUID and SETGID let root become any UID or GID, NET_RAW lets it send packets no nat rule sees.
 */
export const RUNTIME_DEFAULT_CAPABILITIES: ReadonlySet<string> = new Set([
  'CHOWN',
  'DAC_OVERRIDE',
  'FSETID',
  'FOWNER',
  'MKNOD',
  'NET_RAW',
  'SETGID',
  'SETUID',
  'SETFCAP',
  'SETPCAP',
  'NET_BIND_SERVICE',
  'SYS_CHROOT',
  'KILL',
  'AUDIT_WRITE',
]);

/** How the runtimes name a capability: upper case, without the `CAP_` prefix. */
export function capabilityName(cap: string): string {
  return cap.toUpperCase().replace(/^CAP_/, '');
}

/** Whether the container's capability set (as the runtime computes it) holds `cap` (a name without CAP_). */
export function holdsCapability(c: Container, cap: string): boolean {
  const caps = c.securityContext?.capabilities;
  const add = new Set((caps?.add ?? []).map(capabilityName));
  const drop = new Set((caps?.drop ?? []).map(capabilityName));
  if (drop.has(cap)) return false;
  if (add.has(cap)) return true;
  if (drop.has('ALL')) return false;
  return add.has('ALL') || RUNTIME_DEFAULT_CAPABILITIES.has(cap);
}
