/**
 * Pod codes (4 of 4): Istio ambient mode (src/policy/ambient/, src/policy/mutate/ambient.ts), what the node side stops that
 * admission cannot see (docs/security.md "Who can become the proxy": the node agent's guard and the NRI plugin), and
 * the validating webhook's verdicts on a pod it guards.
 */
import { ADMITTED, type Codes, MODE, REFUSAL, ANSWER } from './entry.ts';

export const AMBIENT_NODE_CODES = {
  ambient_node_verified: {
    meaning:
      "an Istio ambient pod on a node whose chain and ambient components are verified: meshgate's ambient " +
      'validator runs first in the pod and proves ztunnel captures its traffic at every sandbox start',
    emitters: ['mutate'],
    shows: MODE,
  },
  ambient_affinity_verified: {
    meaning:
      'an Istio ambient pod without a node yet: pinned to verified nodes by a required node affinity, ' +
      "with meshgate's ambient validator first in the pod",
    emitters: ['mutate'],
    shows: MODE,
  },
  ambient_no_fallback: {
    meaning:
      "an Istio ambient pod's node is not verified, and ambient mode has no privileged init container to fall back to",
    emitters: ['mutate'],
    shows: REFUSAL,
  },
  ambient_status_preset: {
    meaning:
      'the pod carries sidecar.istio.io/status but no real istio-proxy: Istio would leave it out of ambient mode, ' +
      'an opt-out the pod author may not take',
    emitters: ['mutate', 'validate'],
    shows: REFUSAL,
  },
  ambient_redirection_preset: {
    meaning:
      'the pod sets ambient.istio.io/redirection, which only istio-cni writes: a pre-set value makes istio-cni ' +
      'believe the pod is enrolled',
    emitters: ['mutate', 'validate'],
    shows: REFUSAL,
  },
  ambient_redirection_changed: {
    meaning:
      "an update changes ambient.istio.io/redirection, which only istio-cni's node agent on the pod's node may write",
    fix:
      'leave ambient.istio.io/redirection to istio-cni (config.ambient.cniServiceAccount names its account); to take a ' +
      "pod out of ambient, change the workload's labels and let it roll",
    emitters: ['validate'],
    shows: ANSWER,
  },
  ambient_capture_lost: {
    meaning:
      "an Istio ambient pod meshgate admitted lost ztunnel's capture while running: istio-cni took it out of the mesh " +
      '(removed ambient.istio.io/redirection), and its traffic leaves unredirected',
    fix:
      "put back the namespace's (or the pod's) istio.io/dataplane-mode=ambient, or move the workload to sidecar mode; " +
      'at enforce the repair controller deletes such pods, and the recreated ones are admitted only as meshgate admits ' +
      'them then',
    emitters: ['check'],
    shows: ['check-report'],
  },
  ambient_dns_capture_off: {
    meaning:
      "the pod switches off ambient DNS capture (ambient.istio.io/dns-capture), on which meshgate's ambient " +
      'validator relies to prove the in-pod redirection',
    emitters: ['mutate', 'validate'],
    shows: REFUSAL,
  },
  ambient_inbound_bypass: {
    meaning: 'the pod sets ambient.istio.io/bypass-inbound-capture: its inbound traffic would bypass ztunnel',
    emitters: ['mutate', 'validate'],
    shows: REFUSAL,
  },
  ambient_namespace_unknown: {
    meaning:
      "meshgate does not know the pod's namespace labels yet, so it cannot tell whether Istio enrols the pod in " +
      'ambient mode',
    emitters: ['mutate', 'validate'],
    shows: REFUSAL,
  },
  ambient_validator_missing: {
    meaning: "an Istio ambient pod must carry meshgate's ambient validator as its first init container",
    emitters: ['mutate', 'validate'],
    shows: REFUSAL,
  },
  proxy_identity_stopped: {
    meaning:
      "a container other than the mesh's ran as the proxy's UID or GID on its node (its image's USER, setuid, a file " +
      'capability or a set-user-ID binary): the node agent killed it and removed its pod',
    fix:
      "run the container as a UID and GID other than the proxy's (its image's USER, or runAsUser/runAsGroup) and do " +
      'not switch to it: drop SETUID/SETGID (or ALL) and set allowPrivilegeEscalation: false',
    emitters: ['guard'],
    shows: ['event'],
  },
  proxy_identity_refused: {
    meaning:
      "the container runtime refused to create a container other than the mesh's that would run as the proxy's UID or " +
      "GID (meshgate's NRI plugin)",
    fix: "the image's USER (or runAsUser/runAsGroup) is the proxy's identity: give the container another UID and GID",
    emitters: ['nri-plugin', 'guard'],
    shows: ['container-status', 'event'],
  },
  init_mode: {
    meaning: 'the pod redirects with its own privileged init container and may run on any node',
    emitters: ['validate'],
    shows: ADMITTED,
  },
  ok: {
    meaning: 'the pod is protected as meshgate decided',
    emitters: ['validate'],
    shows: ADMITTED,
  },
} as const satisfies Codes;
