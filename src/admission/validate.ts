/**
 * Validating handler: final posture for pods CREATE, the node guard for pods/binding CREATE. Bindings of pods
 * the cache does not know cost one GET (the scheduler binds within milliseconds of creation, so the watch may
 * not have delivered the pod yet); hits and misses are counted so the miss rate can be measured.
 */
import type { Logger } from 'pino';
import type { MeshgateConfig } from '../config/types.ts';
import type { NodeFacts } from '../facts/node-facts.ts';
import { checkPosture } from '../policy/posture.ts';
import { checkBinding } from '../policy/binding.ts';
import type { PodModes } from '../kube/pod-mode-cache.ts';
import type { AdmissionRequest, Verdict } from './review.ts';
import { isPodCreate, podInput } from './mutate.ts';
import type { NamespaceLabels } from './namespaces.ts';

export interface ValidateDeps {
  config: MeshgateConfig;
  nodes: NodeFacts;
  podModes?: PodModes;
  namespaces?: NamespaceLabels;
  logger?: Logger;
  /** Counts binding lookups by source: cache hit, GET after a miss, or failure. */
  onLookup?: (source: 'cache' | 'get' | 'get_failed' | 'no_cache') => void;
}

export function isBinding(r: AdmissionRequest): boolean {
  return r.operation === 'CREATE' && r.resource.resource === 'pods' && r.resource.group === '' && r.subResource === 'binding';
}

async function podMode(ns: string, name: string, deps: ValidateDeps): Promise<string | undefined> {
  if (!deps.podModes) {
    deps.onLookup?.('no_cache');
    return undefined;
  }
  const cached = deps.podModes.get(ns, name);
  if (cached !== undefined) {
    deps.onLookup?.('cache');
    return cached;
  }
  try {
    const mode = await deps.podModes.fetch(ns, name);
    deps.onLookup?.('get');
    return mode;
  } catch (err) {
    deps.onLookup?.('get_failed');
    throw err;
  }
}

export async function validate(r: AdmissionRequest, deps: ValidateDeps): Promise<Verdict> {
  if (isBinding(r)) {
    const b = r.object as { metadata?: { name?: string; namespace?: string }; target?: { kind?: string; name?: string } } | undefined;
    const node = b?.target?.name;
    const name = b?.metadata?.name ?? r.name;
    const ns = b?.metadata?.namespace ?? r.namespace;
    if (!node || !name || !ns) return { kind: 'deny', reason: 'invalid_object', message: 'the Binding names no pod or no target node' };
    const res = checkBinding(`${ns}/${name}`, node, await podMode(ns, name, deps), deps.nodes);
    return res.ok ? { kind: 'allow', reason: res.reason } : { kind: 'deny', reason: res.reason, message: res.message };
  }
  if (!isPodCreate(r)) return { kind: 'allow', reason: 'not_a_pod_create' };
  const input = podInput(r, deps.namespaces);
  if ('kind' in input) return input;
  const res = checkPosture(input, deps.nodes, deps.config);
  if (!res.ok) return { kind: 'deny', reason: res.reason, message: res.message };
  return { kind: 'allow', reason: res.reason, warnings: res.warnings };
}
