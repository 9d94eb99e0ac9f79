/**
 * What to do about each refusal, one sentence per reason code: the fix a workload's owner (or the operator) makes so
 * meshgate admits the pod. reasons.ts says what happened; this says what to change. Shared by `meshgate check`
 * (its audit report, `check --pre`) and the repair controller's Events, so the cluster gives the same advice
 * wherever a refusal is read. Codes without advice here get the generic sentence of `adviceFor`.
 */
import type { ReasonCode } from '../../contract/reasons.ts';

const NODES =
  '`meshgate check` lists the nodes and why each is not verified; on a node, `meshgate check-node` shows which CNI ' +
  'file its runtime loads';

export const ADVICE: Partial<Record<ReasonCode, string>> = {
  node_unverified: `verify the node's CNI chain (${NODES}), or let the scheduler place the pod (no spec.nodeName)`,
  no_fallback:
    'the mesh injected it for its CNI mode (no privileged init container) and its node is not verified: verify the ' +
    `nodes (${NODES}), or have the mesh inject its init container`,
  opt_out_refused:
    "remove the pod's opt-out (sidecar.istio.io/inject=false, meshgate.io/inject=false, linkerd.io/inject: " +
    'disabled), or run it in a namespace meshgate does not guard; config.injection.allowPodOptOut allows opt-outs',
  host_network:
    'a hostNetwork pod cannot be meshed: run it in a namespace meshgate does not guard ' +
    '(config.injection.allowPodOptOut admits such pods unmeshed)',
  proxyless_grpc:
    'proxyless gRPC redirects nothing: run the workload with the sidecar (drop the grpc-agent/grpc-simple template ' +
    'from inject.istio.io/templates), or allow opt-outs (config.injection.allowPodOptOut) where that is acceptable',
  interception_none:
    'remove sidecar.istio.io/interceptionMode: NONE (or the mesh-wide interceptionMode NONE), or allow opt-outs ' +
    '(config.injection.allowPodOptOut) where that is acceptable',
  impostor_container:
    "rename the container; if it is the mesh's own, from an image meshgate does not know yet (a mirror, a managed " +
    'mesh), add that repository to config.recognisedImages',
  proxy_identity:
    "run the container as a UID and GID other than the proxy's (securityContext.runAsUser, runAsGroup): the " +
    "redirect exempts the proxy's identity",
  redirect_tamper: 'drop privileged and NET_ADMIN/NET_RAW/SYS_ADMIN from the container (securityContext)',
  proxy_config_refused: "remove the annotation that changes the proxy's binary, bootstrap or control plane",
  proxy_escalation:
    'remove SETUID/SETGID from capabilities.add; under apps.privileges restricted (or in ' +
    'config.apps.restrictedNamespaces) also give every container runAsUser/runAsGroup (not the proxy’s), ' +
    'allowPrivilegeEscalation: false and capabilities drop [ALL]; while a namespace cannot comply, list it in ' +
    'config.apps.baselineNamespaces',
  proxy_identity_stopped:
    "run the container as a UID and GID other than the proxy's (its image's USER, or runAsUser/runAsGroup) and do " +
    'not switch to it: drop SETUID/SETGID (or ALL) and set allowPrivilegeEscalation: false',
  proxy_identity_refused:
    "the image's USER (or runAsUser/runAsGroup) is the proxy's identity: give the container another UID and GID",
  mesh_unconfined:
    "remove seccompProfile/appArmorProfile Unconfined from the pod's securityContext (or give the mesh's containers " +
    'a confining profile of their own)',
  mesh_volume_shared:
    "remove the mount of the mesh's volume from the app container; share files with the proxy through a volume of " +
    'your own (sidecar.istio.io/userVolumeMount)',
  started_before_proxy: "move the native sidecar after the mesh's proxy in initContainers",
  probe_sysctl: 'remove the sysctl the message names, or give it a value that leaves the probe its ports',
  redirect_narrowed: 'remove the annotation, flag or variable that narrows or switches off the redirect',
  exclusion_refused:
    'exclude fewer outbound CIDRs or ports from the redirect (config.exclusions sets how many a pod may exclude)',
  invalid_annotation: 'fix the value the message names',
  too_large: 'shrink what the message names below its bound (README, "Review limits")',
  proxy_missing:
    "the mesh's injector did not inject it: check that the injector runs and selects the namespace (Istio: " +
    'istio-injection=enabled or istio.io/rev; Linkerd: the linkerd.io/inject annotation), then restart the pod',
  redirect_missing:
    "the mesh injected its proxy without an init container or validator: check the mesh's injection settings " +
    '(CNI mode needs its validator), then restart the pod',
  status_mismatch:
    "recreate the pod from its workload: meshgate's status was edited or copied from another pod (a manifest " +
    'exported from a running pod)',
  admission_mark_invalid:
    'remove the meshgate.io/admitted annotation from the pod template (copied from a running pod): only meshgate ' +
    'writes it',
  validator_not_first:
    'another webhook put an init container before the validation container: let the validator run first',
  redirect_not_first: "let the mesh's init container run before the pod's own init containers",
  mesh_container_changed: "change the workload's pod template and let it roll, not the running pod",
  mesh_metadata_changed: "change the workload's pod template and let it roll, not the running pod",
  binding_node_unverified: `bind it to a verified node, or let the scheduler place it (${NODES})`,
  binding_unmeshed: 'recreate the pod through the webhooks (it was created unmeshed), then let it be scheduled',
  mesh_cni_skips: "give the pod what the mesh's CNI plugin keys on, or let the mesh inject its init container",
  gateway_shared:
    "run the gateway's proxy alone: move other containers to their own pod, and debug it with kubectl exec as one " +
    'of config.access.debuggers rather than kubectl debug (an ephemeral container stays in the pod)',
  ambient_capture_lost:
    "put back the namespace's (or the pod's) istio.io/dataplane-mode=ambient, or move the workload to sidecar mode; " +
    'at enforce the repair controller deletes such pods, and the recreated ones are admitted only as meshgate admits ' +
    'them then',
  ambient_redirection_changed:
    'leave ambient.istio.io/redirection to istio-cni (config.ambient.cniServiceAccount names its account); to take a ' +
    "pod out of ambient, change the workload's labels and let it roll",
};

/** What to do about a refusal with this code (or a code meshgate does not know: from another version). */
export function adviceFor(code: string): string {
  return (
    ADVICE[code as ReasonCode] ??
    'read the reason in the message; `meshgate explain -f` on the workload says what meshgate decides and why'
  );
}
