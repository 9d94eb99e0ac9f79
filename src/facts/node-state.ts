/**
 * Node facts from a file, for `serve` without a cluster and for the CLI:
 *   nodes:
 *     node-a: {verified: true, kubeletVersion: v1.34.1, containerRuntimeVersion: containerd://2.4.2}
 *     node-b: {verified: false, reason: mesh_plugin_missing}
 */
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { NodeFactStore } from './node-facts.ts';

export class NodeStateError extends Error {}

const KNOWN = new Set(['verified', 'kubeletVersion', 'containerRuntimeVersion', 'reason', 'message']);

export function nodeFactsFromState(raw: unknown, source: string): NodeFactStore {
  const store = new NodeFactStore();
  const fail = (msg: string): never => {
    throw new NodeStateError(`invalid node state in ${source}: ${msg}`);
  };
  if (raw === null || raw === undefined) {
    store.markSynced();
    return store;
  }
  if (typeof raw !== 'object' || Array.isArray(raw)) fail('expected a mapping with a "nodes" key');
  const top = raw as Record<string, unknown>;
  for (const key of Object.keys(top)) if (key !== 'nodes') fail(`unknown key "${key}" (only "nodes")`);
  const nodes = top.nodes ?? {};
  if (typeof nodes !== 'object' || nodes === null || Array.isArray(nodes)) fail('"nodes" must map node names to facts');
  for (const [name, value] of Object.entries(nodes as Record<string, unknown>)) {
    if (typeof value !== 'object' || value === null) fail(`nodes.${name}: expected a mapping`);
    const v = value as Record<string, unknown>;
    for (const key of Object.keys(v))
      if (!KNOWN.has(key)) fail(`nodes.${name}.${key}: unknown key (known: ${[...KNOWN].join(', ')})`);
    if (typeof v.verified !== 'boolean')
      fail(`nodes.${name}.verified: expected true or false, got ${JSON.stringify(v.verified)}`);
    for (const key of ['kubeletVersion', 'containerRuntimeVersion'])
      if (v[key] !== undefined && typeof v[key] !== 'string') fail(`nodes.${name}.${key}: expected a string`);
    const verified = v.verified as boolean;
    store.upsert({
      name,
      verified,
      reason: typeof v.reason === 'string' ? v.reason : verified ? 'verified' : 'not_verified',
      message:
        typeof v.message === 'string'
          ? v.message
          : verified
            ? 'verified (node state file)'
            : 'not verified (node state file)',
      kubeletVersion: v.kubeletVersion as string | undefined,
      ...(typeof v.containerRuntimeVersion === 'string' ? { runtimeVersion: v.containerRuntimeVersion } : {}),
    });
  }
  store.markSynced();
  return store;
}

export function loadNodeState(file?: string): NodeFactStore {
  if (!file) return nodeFactsFromState(undefined, 'none');
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new NodeStateError(`cannot read node state ${file}: ${(err as Error).message}`);
  }
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (err) {
    throw new NodeStateError(`node state ${file} is not valid YAML: ${(err as Error).message.split('\n')[0]}`);
  }
  return nodeFactsFromState(raw, file);
}
