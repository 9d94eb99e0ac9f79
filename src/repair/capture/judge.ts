/**
 * A guarded Istio ambient pod that loses ztunnel's capture while it runs (issue 33 §6). meshgate's ambient validator
 * proves the capture once, at each sandbox start; afterwards istio-cni's node agent can take the pod out of the mesh
 * while it runs — the namespace's or the pod's `istio.io/dataplane-mode` changed, or an enablement selector — and then
 * removes the in-pod rules and the pod's `ambient.istio.io/redirection` annotation together (Istio 1.27
 * cni/pkg/nodeagent meshdataplane_linux.go RemovePodFromMesh: the annotation is the last step, through pods/status).
 * The pod keeps running, unredirected. istio-cni's annotation is the signal meshgate reads: in a guarded namespace
 * no one else may change it (the update guard, src/ambient/refusals.ts redirectionChange; pods/status is not a pod
 * author's in Kubernetes' default roles).
 * A pod counts when meshgate admitted it as ambient (its admission mark verifies; meshgate's ambient validator is its
 * first init container), that validator completed (exit 0: captured at start, so istio-cni had enrolled it) and it
 * runs, and the annotation no longer says `enabled` (or `pending`: rules set, ztunnel not there yet — traffic is
 * redirected into nothing, which fails closed). Pure: (pod, trust) → none | lost.
 */
import { isAmbientValidator } from '../../ambient/validator.ts';
import { REDIRECTION } from '../../ambient/refusals.ts';
import { REDIRECT_LABEL } from '../../contract/names.ts';
import { type PodForRepair, markTrust, type RepairTrust } from '../failed/decide.ts';

/** The parts of a pod this judge reads, beyond the repair controller's: the first init container and the phase. */
export interface PodForCapture extends PodForRepair {
  spec?: PodForRepair['spec'] & { initContainers?: Array<{ name?: string; args?: string[] }> };
  status?: PodForRepair['status'] & { phase?: string };
}

export type CaptureJudgement =
  | { readonly action: 'none' }
  /** `value`: the annotation now (undefined: removed). */
  | { readonly action: 'lost'; readonly value: string | undefined; readonly message: string };

const NONE = { action: 'none' } as const;

export function judgeCapture(pod: PodForCapture, validatorName: string, trust: RepairTrust): CaptureJudgement {
  const meta = pod.metadata;
  if (!meta?.labels?.[REDIRECT_LABEL] || meta.deletionTimestamp) return NONE;
  if (trust.excludedNamespaces.includes(meta.namespace ?? '')) return NONE;
  if (pod.status?.phase !== 'Running') return NONE;
  const first = pod.spec?.initContainers?.[0];
  if (first?.name !== validatorName || !isAmbientValidator(first)) return NONE;
  const proven = pod.status?.initContainerStatuses?.find((s) => s.name === validatorName)?.state?.terminated;
  if (proven?.exitCode !== 0) return NONE;
  const value = meta.annotations?.[REDIRECTION];
  // "pending": istio-cni set the rules but ztunnel has not taken the pod yet — redirected into nothing, fail closed.
  if (value === 'enabled' || value === 'pending') return NONE;
  if (markTrust(pod, trust.keys)) return NONE;
  return {
    action: 'lost',
    value,
    message:
      `pod ${meta.namespace}/${meta.name} runs without ztunnel's capture: istio-cni ` +
      (value === undefined ? `removed its ${REDIRECTION} annotation` : `set its ${REDIRECTION} to "${value}"`) +
      ` after meshgate's ambient validator had proven the capture at its start on node ${pod.spec?.nodeName ?? '<unknown>'}` +
      " (the namespace's or the pod's istio.io/dataplane-mode changed?): its traffic now leaves unredirected",
  };
}
