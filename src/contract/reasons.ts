/**
 * Every skip, mode choice and denial has a stable code mapped to one readable sentence, reused in admission
 * messages, logs, events, metrics labels and `meshgate explain`. Codes never change once shipped.
 */
export const REASONS = {
  // skips: the pod is admitted untouched
  not_a_pod_create: 'only pod CREATE requests are mutated',
  system_namespace: 'pods in Kubernetes system namespaces are never injected',
  mesh_namespace: "pods in meshgate's own namespace are never injected, so meshgate cannot block itself",
  mirror_pod: "mirror pods of static pods are created by their node's kubelet, which runs them without the API",
  pod_opted_out: 'the pod opts out of the mesh, which this configuration allows (injection.allowPodOptOut)',
  host_network_allowed:
    'hostNetwork pods share the node network and cannot be meshed; ' +
    'this configuration allows them (injection.allowPodOptOut)',
  proxyless_grpc_allowed:
    "the pod uses Istio's proxyless gRPC (its agent runs without Envoy and nothing is redirected), an opt-out this " +
    'configuration allows (injection.allowPodOptOut)',
  interception_none_allowed:
    "the pod sets Istio's interception mode NONE (no redirect: the app sends to the proxy itself), an opt-out this " +
    'configuration allows (injection.allowPodOptOut)',
  no_proxy_yet:
    "the mesh's own injector has not injected this pod (yet): meshgate adjusts after it, " +
    'and the validating webhook refuses the pod if it never does',
  already_injected: 'the pod already holds what meshgate would add; nothing to change',
  no_pod_template:
    "the object holds no pod template meshgate can read (a workload that refers to another's, such as an Argo " +
    "Rollout's workloadRef): its pods are judged when they are created",
  template_unchanged: "the update leaves the workload's pod template as it was: the pods it creates do not change",
  mesh_gateway:
    "the pod is one of the mesh's gateways (ingress, egress, east-west, waypoint): its only container is the mesh's " +
    'proxy, judged field by field, so there is no traffic to redirect',
  // redirect modes
  node_verified: "the pod's node has a verified CNI chain: the mesh CNI plugin redirects, no privileged container",
  affinity_verified:
    'the pod has no node yet: it is pinned to verified nodes by a required node affinity and uses the CNI plugin',
  no_verified_node: 'no node has a verified CNI chain yet: the privileged init container sets up the redirect',
  mode_required:
    'redirect mode "required": CNI mode with a required affinity to verified nodes (Pending until one exists)',
  mode_off: 'redirect mode "off": always the privileged init container',
  node_unverified_wait:
    "the pod's node, pinned by its affinity (a DaemonSet's pod), is not verified yet: CNI mode, and a required " +
    'affinity to verified nodes holds the pod Pending until that node is verified',
  node_unverified_validate:
    "the pod's node is not verified: privileged init container, checked by the validation container",
  cni_only: 'the pod carries no privileged init container to fall back to: CNI mode, pinned to verified nodes',
  validator_moved_first:
    'another webhook put an init container before the validation container: meshgate moved the validator back to ' +
    'the front, so nothing runs before the redirect is proven',
  audit_unpinned:
    'the namespace is at enforcement level audit, where meshgate holds no pod: the pod keeps the redirect the mesh ' +
    'gave it (its privileged init container), not pinned to verified nodes, not held Pending, no validator added',
  cni_skips_pod:
    "the node's CNI plugin would not redirect this pod (a native-sidecar proxy it does not support, " +
    "or what the mesh's plugin keys on is missing): the privileged init container stays",
  // denials
  node_unverified: "the pod's node has no verified CNI chain",
  no_fallback: "the pod's node is not verified and the pod has no privileged init container to fall back to",
  invalid_annotation: 'a redirect setting has an invalid value',
  invalid_object: 'the request does not carry a valid object',
  opt_out_refused:
    'the pod opts out of the mesh in a namespace that requires it; ' +
    'pods may not opt themselves out (injection.allowPodOptOut is false)',
  host_network:
    'a hostNetwork pod shares the node network and cannot be meshed; ' +
    'it may not run in a namespace that requires the mesh',
  proxyless_grpc:
    "the pod uses Istio's proxyless gRPC: its agent runs without Envoy and nothing is redirected, an opt-out pods " +
    'may not take here (injection.allowPodOptOut is false)',
  interception_none:
    "the pod sets Istio's interception mode NONE: nothing is redirected to the proxy, an opt-out pods may not take " +
    'here (injection.allowPodOptOut is false)',
  impostor_container: "a container uses a name reserved for the mesh's containers but is not the real one",
  proxy_identity: "a container other than the proxy runs as the proxy's UID or GID, which the redirect exempts",
  redirect_tamper: "a container other than the mesh init container could rewrite the pod's network rules",
  proxy_config_refused:
    "the pod configures the mesh's proxy to run another binary, bootstrap or control plane than the mesh's own",
  proxy_escalation:
    "a container other than the mesh's could run as, or switch to, the proxy's UID or GID (which the redirect " +
    'exempts) or send raw packets past the redirect',
  mesh_unconfined:
    "the pod runs one of the mesh's containers without a confining seccomp or AppArmor profile (Unconfined)",
  mesh_volume_shared:
    "a container that is not the mesh's mounts a volume the mesh's containers use (the proxy's bootstrap, sockets, " +
    'identity or working files)',
  started_before_proxy:
    "an app container starts before the mesh's proxy and keeps running beside it (a native sidecar ordered first)",
  probe_sysctl:
    "the pod sets a sysctl that stops the redirect validator's probe from running, so a healthy redirect would " +
    'look broken',
  redirect_narrowed: 'a setting narrows or switches off the redirect itself',
  exclusion_refused: 'the pod exempts more from redirection than a pod may',
  mesh_cni_skips: "the mesh's CNI plugin would not redirect this pod",
  multus_network_missing:
    "the mesh's CNI plugin runs as a Multus additional network (cni.multusNetwork) that the pod does not select " +
    'in k8s.v1.cni.cncf.io/networks',
  too_large: 'the pod is too large for meshgate to patch within its bounds',
  gateway_shared:
    "a pod runs the mesh's proxy as a gateway (proxy router or waypoint) beside other containers, whose traffic " +
    'nothing would redirect: a gateway runs the proxy alone',
  proxy_ids_unknown:
    "meshgate does not know the pod's namespace yet, so it cannot tell the proxy UID/GID Istio gives that " +
    "namespace's pods on OpenShift (proxy.idsFrom: openshift)",
  // validating webhook
  proxy_missing: 'the pod is opted in but carries no real mesh proxy',
  redirect_missing: 'the pod carries the proxy but neither the privileged init container nor a validation container',
  status_mismatch: "meshgate's status annotation or label does not match the pod's containers",
  validator_not_first:
    'in CNI mode the validation container must run before every other container of the pod, native sidecars included',
  redirect_not_first:
    "the mesh's init container must run before every user init container (redirect.beforeInitContainers)",
  mesh_container_changed: "an update changes the mesh's containers",
  mesh_metadata_changed: 'an update changes what meshgate or the mesh recorded on the pod',
  admission_mark_invalid:
    "the pod carries meshgate's admission mark (meshgate.io/admitted), which only meshgate's mutating webhook " +
    'may set, and it does not hold for this pod',
  binding_node_unverified:
    'a pod whose redirect needs the CNI plugin cannot be bound to a node whose CNI chain is not verified',
  binding_unmeshed:
    'a pod without a real proxy and redirect cannot be bound to a node in a namespace that requires the mesh',
  // interactive access: kubectl exec and attach (src/policy/validate/access.ts)
  access_app_container:
    "kubectl exec or attach into a container that is not the mesh's: it runs as that container, which admission judged",
  mesh_container_debug:
    'one of access.debuggers reached a mesh container with kubectl exec or attach: admitted, and recorded',
  mesh_container_access:
    "kubectl exec, attach or an ephemeral container would reach the mesh's proxy, init or validator container, and " +
    'run as it past the redirect; only access.debuggers may exec or attach',
  access_container_unnamed:
    "kubectl exec or attach names no container, so the apiserver would pick the pod's only one, which may be the " +
    "mesh's proxy",
  // Istio ambient mode (src/policy/ambient/)
  ambient_node_verified:
    "an Istio ambient pod on a node whose chain and ambient components are verified: meshgate's ambient " +
    'validator runs first in the pod and proves ztunnel captures its traffic at every sandbox start',
  ambient_affinity_verified:
    'an Istio ambient pod without a node yet: pinned to verified nodes by a required node affinity, ' +
    "with meshgate's ambient validator first in the pod",
  ambient_no_fallback:
    "an Istio ambient pod's node is not verified, and ambient mode has no privileged init container to fall back to",
  ambient_status_preset:
    'the pod carries sidecar.istio.io/status but no real istio-proxy: Istio would leave it out of ambient mode, ' +
    'an opt-out the pod author may not take',
  ambient_redirection_preset:
    'the pod sets ambient.istio.io/redirection, which only istio-cni writes: a pre-set value makes istio-cni ' +
    'believe the pod is enrolled',
  ambient_redirection_changed:
    "an update changes ambient.istio.io/redirection, which only istio-cni's node agent on the pod's node may write",
  ambient_capture_lost:
    "an Istio ambient pod meshgate admitted lost ztunnel's capture while running: istio-cni took it out of the mesh " +
    '(removed ambient.istio.io/redirection), and its traffic leaves unredirected',
  ambient_dns_capture_off:
    "the pod switches off ambient DNS capture (ambient.istio.io/dns-capture), on which meshgate's ambient " +
    'validator relies to prove the in-pod redirection',
  ambient_inbound_bypass:
    'the pod sets ambient.istio.io/bypass-inbound-capture: its inbound traffic would bypass ztunnel',
  ambient_namespace_unknown:
    "meshgate does not know the pod's namespace labels yet, so it cannot tell whether Istio enrols the pod in " +
    'ambient mode',
  ambient_validator_missing: "an Istio ambient pod must carry meshgate's ambient validator as its first init container",
  // on the node (docs/security.md "Who can become the proxy"): the agent's guard and the NRI plugin
  proxy_identity_stopped:
    "a container other than the mesh's ran as the proxy's UID or GID on its node (its image's USER, setuid, a file " +
    'capability or a set-user-ID binary): the node agent killed it and removed its pod',
  proxy_identity_refused:
    "the container runtime refused to create a container other than the mesh's that would run as the proxy's UID or " +
    "GID (meshgate's NRI plugin)",
  init_mode: 'the pod redirects with its own privileged init container and may run on any node',
  ok: 'the pod is protected as meshgate decided',
} as const;

export type ReasonCode = keyof typeof REASONS;

/**
 * Reasons of the server itself, not of a pod's decision: a handler that threw, an answer over the size cap, a body
 * that is not an AdmissionReview. With ReasonCode, every value the `reason` label of
 * meshgate_admission_decisions_total can take: a closed set, so its series stay bounded by the type.
 */
export type ServerReason = 'internal_error' | 'answer_too_large' | 'bad_review';
export type VerdictReason = ReasonCode | ServerReason;

export function reasonText(code: ReasonCode): string {
  return REASONS[code];
}
