/**
 * Where the redirect's containers stand among the pod's init containers (issue 21 §2). Init containers run one after
 * another, in list order, before the app; a native sidecar starts at its place in the list and keeps running.
 * - CNI mode: the validation container runs FIRST, before every other container of the pod (native sidecars
 *   included), so nothing of the pod runs before the redirect is proven. Istio moves its istio-validation first for
 *   this reason ("to block any user containers"); Linkerd appends its network validator after the user's init
 *   containers unless its proxy is a native sidecar, and meshgate's own validator used to take istio-init's slot,
 *   which Istio puts last. Another webhook may still prepend its own init container later; meshgate is called again
 *   then (reinvocationPolicy IfNeeded) and moves the validator back.
 * - init mode: Istio and Linkerd put their privileged init container LAST by design (user init containers run
 *   before iptables, so they reach the network while no proxy runs yet). `redirect.beforeInitContainers: true`
 *   moves it first instead, so no user init container runs unredirected; the validating webhook enforces both.
 */
import type { Container, Pod } from '../contract/pod.ts';
import type { DeepReadonly } from '../util/readonly.ts';
import type { PatchOp } from '../contract/patch.ts';

/** A container's place in spec.initContainers as the earlier ops of the same patch leave it. */
export interface Placed {
  readonly index: number;
  readonly container: Container | DeepReadonly<Container>;
}

/**
 * Ops moving the init container at `from.index` to the front (a JSON Patch remove + add of the same object:
 * RFC 6902's `move` would do, but not every patch consumer in the chain implements it), and the list they leave.
 */
export function toFront(
  inits: readonly (Container | DeepReadonly<Container>)[],
  from: Placed,
): { ops: PatchOp[]; inits: readonly (Container | DeepReadonly<Container>)[] } {
  if (from.index === 0) return { ops: [], inits };
  return {
    ops: [
      { op: 'remove', path: `/spec/initContainers/${from.index}` },
      { op: 'add', path: '/spec/initContainers/0', value: from.container },
    ],
    inits: [from.container, ...inits.toSpliced(from.index, 1)],
  };
}

/** The order problem of a pod's redirect containers, as a sentence; undefined when they stand where they must. */
export function orderProblem(
  pod: Pod,
  mode: 'cni' | 'init',
  found: { validator?: Placed & { list: string }; init?: Placed & { list: string } },
  beforeInitContainers: boolean,
): { reason: 'validator_not_first' | 'redirect_not_first'; message: string } | undefined {
  const first = pod.spec.initContainers?.[0];
  if (mode === 'cni' && found.validator && found.validator.index !== 0) {
    return {
      reason: 'validator_not_first',
      message:
        `the validation container ${found.validator.container.name} runs after init container ${first?.name}: ` +
        'in CNI mode it must be the first container of the pod, so nothing runs before the redirect is proven',
    };
  }
  if (mode === 'init' && beforeInitContainers && found.init && found.init.index !== 0) {
    return {
      reason: 'redirect_not_first',
      message:
        `the redirect's init container ${found.init.container.name} runs after init container ${first?.name}, ` +
        'which would run unredirected (redirect.beforeInitContainers is true)',
    };
  }
  return undefined;
}
