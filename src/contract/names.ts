/** Names meshgate reads and writes on Kubernetes objects. One place, so the webhook, CLI, agent and chart agree. */

/** Namespace label (value `enabled`) and pod label (`true` / `false`) that opt workloads in or out. */
export const INJECT_LABEL = 'meshgate.io/inject';
export const INJECT_NAMESPACE_VALUE = 'enabled';

/** Namespace label choosing the enforcement level (enforce | warn | audit; src/admission/level.ts). */
export const ENFORCEMENT_LABEL = 'meshgate.io/enforcement';

/** Pod annotation recording exactly what was injected and which redirect mode was chosen (JSON). */
export const STATUS_ANNOTATION = 'meshgate.io/status';
/** Pod label carrying the redirect mode; lets the binding guard watch only CNI-mode pods. */
export const REDIRECT_LABEL = 'meshgate.io/redirect';

/** The node label CNI-mode pods are pinned to (see src/contract/node.ts for the whole Node contract). */
export { VERIFIED_LABEL as NODE_VERIFIED_LABEL } from './node.ts';

/** Per-pod override annotations. */
export const ANNOTATIONS = {
  proxyCpuRequest: 'meshgate.io/proxy-cpu-request',
  proxyCpuLimit: 'meshgate.io/proxy-cpu-limit',
  proxyMemoryRequest: 'meshgate.io/proxy-memory-request',
  proxyMemoryLimit: 'meshgate.io/proxy-memory-limit',
  excludeInboundPorts: 'meshgate.io/exclude-inbound-ports',
  excludeOutboundPorts: 'meshgate.io/exclude-outbound-ports',
  excludeOutboundCidrs: 'meshgate.io/exclude-outbound-cidrs',
} as const;

/** Static pods mirrored into the API carry this annotation; the kubelet, not the apiserver, runs them. */
export const MIRROR_ANNOTATION = 'kubernetes.io/config.mirror';

/** Native sidecars (restartPolicy: Always init containers) are on by default from kubelet 1.29. */
export const NATIVE_SIDECAR_MIN_MINOR = 29;
