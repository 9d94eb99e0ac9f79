/**
 * What `inject` and `explain` share: reading manifests into documents with clear errors (file, document
 * index, reason), and deciding each pod template through the same core as the webhook.
 */
import { parseAllDocuments } from 'yaml';
import type { MeshgateConfig } from '../config/types.ts';
import { loadConfig } from '../config/load.ts';
import type { NodeFacts } from '../facts/node-facts.ts';
import { loadNodeState } from '../facts/node-state.ts';
import { decide, type Decision } from '../inject/decide.ts';
import type { Pod } from '../inject/pod.ts';
import { notAnObject, podTemplates, type PodTemplateRef } from '../manifests/workloads.ts';

export class InputError extends Error {}

export interface ParsedDoc {
  index: number;
  /** Original text, for documents passed through unchanged. */
  text: string;
  value: Record<string, unknown> | null;
}

export function readDocuments(source: string, text: string): ParsedDoc[] {
  const docs = parseAllDocuments(text, { prettyErrors: false });
  if (!Array.isArray(docs)) throw new InputError(`${source}: not YAML`);
  return docs.map((doc, index) => {
    const err = doc.errors[0];
    if (err) throw new InputError(`${source}: document ${index + 1}: invalid YAML: ${err.message.split('\n')[0]}`);
    const value = doc.toJS({ maxAliasCount: 100 }) as unknown;
    // Re-printed without line folding and without its own `---`: the writer joins documents with `---`.
    const text = doc.toString({ lineWidth: 0 }).replace(/^---\n/, '');
    if (value === null || value === undefined) return { index, text, value: null };
    const why = notAnObject(value);
    if (why) throw new InputError(`${source}: document ${index + 1}: not a Kubernetes object: ${why}`);
    return { index, text, value: value as Record<string, unknown> };
  });
}

export interface TemplateDecision {
  ref: PodTemplateRef;
  decision: Decision;
}

/** Offline there is no namespace to consult: labels are unknown, so the webhook selector is trusted. */
export function decideTemplate(ref: PodTemplateRef, facts: NodeFacts, cfg: MeshgateConfig, nodeName?: string): Decision {
  // The template's own metadata, absent or not: ops must apply to the document exactly as it is.
  const pod = { metadata: ref.template.metadata, spec: { ...ref.template.spec } } as unknown as Pod;
  if (nodeName) pod.spec.nodeName = nodeName;
  return decide({ pod, namespace: { name: ref.namespace ?? 'default' } }, facts, cfg);
}

export function loadOffline(configFile?: string, nodeStateFile?: string): { cfg: MeshgateConfig; facts: NodeFacts } {
  return { cfg: loadConfig(configFile), facts: loadNodeState(nodeStateFile) };
}
