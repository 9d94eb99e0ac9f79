/**
 * Which Linux capabilities a container's first process really holds, from the fields Kubernetes passes to the
 * runtime, read the way the runtime on the pod's node reads them (issue 33 §5). The kubelet hands `add` and `drop`
 * to the runtime verbatim; the runtimes differ in how they name them:
 *
 *   containerd (1.6 pkg/cri/opts/spec_linux.go and 2.x internal/cri/opts/spec_opts.go, `WithCapabilities`, the
 *   same code on both lines): `ALL` in any case means all; every other entry becomes `"CAP_" + upper(entry)`, and
 *   `oci.WithAddedCapabilities` / `WithDroppedCapabilities` match that string exactly. So `drop: [CAP_SETUID]`
 *   drops `CAP_CAP_SETUID`, which nothing holds — SETUID stays — and `add: [CAP_NET_ADMIN]` adds a name runc
 *   ignores as unknown.
 *   CRI-O (internal/factory/container/container.go `SpecSetupCapabilities`): an entry already starting with `cap_`
 *   in any case is kept, others get the prefix, and runtime-tools compares upper-cased: `CAP_SETUID`, `cap_setuid`
 *   and `setuid` all name SETUID. An unknown name fails the container's creation.
 *
 * Both apply them in the same order: start from the runtime's default set, everything for `add: [ALL]`, nothing for
 * `drop: [ALL]`, then add each named one, then drop each named one — so a named drop always wins, and `drop: [ALL]`
 * + `add: [X]` leaves X.
 *
 * Where the runtime is not known (the pod has no node yet, the Node is not in the cache, or it reports another
 * runtime) a capability counts as held when either reading holds it: the strictest. The runtime gives the set to
 * the container's first process whatever its UID (as its permitted set, before the first execve): a root process
 * keeps it; another UID keeps what a file capability on its entrypoint names, even under no_new_privs
 * (src/policy/escalation.ts).
 */
import type { Container } from '../contract/pod.ts';
import { parseRuntimeVersion } from '../cni/runtime-version.ts';

/**
 * The default set of containerd's CRI plugin (pkg/oci/spec.go `defaultUnixCaps`, unchanged from 1.6 to 2.4) and
 * Docker's: what a root container holds unless it drops them. CRI-O's built-in default is a subset (no NET_RAW,
 * MKNOD, SETFCAP, SYS_CHROOT, AUDIT_WRITE) but crio.conf's `default_capabilities` may add any, which meshgate cannot
 * see: it assumes this set there too. SETUID and SETGID let root become any UID or GID, NET_RAW lets it send
 * packets no nat rule sees.
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

/** How a capability list is read: one runtime's way, or `strictest` (held when either runtime would hold it). */
export type CapabilityReading = 'containerd' | 'crio' | 'strictest';

/** The reading for a Node's `status.nodeInfo.containerRuntimeVersion`; unknown or absent → strictest. */
export function capabilityReading(containerRuntimeVersion: string | undefined): CapabilityReading {
  const { runtime } = containerRuntimeVersion ? parseRuntimeVersion(containerRuntimeVersion) : {};
  return runtime ?? 'strictest';
}

/** `ALL`, in any case, in both runtimes (containerd util.InStringSlice and CRI-O inStringSlice use EqualFold). */
const isAll = (entry: string) => entry.toUpperCase() === 'ALL';

/**
 * The capability one `add`/`drop` entry names to `runtime` (without `CAP_`), or undefined when it names none that
 * exists: containerd prefixes `CAP_` to every entry, CRI-O only to entries without it.
 */
export function namedCapability(entry: string, runtime: Exclude<CapabilityReading, 'strictest'>): string | undefined {
  const upper = entry.toUpperCase();
  if (runtime === 'containerd') return upper.startsWith('CAP_') ? undefined : upper;
  return upper.replace(/^CAP_/, '');
}

function holdsAs(c: Container, cap: string, runtime: Exclude<CapabilityReading, 'strictest'>): boolean {
  const caps = c.securityContext?.capabilities;
  const names = (list: readonly string[] | undefined) =>
    new Set((list ?? []).filter((e) => !isAll(e)).map((e) => namedCapability(e, runtime)));
  if (names(caps?.drop).has(cap)) return false;
  if (names(caps?.add).has(cap)) return true;
  if ((caps?.drop ?? []).some(isAll)) return false;
  return (caps?.add ?? []).some(isAll) || RUNTIME_DEFAULT_CAPABILITIES.has(cap);
}

/**
 * Whether the container's capability set, as `reading`'s runtime computes it, holds `cap` (a name without CAP_).
 * Default: the strictest reading, for callers that do not know the pod's node.
 */
export function holdsCapability(c: Container, cap: string, reading: CapabilityReading = 'strictest'): boolean {
  if (reading !== 'strictest') return holdsAs(c, cap, reading);
  return holdsAs(c, cap, 'containerd') || holdsAs(c, cap, 'crio');
}
