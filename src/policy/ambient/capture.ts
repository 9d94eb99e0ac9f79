/**
 * Whether a running Istio ambient pod that meshgate admitted has lost ztunnel's capture since its start (issue 33 §6),
 * read from the pod alone: meshgate's ambient validator is its first init container and completed (the capture was
 * proven at the sandbox's start, so istio-cni had enrolled it), and istio-cni's ambient.istio.io/redirection no
 * longer says `enabled` — istio-cni's node agent removes it as the last step of taking a pod out of the mesh (Istio
 * 1.27 cni/pkg/nodeagent meshdataplane_linux.go RemovePodFromMesh), after removing the in-pod rules; the pod keeps
 * running. `pending` is not a loss: the rules are set and ztunnel has not taken the pod yet, which fails closed.
 * In a guarded namespace only istio-cni changes the annotation (src/policy/ambient/refusals.ts redirectionChange; Istio
 * writes it through pods/status, not a pod author's in Kubernetes' default roles). Shared by the repair controller
 * (src/repair/capture/) and `meshgate check` (src/check/judge-pods.ts). Pure.
 */
import { REDIRECT_LABEL } from '../../contract/names.ts';
import { REDIRECTION } from './refusals.ts';
import { isAmbientValidator } from './validator.ts';

/** What this reads of a pod, as the API returns it. */
export interface PodForCapture {
  metadata?: {
    name?: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    deletionTimestamp?: unknown;
  };
  spec?: { nodeName?: string; initContainers?: Array<{ name?: string; args?: string[] }> };
  status?: {
    phase?: string;
    initContainerStatuses?: Array<{ name: string; state?: { terminated?: { exitCode?: number } } }>;
  };
}

export interface CaptureLost {
  readonly action: 'lost';
  /** The annotation now (undefined: removed). */
  readonly value: string | undefined;
  readonly message: string;
}

export function captureLost(pod: PodForCapture, validatorName: string): CaptureLost | undefined {
  const meta = pod.metadata;
  if (!meta?.labels?.[REDIRECT_LABEL] || meta.deletionTimestamp) return undefined;
  if (pod.status?.phase !== 'Running') return undefined;
  const first = pod.spec?.initContainers?.[0];
  if (first?.name !== validatorName || !isAmbientValidator(first)) return undefined;
  const proven = pod.status?.initContainerStatuses?.find((s) => s.name === validatorName)?.state?.terminated;
  if (proven?.exitCode !== 0) return undefined;
  const value = meta.annotations?.[REDIRECTION];
  // "pending": istio-cni set the rules but ztunnel has not taken the pod yet — redirected into nothing, fail closed.
  if (value === 'enabled' || value === 'pending') return undefined;
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
