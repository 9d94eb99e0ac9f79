/**
 * How each mesh's validation container says "redirection is missing": its exit code, and where its reason is.
 * - meshgate's validate-redirect exits 42 with JSON on /dev/termination-log (src/validator/reasons.ts);
 * - Istio's istio-validation (pilot-agent istio-iptables --run-validation) exits 126, ValidationErrorCode in
 *   tools/istio-iptables/pkg/constants, with a sentence as its message; istio-cni's own repair controller keys on it;
 * - Linkerd's linkerd-network-validator exits 95 (ERRNO 95, UNSUCCESSFUL_EXIT_CODE of linkerd-reinitialize-pods),
 *   which linkerd-cni's repair controller keys on.
 * With the istio and linkerd profiles a pod may carry either meshgate's validator or the mesh's own under the same
 * name (meshgate replaces the init container with its own; a pod the mesh injected for its CNI plugin keeps the
 * mesh's), so both codes count. Other exit codes (1 for bad flags, 137 OOM) are not redirect failures.
 * charts/meshgate/templates/_profile.tpl repeats these codes for the repair controller's admission policy.
 */
import type { MeshName } from '../../mesh/types.ts';
import { VALIDATION_FAILED_EXIT_CODE } from '../../validator/reasons.ts';

export const ISTIO_VALIDATION_EXIT_CODE = 126;
export const LINKERD_VALIDATION_EXIT_CODE = 95;

export interface ValidationFailure {
  exitCode: number;
  /** Who exited so: its termination message is JSON with a reason only for meshgate's own validator. */
  source: 'meshgate' | 'istio' | 'linkerd';
}

const MESHGATE: ValidationFailure = { exitCode: VALIDATION_FAILED_EXIT_CODE, source: 'meshgate' };

export const VALIDATION_FAILURES: Readonly<Record<MeshName, readonly ValidationFailure[]>> = {
  istio: [MESHGATE, { exitCode: ISTIO_VALIDATION_EXIT_CODE, source: 'istio' }],
  linkerd: [MESHGATE, { exitCode: LINKERD_VALIDATION_EXIT_CODE, source: 'linkerd' }],
  custom: [MESHGATE],
};
