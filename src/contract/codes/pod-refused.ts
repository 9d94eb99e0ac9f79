/**
 * Pod codes (2 of 4): why the webhooks refuse a pod (at enforce; below it, why they would), each with the fix a
 * workload's owner or the operator makes so meshgate admits it. `meshgate check`, the repair controller's Events and
 * PolicyReports and the workload warnings give the same fix wherever a refusal is read (src/policy/mutate/advice.ts).
 */
import { ANSWER, type Codes, REFUSAL } from './entry.ts';

/** Where to read why a node is not verified: part of every fix that verifying a node is. */
export const NODES =
  '`meshgate check` lists the nodes and why each is not verified; on a node, `meshgate check-node` shows which CNI ' +
  'file its runtime loads';

export const REFUSED_CODES = {
  node_unverified: {
    meaning: "the pod's node has no verified CNI chain",
    fix: `verify the node's CNI chain (${NODES}), or let the scheduler place the pod (no spec.nodeName)`,
    emitters: ['mutate', 'validate'],
    shows: REFUSAL,
  },
  no_fallback: {
    meaning: "the pod's node is not verified and the pod has no privileged init container to fall back to",
    fix:
      'the mesh injected it for its CNI mode (no privileged init container) and its node is not verified: verify the ' +
      `nodes (${NODES}), or have the mesh inject its init container`,
    emitters: ['mutate'],
    shows: REFUSAL,
  },
  invalid_annotation: {
    meaning: 'a redirect setting has an invalid value',
    fix: 'fix the value the message names',
    emitters: ['mutate', 'validate'],
    shows: REFUSAL,
  },
  invalid_object: {
    meaning: 'the request does not carry a valid object',
    emitters: ['mutate', 'validate'],
    shows: ANSWER,
  },
  opt_out_refused: {
    meaning:
      'the pod opts out of the mesh in a namespace that requires it; ' +
      'pods may not opt themselves out (injection.allowPodOptOut is false)',
    fix:
      "remove the pod's opt-out (sidecar.istio.io/inject=false, meshgate.io/inject=false, linkerd.io/inject: " +
      'disabled), or run it in a namespace meshgate does not guard; config.injection.allowPodOptOut allows opt-outs',
    emitters: ['mutate', 'validate'],
    shows: REFUSAL,
  },
  host_network: {
    meaning:
      'a hostNetwork pod shares the node network and cannot be meshed; ' +
      'it may not run in a namespace that requires the mesh',
    fix:
      'a hostNetwork pod cannot be meshed: run it in a namespace meshgate does not guard ' +
      '(config.injection.allowPodOptOut admits such pods unmeshed)',
    emitters: ['mutate', 'validate'],
    shows: REFUSAL,
  },
  proxyless_grpc: {
    meaning:
      "the pod uses Istio's proxyless gRPC: its agent runs without Envoy and nothing is redirected, an opt-out pods " +
      'may not take here (injection.allowPodOptOut is false)',
    fix:
      'proxyless gRPC redirects nothing: run the workload with the sidecar (drop the grpc-agent/grpc-simple template ' +
      'from inject.istio.io/templates), or allow opt-outs (config.injection.allowPodOptOut) where that is acceptable',
    emitters: ['mutate', 'validate'],
    shows: REFUSAL,
  },
  interception_none: {
    meaning:
      "the pod sets Istio's interception mode NONE: nothing is redirected to the proxy, an opt-out pods may not take " +
      'here (injection.allowPodOptOut is false)',
    fix:
      'remove sidecar.istio.io/interceptionMode: NONE (or the mesh-wide interceptionMode NONE), or allow opt-outs ' +
      '(config.injection.allowPodOptOut) where that is acceptable',
    emitters: ['mutate', 'validate'],
    shows: REFUSAL,
  },
  impostor_container: {
    meaning: "a container uses a name reserved for the mesh's containers but is not the real one",
    fix:
      "rename the container; if it is the mesh's own, from an image meshgate does not know yet (a mirror, a managed " +
      'mesh), add that repository to config.recognisedImages',
    emitters: ['mutate', 'validate'],
    shows: REFUSAL,
  },
  proxy_identity: {
    meaning: "a container other than the proxy runs as the proxy's UID or GID, which the redirect exempts",
    fix:
      "run the container as a UID and GID other than the proxy's (securityContext.runAsUser, runAsGroup): the " +
      "redirect exempts the proxy's identity",
    emitters: ['mutate', 'validate'],
    shows: REFUSAL,
  },
  redirect_tamper: {
    meaning: "a container other than the mesh init container could rewrite the pod's network rules",
    fix: 'drop privileged and NET_ADMIN/NET_RAW/SYS_ADMIN from the container (securityContext)',
    emitters: ['mutate', 'validate'],
    shows: REFUSAL,
  },
  proxy_config_refused: {
    meaning:
      "the pod configures the mesh's proxy to run another binary, bootstrap or control plane than the mesh's own",
    fix: "remove the annotation that changes the proxy's binary, bootstrap or control plane",
    emitters: ['mutate', 'validate'],
    shows: REFUSAL,
  },
  proxy_escalation: {
    meaning:
      "a container other than the mesh's could run as, or switch to, the proxy's UID or GID (which the redirect " +
      'exempts) or send raw packets past the redirect',
    fix:
      'remove SETUID/SETGID from capabilities.add; under apps.privileges restricted (or in ' +
      'config.apps.restrictedNamespaces) also give every container runAsUser/runAsGroup (not the proxy’s), ' +
      'allowPrivilegeEscalation: false and capabilities drop [ALL]; while a namespace cannot comply, list it in ' +
      'config.apps.baselineNamespaces',
    emitters: ['mutate', 'validate'],
    shows: REFUSAL,
  },
  mesh_unconfined: {
    meaning: "the pod runs one of the mesh's containers without a confining seccomp or AppArmor profile (Unconfined)",
    fix:
      "remove seccompProfile/appArmorProfile Unconfined from the pod's securityContext (or give the mesh's containers " +
      'a confining profile of their own)',
    emitters: ['mutate', 'validate'],
    shows: REFUSAL,
  },
  mesh_volume_shared: {
    meaning:
      "a container that is not the mesh's mounts a volume the mesh's containers use (the proxy's bootstrap, sockets, " +
      'identity or working files)',
    fix:
      "remove the mount of the mesh's volume from the app container; share files with the proxy through a volume of " +
      'your own (sidecar.istio.io/userVolumeMount)',
    emitters: ['mutate', 'validate'],
    shows: REFUSAL,
  },
  started_before_proxy: {
    meaning:
      "an app container starts before the mesh's proxy and keeps running beside it (a native sidecar ordered first)",
    fix: "move the native sidecar after the mesh's proxy in initContainers",
    emitters: ['mutate', 'validate'],
    shows: REFUSAL,
  },
  probe_sysctl: {
    meaning:
      "the pod sets a sysctl that stops the redirect validator's probe from running, so a healthy redirect would " +
      'look broken',
    fix: 'remove the sysctl the message names, or give it a value that leaves the probe its ports',
    emitters: ['mutate', 'validate'],
    shows: REFUSAL,
  },
  redirect_narrowed: {
    meaning: 'a setting narrows or switches off the redirect itself',
    fix: 'remove the annotation, flag or variable that narrows or switches off the redirect',
    emitters: ['mutate', 'validate'],
    shows: REFUSAL,
  },
  exclusion_refused: {
    meaning: 'the pod exempts more from redirection than a pod may',
    fix: 'exclude fewer outbound CIDRs or ports from the redirect (config.exclusions sets how many a pod may exclude)',
    emitters: ['mutate', 'validate'],
    shows: REFUSAL,
  },
  mesh_cni_skips: {
    meaning: "the mesh's CNI plugin would not redirect this pod",
    fix: "give the pod what the mesh's CNI plugin keys on, or let the mesh inject its init container",
    emitters: ['mutate', 'validate'],
    shows: REFUSAL,
  },
  multus_network_missing: {
    meaning:
      "the mesh's CNI plugin runs as a Multus additional network (cni.multusNetwork) that the pod does not select " +
      'in k8s.v1.cni.cncf.io/networks',
    emitters: ['validate'],
    shows: REFUSAL,
  },
  too_large: {
    meaning: 'the pod is too large for meshgate to patch within its bounds',
    fix: 'shrink what the message names below its bound (README, "Review limits")',
    emitters: ['mutate', 'validate'],
    shows: REFUSAL,
  },
  gateway_shared: {
    meaning:
      "a pod runs the mesh's proxy as a gateway (proxy router or waypoint) beside other containers, whose traffic " +
      'nothing would redirect: a gateway runs the proxy alone',
    fix:
      "run the gateway's proxy alone: move other containers to their own pod, and debug it with kubectl exec as one " +
      'of config.access.debuggers rather than kubectl debug (an ephemeral container stays in the pod)',
    emitters: ['mutate', 'validate'],
    shows: REFUSAL,
  },
  proxy_ids_unknown: {
    meaning:
      "meshgate does not know the pod's namespace yet, so it cannot tell the proxy UID/GID Istio gives that " +
      "namespace's pods on OpenShift (proxy.idsFrom: openshift)",
    emitters: ['mutate', 'validate'],
    shows: ANSWER,
  },
} as const satisfies Codes;
