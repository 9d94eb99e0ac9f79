/**
 * Pod codes (3 of 4): what only the validating webhook judges — the pod's final posture after every mutating
 * webhook, updates of running pods, bindings to nodes — and interactive access (kubectl exec and attach,
 * src/policy/validate/access.ts).
 */
import { ANSWER, type Codes, REFUSAL } from './entry.ts';
import { NODES } from './pod-refused.ts';

export const VALIDATED_CODES = {
  proxy_missing: {
    meaning: 'the pod is opted in but carries no real mesh proxy',
    fix:
      "the mesh's injector did not inject it: check that the injector runs and selects the namespace (Istio: " +
      'istio-injection=enabled or istio.io/rev; Linkerd: the linkerd.io/inject annotation), then restart the pod',
    emitters: ['validate'],
    shows: REFUSAL,
  },
  redirect_missing: {
    meaning: 'the pod carries the proxy but neither the privileged init container nor a validation container',
    fix:
      "the mesh injected its proxy without an init container or validator: check the mesh's injection settings " +
      '(CNI mode needs its validator), then restart the pod',
    emitters: ['validate', 'repair'],
    shows: REFUSAL,
  },
  status_mismatch: {
    meaning: "meshgate's status annotation or label does not match the pod's containers",
    fix:
      "recreate the pod from its workload: meshgate's status was edited or copied from another pod (a manifest " +
      'exported from a running pod)',
    emitters: ['mutate', 'validate'],
    shows: REFUSAL,
  },
  validator_not_first: {
    meaning:
      'in CNI mode the validation container must run before every other container of the pod, native sidecars included',
    fix: 'another webhook put an init container before the validation container: let the validator run first',
    emitters: ['validate'],
    shows: REFUSAL,
  },
  redirect_not_first: {
    meaning: "the mesh's init container must run before every user init container (redirect.beforeInitContainers)",
    fix: "let the mesh's init container run before the pod's own init containers",
    emitters: ['validate'],
    shows: REFUSAL,
  },
  mesh_container_changed: {
    meaning: "an update changes the mesh's containers",
    fix: "change the workload's pod template and let it roll, not the running pod",
    emitters: ['validate'],
    shows: ANSWER,
  },
  mesh_metadata_changed: {
    meaning: 'an update changes what meshgate or the mesh recorded on the pod',
    fix: "change the workload's pod template and let it roll, not the running pod",
    emitters: ['validate'],
    shows: ANSWER,
  },
  admission_mark_invalid: {
    meaning:
      "the pod carries meshgate's admission mark (meshgate.io/admitted), which only meshgate's mutating webhook " +
      'may set, and it does not hold for this pod',
    fix:
      'remove the meshgate.io/admitted annotation from the pod template (copied from a running pod): only meshgate ' +
      'writes it',
    emitters: ['validate'],
    shows: ANSWER,
  },
  binding_node_unverified: {
    meaning: 'a pod whose redirect needs the CNI plugin cannot be bound to a node whose CNI chain is not verified',
    fix: `bind it to a verified node, or let the scheduler place it (${NODES})`,
    emitters: ['validate'],
    shows: ANSWER,
  },
  binding_unmeshed: {
    meaning: 'a pod without a real proxy and redirect cannot be bound to a node in a namespace that requires the mesh',
    fix: 'recreate the pod through the webhooks (it was created unmeshed), then let it be scheduled',
    emitters: ['validate'],
    shows: ANSWER,
  },
  access_app_container: {
    meaning:
      "kubectl exec or attach into a container that is not the mesh's: it runs as that container, which admission judged",
    emitters: ['validate'],
    shows: ['metric-label'],
  },
  mesh_container_debug: {
    meaning: 'one of access.debuggers reached a mesh container with kubectl exec or attach: admitted, and recorded',
    emitters: ['validate'],
    shows: ['event', 'metric-label'],
  },
  mesh_container_access: {
    meaning:
      "kubectl exec, attach or an ephemeral container would reach the mesh's proxy, init or validator container, and " +
      'run as it past the redirect; only access.debuggers may exec or attach',
    emitters: ['validate'],
    shows: ['admission-message', 'event', 'metric-label'],
  },
  access_container_unnamed: {
    meaning:
      "kubectl exec or attach names no container, so the apiserver would pick the pod's only one, which may be the " +
      "mesh's proxy",
    emitters: ['validate'],
    shows: ['admission-message', 'event', 'metric-label'],
  },
} as const satisfies Codes;
