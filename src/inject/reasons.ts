/**
 * Every skip, mode choice and denial has a stable code mapped to one readable sentence, reused in admission
 * messages, logs, events, metrics labels and `meshgate explain`. Codes never change once shipped.
 */
export const REASONS = {
  // skips: the pod is admitted untouched
  not_a_pod_create: 'only pod CREATE requests are mutated',
  namespace_not_enabled: 'the namespace is not labelled meshgate.io/inject=enabled',
  pod_opted_out: 'the pod is labelled meshgate.io/inject=false',
  system_namespace: 'pods in Kubernetes system namespaces are never injected',
  mesh_namespace: "pods in meshgate's own namespace are never injected, so meshgate cannot block itself",
  host_network: 'hostNetwork pods share the node network: a sidecar cannot redirect their traffic',
  mirror_pod: 'mirror pods of static pods are run by the kubelet; a patch would not reach them',
  foreign_proxy: "the pod already carries another mesh's proxy",
  already_injected: 'the pod already went through meshgate; nothing to add',
  no_recognised_init: "enforce-only: the pod carries no recognised mesh init container, so there is no redirect to decide",
  // redirect modes
  node_verified: "the pod's node has a verified CNI chain: the mesh CNI plugin redirects, no privileged container",
  affinity_verified: 'the pod has no node yet: it is pinned to verified nodes by a required node affinity and uses the CNI plugin',
  no_verified_node: 'no node has a verified CNI chain yet: the privileged init container sets up the redirect',
  mode_required: 'redirect mode "required": CNI mode with a required affinity to verified nodes (Pending until one exists)',
  mode_off: 'redirect mode "off": always the privileged init container',
  node_unverified_validate: "the pod's node is not verified: privileged init container, checked by the validation container",
  // denials
  node_unverified: "the pod's node has no verified CNI chain",
  invalid_annotation: 'a meshgate annotation has an invalid value',
  // validating webhook
  proxy_missing: 'the pod is opted in but carries no mesh proxy',
  redirect_missing: 'the pod carries the proxy but neither the privileged init container nor the validation container',
  status_mismatch: "the meshgate.io/status annotation does not match the pod's containers",
  binding_node_unverified: 'a CNI-mode pod cannot be bound to a node whose CNI chain is not verified',
  ok: 'the pod is protected as meshgate decided',
} as const;

export type ReasonCode = keyof typeof REASONS;

export function reasonText(code: ReasonCode): string {
  return REASONS[code];
}
