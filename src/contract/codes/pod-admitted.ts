/**
 * Pod codes (1 of 4): a pod admitted untouched, and the redirect mode meshgate chose for a pod it patches. These are
 * no refusals: nobody needs to act, so none has a fix. The pod family is src/contract/reasons.ts's POD_CODES.
 */
import { ADMITTED, type Codes, MODE } from './entry.ts';

export const ADMITTED_CODES = {
  not_a_pod_create: {
    meaning: 'only pod CREATE requests are mutated',
    emitters: ['mutate', 'validate'],
    shows: ADMITTED,
  },
  system_namespace: {
    meaning: 'pods in Kubernetes system namespaces are never injected',
    emitters: ['mutate', 'validate'],
    shows: ADMITTED,
  },
  mesh_namespace: {
    meaning: "pods in meshgate's own namespace are never injected, so meshgate cannot block itself",
    emitters: ['mutate', 'validate'],
    shows: ADMITTED,
  },
  mirror_pod: {
    meaning: "mirror pods of static pods are created by their node's kubelet, which runs them without the API",
    emitters: ['mutate', 'validate'],
    shows: ADMITTED,
  },
  pod_opted_out: {
    meaning: 'the pod opts out of the mesh, which this configuration allows (injection.allowPodOptOut)',
    emitters: ['mutate', 'validate'],
    shows: ADMITTED,
  },
  host_network_allowed: {
    meaning:
      'hostNetwork pods share the node network and cannot be meshed; ' +
      'this configuration allows them (injection.allowPodOptOut)',
    emitters: ['mutate', 'validate'],
    shows: ADMITTED,
  },
  proxyless_grpc_allowed: {
    meaning:
      "the pod uses Istio's proxyless gRPC (its agent runs without Envoy and nothing is redirected), an opt-out this " +
      'configuration allows (injection.allowPodOptOut)',
    emitters: ['mutate', 'validate'],
    shows: ADMITTED,
  },
  interception_none_allowed: {
    meaning:
      "the pod sets Istio's interception mode NONE (no redirect: the app sends to the proxy itself), an opt-out this " +
      'configuration allows (injection.allowPodOptOut)',
    emitters: ['mutate', 'validate'],
    shows: ADMITTED,
  },
  no_proxy_yet: {
    meaning:
      "the mesh's own injector has not injected this pod (yet): meshgate adjusts after it, " +
      'and the validating webhook refuses the pod if it never does',
    emitters: ['mutate'],
    shows: ADMITTED,
  },
  already_injected: {
    meaning: 'the pod already holds what meshgate would add; nothing to change',
    emitters: ['mutate'],
    shows: ADMITTED,
  },
  no_pod_template: {
    meaning:
      "the object holds no pod template meshgate can read (a workload that refers to another's, such as an Argo " +
      "Rollout's workloadRef): its pods are judged when they are created",
    emitters: ['validate'],
    shows: ADMITTED,
  },
  template_unchanged: {
    meaning: "the update leaves the workload's pod template as it was: the pods it creates do not change",
    emitters: ['validate'],
    shows: ADMITTED,
  },
  mesh_gateway: {
    meaning:
      "the pod is one of the mesh's gateways (ingress, egress, east-west, waypoint): its only container is the mesh's " +
      'proxy, judged field by field, so there is no traffic to redirect',
    emitters: ['mutate', 'validate'],
    shows: ADMITTED,
  },
  node_verified: {
    meaning: "the pod's node has a verified CNI chain: the mesh CNI plugin redirects, no privileged container",
    emitters: ['mutate'],
    shows: MODE,
  },
  affinity_verified: {
    meaning:
      'the pod has no node yet: it is pinned to verified nodes by a required node affinity and uses the CNI plugin',
    emitters: ['mutate'],
    shows: MODE,
  },
  no_verified_node: {
    meaning: 'no node has a verified CNI chain yet: the privileged init container sets up the redirect',
    emitters: ['mutate'],
    shows: MODE,
  },
  mode_required: {
    meaning: 'redirect mode "required": CNI mode with a required affinity to verified nodes (Pending until one exists)',
    emitters: ['mutate'],
    shows: MODE,
  },
  mode_off: {
    meaning: 'redirect mode "off": always the privileged init container',
    emitters: ['mutate'],
    shows: MODE,
  },
  node_unverified_wait: {
    meaning:
      "the pod's node, pinned by its affinity (a DaemonSet's pod), is not verified yet: CNI mode, and a required " +
      'affinity to verified nodes holds the pod Pending until that node is verified',
    emitters: ['mutate'],
    shows: MODE,
  },
  node_unverified_validate: {
    meaning: "the pod's node is not verified: privileged init container, checked by the validation container",
    emitters: ['mutate'],
    shows: MODE,
  },
  cni_only: {
    meaning: 'the pod carries no privileged init container to fall back to: CNI mode, pinned to verified nodes',
    emitters: ['mutate'],
    shows: MODE,
  },
  validator_moved_first: {
    meaning:
      'another webhook put an init container before the validation container: meshgate moved the validator back to ' +
      'the front, so nothing runs before the redirect is proven',
    emitters: ['mutate'],
    shows: MODE,
  },
  audit_unpinned: {
    meaning:
      'the namespace is at enforcement level audit, where meshgate holds no pod: the pod keeps the redirect the mesh ' +
      'gave it (its privileged init container), not pinned to verified nodes, not held Pending, no validator added',
    emitters: ['mutate'],
    shows: MODE,
  },
  cni_skips_pod: {
    meaning:
      "the node's CNI plugin would not redirect this pod (a native-sidecar proxy it does not support, " +
      "or what the mesh's plugin keys on is missing): the privileged init container stays",
    emitters: ['mutate'],
    shows: MODE,
  },
} as const satisfies Codes;
