/**
 * A guarded Istio ambient pod that lost ztunnel's capture while it runs (issue 33 §6; what counts as lost:
 * src/policy/ambient/capture.ts), as the repair controller may act on it: outside meshgate's own and the system namespaces,
 * and only when its admission mark verifies — meshgate admitted it, in a namespace it guarded, as the ambient pod it
 * now is. Pure: (pod, trust) → none | lost.
 */
import { type CaptureLost, captureLost, type PodForCapture as AmbientPod } from '../../policy/ambient/capture.ts';
import { type PodForRepair, markTrust, type RepairTrust } from '../failed/decide.ts';

/** The pod as the repair controller's watch delivers it: what both judges read. */
export type PodForCapture = PodForRepair & AmbientPod;

export type CaptureJudgement = { readonly action: 'none' } | CaptureLost;

const NONE = { action: 'none' } as const;

export function judgeCapture(pod: PodForCapture, validatorName: string, trust: RepairTrust): CaptureJudgement {
  if (trust.excludedNamespaces.includes(pod.metadata?.namespace ?? '')) return NONE;
  const lost = captureLost(pod, validatorName);
  if (!lost || markTrust(pod, trust.keys)) return NONE;
  return lost;
}
