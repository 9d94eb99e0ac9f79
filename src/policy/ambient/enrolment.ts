/**
 * Which pods Istio 1.27 runs in ambient mode, read as istio-cni reads it (cni/pkg/util/enablement_selector.go
 * `CompiledEnablementSelectors.Matches`, used alike by the CNI plugin and the node agent): never a pod carrying
 * `sidecar.istio.io/status` ("ztunnel and sidecar for a single pod is not supported"); otherwise a pod is ambient when
 * any selector has both its pod selector and its namespace selector matching (an absent selector matches all).
 * Pure: the namespace's labels come from the caller's cache; when they are unknown and only they could decide, the
 * answer says so instead of guessing.
 */
import { matchesSelector, narrows } from '../../util/selector.ts';
import type { AmbientSelector } from '../../config/types.ts';
import { ISTIO_STATUS } from '../../mesh/istio.ts';
import type { Pod } from '../../contract/pod.ts';
import type { DeepReadonly } from '../../util/readonly.ts';

export type Enrolment =
  /** Ambient by Istio's rules; `by` names the selector, for messages. */
  | { readonly kind: 'ambient'; readonly by: string }
  /** Ambient but for a sidecar.istio.io/status annotation, which Istio lets override every selector. */
  | { readonly kind: 'sidecar_status' }
  | { readonly kind: 'not_ambient' }
  /** A selector matching the pod needs the namespace's labels, which the caller does not know. */
  | { readonly kind: 'namespace_unknown' };

type Labels = Readonly<Record<string, string>>;

function describe(i: number, s: DeepReadonly<AmbientSelector>): string {
  return `ambient.enablementSelectors[${i}] (${JSON.stringify(s)})`;
}

/** Istio's Matches, with the status annotation set aside so a caller can tell "opted out by it" apart. */
export function ambientEnrolment(
  pod: Pod,
  namespaceLabels: Labels | undefined,
  selectors: DeepReadonly<AmbientSelector[]>,
): Enrolment {
  const podLabels = pod.metadata?.labels ?? {};
  let unknown = false;
  let match: string | undefined;
  for (const [i, s] of selectors.entries()) {
    if (!matchesSelector(s.podSelector, podLabels)) continue;
    if (!narrows(s.namespaceSelector)) {
      match = describe(i, s);
      break;
    }
    if (namespaceLabels === undefined) unknown = true;
    else if (matchesSelector(s.namespaceSelector, namespaceLabels)) {
      match = describe(i, s);
      break;
    }
  }
  if (match === undefined) return unknown ? { kind: 'namespace_unknown' } : { kind: 'not_ambient' };
  if (pod.metadata?.annotations?.[ISTIO_STATUS] !== undefined) return { kind: 'sidecar_status' };
  return { kind: 'ambient', by: match };
}
