/**
 * The reasons of the Kubernetes Events meshgate writes, on pods and on Nodes (`kubectl describe`,
 * `kubectl get events --field-selector reason=…`): CamelCase, as Kubernetes' own (FailedScheduling, BackOff). The
 * pod code behind an Event, where there is one, is in its message as `[code]`. Runbooks and docs select on them: never
 * rename one.
 */
import type { Codes, Surface } from './entry.ts';

const EVENT = ['event'] as const satisfies readonly Surface[];

export const EVENT_CODES = {
  MeshContainerAccess: {
    meaning:
      "kubectl exec, attach or an ephemeral container reached one of the mesh's containers in a namespace below " +
      'enforce: admitted, and refused at enforce (Warning)',
    emitters: ['webhook'],
    shows: EVENT,
  },
  MeshContainerAccessRefused: {
    meaning:
      "kubectl exec, attach or an ephemeral container was refused access to one of the mesh's containers (Warning)",
    emitters: ['webhook'],
    shows: EVENT,
  },
  MeshContainerDebug: {
    meaning:
      "one of access.debuggers reached one of the mesh's containers with kubectl exec or attach: admitted (Normal)",
    emitters: ['webhook'],
    shows: EVENT,
  },
  MeshProxyIdentityStopped: {
    meaning:
      "the node agent's guard found a container other than the mesh's running as the proxy's UID or GID: it killed " +
      'its processes (when it ran) and deleted its pod: [proxy_identity_stopped] (Warning)',
    emitters: ['guard'],
    shows: EVENT,
  },
  MeshProxyIdentityRefused: {
    meaning:
      "meshgate's NRI plugin had the runtime refuse to create a container that would run as the proxy's UID or GID; " +
      'the guard records it on the pod: [proxy_identity_refused] (Warning)',
    emitters: ['guard'],
    shows: EVENT,
  },
  MeshRedirectFailed: {
    meaning:
      "a pod's validation container failed (the node and the validator's reason in the message): the repair " +
      'controller deletes the pod so its controller recreates it, or leaves a bare pod for a person (Warning)',
    emitters: ['repair'],
    shows: EVENT,
  },
  MeshCaptureLost: {
    meaning:
      "an Istio ambient pod meshgate admitted lost ztunnel's capture while running (what was done in the message: " +
      'deleted at enforce, else reported) (Warning)',
    emitters: ['repair'],
    shows: EVENT,
  },
  MeshPodHeld: {
    meaning:
      "a pod in CNI mode with meshgate's verified-node affinity the scheduler cannot place: which node it waits for " +
      'and what to do (Warning)',
    emitters: ['repair'],
    shows: EVENT,
  },
  MeshWouldDeny: {
    meaning: 'a pod admitted at audit or warn: the reason enforce would refuse it, and the fix (Warning)',
    emitters: ['repair'],
    shows: EVENT,
  },
  MeshUnmeshedPod: {
    meaning:
      "a running pod of a guarded namespace without meshgate's redirect, reported (with a restart command where " +
      'its controller would recreate it meshed) (Warning)',
    emitters: ['repair'],
    shows: EVENT,
  },
  MeshUnmeshedEvicted: {
    meaning: 'an unmeshed pod was evicted so its controller recreates it through the webhook (Warning)',
    emitters: ['repair'],
    shows: EVENT,
  },
  MeshUnmeshedEvictionBlocked: {
    meaning: "a PodDisruptionBudget refused an unmeshed pod's eviction: retried (Warning)",
    emitters: ['repair'],
    shows: EVENT,
  },
  NodeVerdictWithdrawn: {
    meaning:
      "redirect validation failed for pods on the node: the repair controller withdrew the node's verification " +
      '(Warning, on the Node)',
    emitters: ['repair'],
    shows: EVENT,
  },
  NodeQuarantineExtended: {
    meaning:
      'redirect validation failed again on a withdrawn node: it stays withdrawn and needs a new node agent verdict ' +
      'and probe (Warning, on the Node)',
    emitters: ['repair'],
    shows: EVENT,
  },
  NodeProbeStarted: {
    meaning:
      'the node agent re-verified a withdrawn node: a probe pod checks that the runtime really redirects (Normal, ' +
      'on the Node)',
    emitters: ['repair'],
    shows: EVENT,
  },
  NodeProbeFailed: {
    meaning: 'the probe pod failed redirect validation on a withdrawn node: it stays withdrawn (Warning, on the Node)',
    emitters: ['repair'],
    shows: EVENT,
  },
  NodeProbeInconclusive: {
    meaning:
      'the probe pod proved nothing (its validator could not check): the node stays withdrawn and is probed again ' +
      '(Warning, on the Node)',
    emitters: ['repair'],
    shows: EVENT,
  },
  NodeVerdictRestored: {
    meaning:
      'a probe pod passed redirect validation on a withdrawn node: its verification is given back to its node agent ' +
      '(Normal, on the Node)',
    emitters: ['repair'],
    shows: EVENT,
  },
} as const satisfies Codes;

/** The reason of an Event meshgate writes. */
export type EventReason = keyof typeof EVENT_CODES;
