/**
 * The node verdict: does the chain the runtime will load redirect pod traffic through the mesh? Pure: it sees a
 * `Snapshot` (what the disk held) and options, never the disk, so the agent, `check-node` and tests agree.
 *
 * Verified only when, for the network the runtime takes as the pod's default (src/cni/runtime.ts):
 * 1. the mesh plugin type is in its plugin list,                          else `mesh_plugin_missing`
 * 2. at a position after the first plugin (the one creating the interface: calico, flannel, bridge, ptp,
 *    aws-cni, cilium-cni, …); as the first plugin it has no interface and no prevResult to work with,
 *                                                                         else `mesh_plugin_not_chained`
 * 3. every plugin of the chain has a binary in the bin dir(s),            else `binary_missing`
 * 4. … that is executable,                                                else `binary_not_executable`
 * 5. no string of the file is an unrendered installer placeholder (`__CNI_MTU__`, `{{ .KubeConfigFilename }}`):
 *    a plugin reading such a value fails on every ADD,                    else `unrendered_placeholder`.
 * Selection failures come first: `unreadable`, `no_config`, `unparsable_first_file`, `no_valid_config`.
 * Chain checks only look at the default network: with containerd's max_conf_num > 1 the other networks give
 * the pod extra interfaces, their redirection is not what the mesh relies on.
 */
import { createHash } from 'node:crypto';
import { REASONS, type ReasonCode } from './reasons.ts';
import { binaryProblems, selectNetwork } from './runtime.ts';
import type { Evidence, Verdict, VerifyOptions } from './types.ts';
import type { Snapshot } from './types.ts';

export function verifyChain(snapshot: Snapshot, options: VerifyOptions): Verdict {
  const { runtime, pluginType } = options;
  const checkedAt = (options.now ?? (() => new Date()))().toISOString();
  const selection = selectNetwork(snapshot, runtime, options.maxConfNum);
  const { candidates } = selection;
  if (!selection.ok) {
    const evidence: Evidence = { runtime, pluginType, file: selection.file, plugins: [], candidates, checkedAt };
    return verdict(selection.reason, evidence, selection.detail);
  }
  const { file, network } = selection.selected;
  const plugins = network.plugins.map((p) => p.type);
  const evidence: Evidence = { runtime, pluginType, file: file.name, sha256: sha256(file.content ?? ''), plugins, candidates, checkedAt };
  if (!plugins.includes(pluginType)) {
    return verdict('mesh_plugin_missing', evidence, `chain is ${plugins.join(' → ')}`);
  }
  if (plugins.indexOf(pluginType, 1) < 0) {
    const detail = plugins.length === 1 ? `${pluginType} is the only plugin` : `${pluginType} runs first, before ${plugins[1]}`;
    return verdict('mesh_plugin_not_chained', evidence, detail);
  }
  const problem = binaryProblems(snapshot, plugins)[0];
  if (problem) return verdict(problem.outcome, evidence, problem.detail);
  const placeholder = findPlaceholder(network.raw);
  if (placeholder) return verdict('unrendered_placeholder', evidence, `${placeholder.path} is "${placeholder.value}"`);
  return verdict('verified', evidence, `chain is ${plugins.join(' → ')}`);
}

function verdict(reason: ReasonCode, evidence: Evidence, detail?: string): Verdict {
  return { verified: reason === 'verified', reason, message: verdictMessage(reason, evidence.file, detail), detail, evidence };
}

/** One line for people and for the Node condition: the reason's sentence, the file, the specific detail. */
export function verdictMessage(reason: ReasonCode, file?: string, detail?: string): string {
  const where = [file && `file ${file}`, detail].filter(Boolean).join(': ');
  return where ? `${REASONS[reason]} (${where})` : REASONS[reason];
}

function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** `__UPPER_CASE__` (Calico, Istio, Linkerd installer templates) or a Go template action `{{ … }}`. */
const PLACEHOLDER = /__[A-Z][A-Z0-9_]*__|\{\{.*?\}\}/;

/** The first string value (depth first, document order) that still holds a template placeholder. */
export function findPlaceholder(value: unknown, path = '$'): { path: string; value: string } | undefined {
  if (typeof value === 'string') return PLACEHOLDER.test(value) ? { path, value } : undefined;
  if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) {
      const hit = findPlaceholder(v, `${path}[${i}]`);
      if (hit) return hit;
    }
  } else if (typeof value === 'object' && value !== null) {
    for (const [k, v] of Object.entries(value)) {
      const hit = findPlaceholder(v, `${path}.${k}`);
      if (hit) return hit;
    }
  }
  return undefined;
}
