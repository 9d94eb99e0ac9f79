/**
 * Reasons are data: every CNI verdict has a stable code, one sentence saying what it means and one saying what
 * to do, declared in the catalogue (src/contract/codes/cni.ts). The code is the Node condition's `reason` (it matches
 * Kubernetes' reason regex `^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`), a metric label and a log field; never rename
 * one. Here: the lookups derived from it, and the advice where the runtime loads Multus.
 */
import { allFixesOf, isCodeOf, meaningsOf } from '../contract/codes/entry.ts';
import { CNI_CODES, type CniReasonCode } from '../contract/codes/index.ts';

export type { CniReasonCode };

export const CNI_REASONS = meaningsOf(CNI_CODES);

/** What an operator can do about each reason: printed by `meshgate check-node`. */
export const CNI_ADVICE: Record<CniReasonCode, string> = allFixesOf(CNI_CODES);

/**
 * The advice for a verdict: the reason's, unless the runtime loads Multus. Then the file listed is Multus' own, and
 * deleting it would leave pods without their network: say where the mesh plugin has to go instead.
 */
export function cniAdviceFor(reason: CniReasonCode, multus?: { file?: string; network?: string }): string {
  if (!multus) return CNI_ADVICE[reason];
  const where = multus.file ?? 'its delegates[0], inline in the file listed,';
  if (reason === 'mesh_plugin_missing')
    return (
      `Keep Multus’ file: Multus runs ${where} as the pod’s network. Let the mesh CNI installer chain its plugin ` +
      'after Multus in the file the runtime loads (Istio: cni.cniConfFileName set to it) or into that network, or ' +
      'run the mesh plugin as a Multus additional network (cni.multusNetwork, docs/platforms/openshift.md).'
    );
  if (reason === 'mesh_plugin_not_chained')
    return `Keep Multus’ file; move the mesh plugin after the interface plugin in ${where}.`;
  return CNI_ADVICE[reason];
}

export function isCniReasonCode(value: unknown): value is CniReasonCode {
  return isCodeOf(CNI_CODES, value);
}
