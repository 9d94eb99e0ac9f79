/**
 * The node verdict: does the chain the runtime will load redirect pod traffic through the mesh? Pure: it sees a
 * `Snapshot` (what the disk held) and options, never the disk, so the agent, `check-node` and tests agree.
 *
 * Verified only when, for the network the runtime takes as the pod's default (src/cni/runtime.ts):
 * 0. its name is one libcni accepts at ADD (`ValidateNetworkName`), else `invalid_network_name`
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
import { JsonObject } from './gojson.ts';
import { REASONS, type ReasonCode } from './reasons.ts';
import { binaryProblems, selectNetwork } from './runtime.ts';
import type { Evidence, Verdict, VerifyOptions } from './types.ts';
import type { Snapshot } from './types.ts';

export function verifyChain(snapshot: Snapshot, options: VerifyOptions): Verdict {
  const { runtime, pluginType, libcni } = options;
  const checkedAt = (options.now ?? (() => new Date()))().toISOString();
  const selection = selectNetwork(snapshot, runtime, options.maxConfNum, libcni);
  const { candidates } = selection;
  if (!selection.ok) {
    const evidence: Evidence = {
      runtime,
      libcni,
      pluginType,
      file: selection.file,
      plugins: [],
      candidates,
      checkedAt,
    };
    return verdict(selection.reason, evidence, selection.detail);
  }
  const { file, network } = selection.selected;
  const plugins = network.plugins.map((p) => p.type);
  const pluginFiles = network.plugins.flatMap((p) => (p.file === undefined ? [] : [p.file]));
  const evidence: Evidence = {
    runtime,
    libcni,
    pluginType,
    file: file.name,
    sha256: sha256(file.content ?? ''),
    plugins,
    ...(pluginFiles.length > 0 ? { pluginFiles } : {}),
    candidates,
    checkedAt,
  };
  const badName = networkNameProblem(network.name);
  if (badName) return verdict('invalid_network_name', evidence, badName);
  if (!plugins.includes(pluginType)) {
    return verdict('mesh_plugin_missing', evidence, `chain is ${plugins.join(' → ')}`);
  }
  if (plugins.indexOf(pluginType, 1) < 0) {
    const detail =
      plugins.length === 1 ? `${pluginType} is the only plugin` : `${pluginType} runs first, before ${plugins[1]}`;
    return verdict('mesh_plugin_not_chained', evidence, detail);
  }
  const problem = binaryProblems(snapshot, plugins)[0];
  if (problem) return verdict(problem.outcome, evidence, problem.detail);
  const placeholder =
    (mayHoldPlaceholder(file.content ?? '') ? findPlaceholder(network.raw) : undefined) ??
    network.plugins.map((p) => (p.file === undefined ? undefined : findPlaceholder(p.raw, p.file))).find(Boolean);
  if (placeholder) return verdict('unrendered_placeholder', evidence, `${placeholder.path} is "${placeholder.value}"`);
  return verdict('verified', evidence, `chain is ${plugins.join(' → ')}`);
}

/**
 * libcni's `utils.ValidateNetworkName`, which AddNetworkList runs before any plugin (the same in every line): the
 * runtime loads such a network, but every pod's ADD fails with this message.
 */
function networkNameProblem(name: string): string | undefined {
  if (name === '') return 'missing network name';
  if (!/^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/.test(name))
    return `invalid characters found in network name ${JSON.stringify(name)}`;
  return undefined;
}

function verdict(reason: ReasonCode, evidence: Evidence, detail?: string): Verdict {
  return {
    verified: reason === 'verified',
    reason,
    message: verdictMessage(reason, evidence.file, detail),
    detail,
    evidence,
  };
}

/** One line for people and for the Node condition: the reason's sentence, the file, the specific detail. */
export function verdictMessage(reason: ReasonCode, file?: string, detail?: string): string {
  const where = [file && `file ${file}`, detail].filter(Boolean).join(': ');
  return where ? `${REASONS[reason]} (${where})` : REASONS[reason];
}

function sha256(content: string | Uint8Array): string {
  return createHash('sha256').update(content).digest('hex');
}

/** `__UPPER_CASE__` (Calico, Istio, Linkerd installer templates) or a Go template action `{{ … }}`. */
const PLACEHOLDER = /__[A-Z][A-Z0-9_]*__|\{\{.*?\}\}/;

/** A string of the document could hold a placeholder only if the text has "__" or "{{", or escapes (\u005f…). */
function mayHoldPlaceholder(content: string | Uint8Array): boolean {
  const text =
    typeof content === 'string'
      ? Buffer.from(content, 'utf8')
      : Buffer.from(content.buffer, content.byteOffset, content.byteLength);
  return text.includes('__') || text.includes('{{') || text.includes('\\u');
}

interface Visit {
  value: unknown;
  key: string | number | undefined;
  parent: Visit | undefined;
}

/**
 * The first string value (depth first, document order, duplicate keys included) that still holds a template
 * placeholder. Iterative, so a document nested 10000 deep (Go's limit) costs no stack, and the path is built only
 * for the hit (a 2 MiB file has ~10^5 values); takes decoded documents (src/cni/gojson.ts) and plain JSON alike.
 */
export function findPlaceholder(root: unknown, rootPath = '$'): { path: string; value: string } | undefined {
  const pending: Visit[] = [{ value: root, key: undefined, parent: undefined }];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const { value } = next;
    if (typeof value === 'string') {
      if (PLACEHOLDER.test(value)) return { path: pathOf(next, rootPath), value };
      continue;
    }
    if (typeof value !== 'object' || value === null) continue;
    const entries: ReadonlyArray<readonly [string | number, unknown]> = Array.isArray(value)
      ? value.map((v, i) => [i, v] as const)
      : value instanceof JsonObject
        ? value.entries
        : Object.entries(value);
    // Pushed in reverse so the first child is examined first.
    for (let i = entries.length - 1; i >= 0; i--)
      pending.push({ value: entries[i][1], key: entries[i][0], parent: next });
  }
  return undefined;
}

function pathOf(visit: Visit, rootPath: string): string {
  const parts: string[] = [];
  for (let v: Visit | undefined = visit; v?.key !== undefined; v = v.parent)
    parts.push(typeof v.key === 'number' ? `[${v.key}]` : `.${v.key}`);
  return rootPath + parts.reverse().join('');
}
