/**
 * Whether a pod is one meshgate guards as Istio ambient (src/policy/ambient/enrolment.ts), for the mutating decision
 * (inject/ambient.ts) and the posture check alike: `ambient`, a refusal of a pod that would silently leave both
 * modes, or undefined when the sidecar rules apply.
 */
import type { Compiled } from '../config/compile.ts';
import type { ReasonCode } from '../contract/reasons.ts';
import { ambientEnrolment } from './ambient/enrolment.ts';
import type { PodMesh } from './identify.ts';
import type { PodInput } from './screen.ts';

export interface AmbientRefused {
  kind: 'deny';
  reason: ReasonCode;
  message: string;
}

/** Whether (and why not) the pod is one meshgate guards as ambient; undefined: not ambient, the sidecar rules apply. */
export function ambientCase(input: PodInput, mesh: PodMesh, cfg: Compiled): 'ambient' | AmbientRefused | undefined {
  if (!cfg.config.ambient.enabled) return undefined;
  const e = ambientEnrolment(input.pod, input.namespaceLabels, cfg.config.ambient.enablementSelectors);
  switch (e.kind) {
    case 'not_ambient':
      return undefined;
    case 'namespace_unknown':
      return {
        kind: 'deny',
        reason: 'ambient_namespace_unknown',
        message:
          `namespace ${input.namespace} is not in meshgate's namespace cache yet, and Istio's ambient selectors ` +
          'need its labels to tell whether this pod is ambient; retry in a few seconds',
      };
    case 'sidecar_status':
      // A real sidecar pod (Istio's injector wrote the annotation): the sidecar rules apply.
      if (mesh.proxy) return undefined;
      return {
        kind: 'deny',
        reason: 'ambient_status_preset',
        message:
          'the pod carries annotation sidecar.istio.io/status but no real istio-proxy container: Istio would leave ' +
          'it out of ambient mode (no sidecar either), so it would run outside the mesh',
      };
    case 'ambient':
      // A real proxy without Istio's status annotation is a sidecar pod all the same.
      if (mesh.proxy) return undefined;
      return 'ambient';
  }
}
