/**
 * Validating handler: final posture and the admission mark (src/mark/admission.ts) for pods CREATE, the update
 * guard for pods UPDATE and pods/ephemeralcontainers, the node guard for pods/binding and the legacy bindings resource. Bindings of pods
 * the cache does not know cost one GET (the scheduler binds within milliseconds of creation, so the watch may not
 * have delivered the pod yet); hits and misses are counted so the miss rate can be measured.
 */
import type { Compiled } from '../config/compile.ts';
import type { NodeFacts } from '../facts/node-facts.ts';
import { checkPosture } from '../policy/posture.ts';
import { checkBinding, type RedirectNeed } from '../policy/validate/binding.ts';
import { checkUpdate } from '../policy/validate/update.ts';
import type { PodNeeds } from '../kube/pod-mode-cache.ts';
import type { NamespaceLabels } from '../kube/namespace-labels.ts';
import { type AdmissionScope, judgeMark, type Marker } from '../mark/admission.ts';
import type { AdmissionRequest, Verdict } from './review.ts';
import {
  isBinding,
  isPodConnect,
  isPodCreate,
  isPodUpdate,
  namespaceConfig,
  podInput,
  podUpdateInput,
} from './pod-request.ts';
import { validateAccess } from './access.ts';

export interface ValidateDeps {
  config: Compiled;
  nodes: NodeFacts;
  podNeeds?: PodNeeds;
  /** Counts binding lookups by source: cache hit, GET after a miss, or failure. */
  onLookup?: (source: 'cache' | 'get' | 'get_failed' | 'no_cache') => void;
  /** Verifies the admission mark a pod CREATE carries; undefined: no key, so any mark is refused. */
  marker?: Marker;
  /** Istio ambient: namespace labels from the watch-backed cache. */
  namespaces?: NamespaceLabels;
}

async function podNeed(ns: string, name: string, deps: ValidateDeps): Promise<RedirectNeed | undefined> {
  if (!deps.podNeeds) {
    deps.onLookup?.('no_cache');
    return undefined;
  }
  const cached = deps.podNeeds.get(ns, name);
  if (cached !== undefined) {
    deps.onLookup?.('cache');
    return cached;
  }
  try {
    const need = await deps.podNeeds.fetch(ns, name);
    deps.onLookup?.('get');
    return need;
  } catch (err) {
    deps.onLookup?.('get_failed');
    throw err;
  }
}

async function binding(r: AdmissionRequest, deps: ValidateDeps): Promise<Verdict> {
  const b = r.object as
    | { metadata?: { name?: string; namespace?: string }; target?: { kind?: string; name?: string } }
    | undefined;
  const node = b?.target?.name;
  const name = b?.metadata?.name ?? r.name;
  const ns = b?.metadata?.namespace ?? r.namespace;
  if (typeof node !== 'string' || !node || typeof name !== 'string' || !name || typeof ns !== 'string' || !ns) {
    return { kind: 'deny', reason: 'invalid_object', message: 'the Binding names no pod or no target node' };
  }
  // No cache (offline tests, no cluster): nothing is known about the pod, so it is judged as needing a verified node.
  const need = (await podNeed(ns, name, deps)) ?? 'cni';
  const res = checkBinding(`${ns}/${name}`, node, need, deps.nodes);
  return res.ok ? { kind: 'allow', reason: res.reason } : { kind: 'deny', reason: res.reason, message: res.message };
}

export async function validate(
  r: AdmissionRequest,
  deps: ValidateDeps,
  scope: AdmissionScope = 'namespace',
): Promise<Verdict> {
  if (isBinding(r)) return binding(r, deps);
  if (isPodConnect(r)) return validateAccess(r, deps.config);
  if (isPodUpdate(r)) {
    const input = podUpdateInput(r);
    if (!input.ok) return input.verdict;
    const { old, pod, namespace, requester, requesterNode } = input.value;
    const labels = deps.namespaces?.get(namespace);
    const cfg = namespaceConfig(deps.config, namespace, deps.namespaces?.proxyIds);
    if (!cfg.ok) return cfg.verdict;
    const res = checkUpdate(old, pod, namespace, requester, deps.nodes, cfg.value, labels, requesterNode);
    return res.ok ? { kind: 'allow', reason: res.reason } : { kind: 'deny', reason: res.reason, message: res.message };
  }
  if (!isPodCreate(r)) return { kind: 'allow', reason: 'not_a_pod_create' };
  const input = podInput(r, deps.namespaces?.get);
  if (!input.ok) return input.verdict;
  const cfg = namespaceConfig(deps.config, input.value.namespace, deps.namespaces?.proxyIds);
  if (!cfg.ok) return cfg.verdict;
  const res = checkPosture(input.value, deps.nodes, cfg.value);
  if (!res.ok) return { kind: 'deny', reason: res.reason, message: res.message };
  // Meshed: the posture check guarded the pod ('ok'), rather than skipping it (an opt-out, a system namespace…).
  const mark = judgeMark(input.value.pod, input.value.namespace, scope, res.reason === 'ok', deps.marker);
  if (!mark.ok) return { kind: 'deny', reason: mark.reason, message: mark.message };
  return { kind: 'allow', reason: res.reason, warnings: res.warnings };
}
