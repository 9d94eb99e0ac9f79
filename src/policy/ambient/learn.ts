/**
 * Istio's ambient settings as istio-cni itself reads them: its chart renders `ambient.enablementSelectors` and
 * `ambient.dnsCapture` into ConfigMap istio-cni-config (keys AMBIENT_ENABLEMENT_SELECTOR, YAML, and
 * AMBIENT_DNS_CAPTURE; manifests/charts/istio-cni/templates/configmap-cni.yaml of 1.27), and its node agent enrols
 * pods by them. Read from there, meshgate guards exactly the pods istio-cni enrols, without an operator copying the
 * selectors into meshgate's configuration (whose values stay the fallback while no such ConfigMap is known).
 * Pure: the parsed selectors in (src/kube/learned-images.ts parses the YAML), settings or a sentence out.
 */
import { enablementSelectorProblems } from '../../config/ambient.ts';
import { MAX_ENABLEMENT_SELECTORS } from '../../config/enums.ts';
import type { LearnedAmbient } from '../../config/learned.ts';
import type { AmbientSelector } from '../../config/types.ts';

export const ISTIO_CNI_CONFIGMAP = 'istio-cni-config';

/**
 * `selectors`: AMBIENT_ENABLEMENT_SELECTOR parsed (undefined: the key is absent); `dnsCapture`: AMBIENT_DNS_CAPTURE
 * as written ("true"/"false"; absent: Istio's default, true).
 */
export function ambientFromCniConfig(
  selectors: unknown,
  dnsCapture: string | undefined,
): LearnedAmbient | { problem: string } {
  if (selectors === undefined) return { problem: 'it has no key AMBIENT_ENABLEMENT_SELECTOR' };
  if (!Array.isArray(selectors)) return { problem: 'AMBIENT_ENABLEMENT_SELECTOR is not a list of selectors' };
  if (selectors.length > MAX_ENABLEMENT_SELECTORS)
    return {
      problem: `AMBIENT_ENABLEMENT_SELECTOR: ${selectors.length} selectors, at most ${MAX_ENABLEMENT_SELECTORS}`,
    };
  const problems = enablementSelectorProblems(selectors, 'AMBIENT_ENABLEMENT_SELECTOR');
  if (problems.length) return { problem: problems.join('; ') };
  if (dnsCapture !== undefined && dnsCapture !== 'true' && dnsCapture !== 'false')
    return { problem: `AMBIENT_DNS_CAPTURE: ${JSON.stringify(dnsCapture)} is not "true" or "false"` };
  return { enablementSelectors: selectors as AmbientSelector[], dnsCapture: dnsCapture !== 'false' };
}
