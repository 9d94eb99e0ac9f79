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
 * When the runtime loads Multus, the chain judged is the one Multus runs for the pod (src/cni/multus.ts: its
 * delegate, then whatever the runtime's list chains after Multus), `multus_delegate_unresolved` when meshgate cannot
 * tell it; with `multus.network` (the OpenShift model) a default chain without the mesh plugin is verified when
 * Multus' additional network of that name runs it (`multus_network_missing` otherwise). A missing plugin that
 * Cilium's exclusive mode renamed away is `renamed_by_cilium` (src/cni/cilium.ts).
 */
import { createHash } from 'node:crypto';
import { ciliumRenamed } from './cilium.ts';
import { JsonObject } from './gojson.ts';
import { additionalNetwork, followMultus, isMultus } from './multus.ts';
import type { PluginConf } from './parse.ts';
import { CNI_REASONS, type CniReasonCode } from './reasons.ts';
import { binaryProblems, type LoadedNetwork, selectNetwork } from './runtime.ts';
import type { Evidence, MultusEvidence, Snapshot, ChainVerdict, VerifyOptions } from './types.ts';

/** The chain the runtime runs for a pod's default network: the selected file's, or through Multus. */
export type Chain =
  | { ok: true; selected: LoadedNetwork; plugins: PluginConf[]; multus?: MultusEvidence }
  | { ok: false; reason: CniReasonCode; file?: string; detail?: string; multus?: MultusEvidence };

export function chainOf(snapshot: Snapshot, options: VerifyOptions): Chain & { candidates: Evidence['candidates'] } {
  const selection = selectNetwork(snapshot, options.runtime, options.maxConfNum, options.libcni);
  const { candidates } = selection;
  if (!selection.ok) return { ...selection, candidates };
  const { selected } = selection;
  const own = selected.network.plugins;
  if (!isMultus(own)) return { ok: true, selected, plugins: own, candidates };
  const followed = followMultus(snapshot, own[0], options.libcni, options.multus);
  if (!followed.ok) {
    const { detail, evidence: multus } = followed;
    return { ok: false, reason: 'multus_delegate_unresolved', file: selected.file.name, detail, multus, candidates };
  }
  // What the runtime's list chains after Multus gets Multus' result, as it would the interface plugin's.
  return { ok: true, selected, plugins: [...followed.plugins, ...own.slice(1)], multus: followed.evidence, candidates };
}

export function verifyChain(snapshot: Snapshot, options: VerifyOptions): ChainVerdict {
  const { runtime, pluginType, libcni } = options;
  const checkedAt = (options.now ?? (() => new Date()))().toISOString();
  const chain = chainOf(snapshot, options);
  const { candidates } = chain;
  const renamed = (snapshot.renamed ?? []).map((f) => f.name);
  const extra = { ...(chain.multus ? { multus: chain.multus } : {}), ...(renamed.length > 0 ? { renamed } : {}) };
  if (!chain.ok) {
    const evidence: Evidence = { runtime, libcni, pluginType, file: chain.file, plugins: [], candidates, checkedAt };
    return verdict(chain.reason, { ...evidence, ...extra }, chain.detail);
  }
  const { file, network } = chain.selected;
  const plugins = chain.plugins.map((p) => p.type);
  const pluginFiles = chain.plugins.flatMap((p) => (p.file === undefined ? [] : [p.file]));
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
    ...extra,
  };
  const via = chain.multus ? `via ${chain.multus.type} → ${chain.multus.file ?? 'delegates[0]'}: ` : '';
  const badName = networkNameProblem(network.name);
  if (badName) return verdict('invalid_network_name', evidence, badName);
  const run = chain.multus ? [chain.multus.type, ...plugins] : plugins;
  if (!plugins.includes(pluginType)) {
    const additional = options.multus?.network;
    if (chain.multus && additional)
      return viaAdditional(snapshot, options, evidence, chain, chain.multus, additional, run);
    const renamedBy = ciliumRenamed(snapshot, pluginType, plugins, libcni);
    if (renamedBy) return verdict('renamed_by_cilium', evidence, renamedBy);
    const noMultus = options.multus?.network ? `; Multus does not run here, so no additional network is attached` : '';
    return verdict('mesh_plugin_missing', evidence, `${via}chain is ${plugins.join(' → ')}${noMultus}`);
  }
  if (plugins.indexOf(pluginType, 1) < 0) {
    const detail =
      plugins.length === 1 ? `${pluginType} is the only plugin` : `${pluginType} runs first, before ${plugins[1]}`;
    return verdict('mesh_plugin_not_chained', evidence, `${via}${detail}`);
  }
  return finish(snapshot, evidence, chain, run, `${via}chain is ${plugins.join(' → ')}`);
}

/** The OpenShift model: the default chain lacks the plugin; Multus' additional network must run it. */
function viaAdditional(
  snapshot: Snapshot,
  options: VerifyOptions,
  evidence: Evidence,
  chain: Extract<Chain, { ok: true }>,
  seen: MultusEvidence,
  network: string,
  run: string[],
): ChainVerdict {
  const found = additionalNetwork(snapshot, chain.selected.network.plugins[0], network, options.libcni, options.multus);
  if (!found.ok) return verdict('multus_network_missing', evidence, found.detail);
  const multus = { ...seen, additional: { network, file: found.file, plugins: found.plugins } };
  const withNetwork: Evidence = { ...evidence, multus };
  if (!found.plugins.includes(options.pluginType)) {
    const detail = `additional network ${network} (${found.file}) runs ${found.plugins.join(' → ')}`;
    return verdict('multus_network_missing', withNetwork, detail);
  }
  const detail = `default network ${evidence.plugins.join(' → ')}; ${options.pluginType} as additional network ${network} (${found.file})`;
  return finish(snapshot, withNetwork, chain, [...run, ...found.plugins], detail);
}

/** Binaries and placeholders of everything that runs, then verified. */
function finish(
  snapshot: Snapshot,
  evidence: Evidence,
  chain: Extract<Chain, { ok: true }>,
  run: string[],
  detail: string,
): ChainVerdict {
  const problem = binaryProblems(snapshot, run)[0];
  if (problem) return verdict(problem.outcome, evidence, problem.detail);
  const { file, network } = chain.selected;
  const placeholder =
    (mayHoldPlaceholder(file.content ?? '') ? findPlaceholder(network.raw) : undefined) ??
    chain.plugins
      .map((p) => (p.file === undefined && !chain.multus ? undefined : findPlaceholder(p.raw, p.file ?? '$')))
      .find(Boolean);
  if (placeholder) return verdict('unrendered_placeholder', evidence, `${placeholder.path} is "${placeholder.value}"`);
  return verdict('verified', evidence, detail);
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

function verdict(reason: CniReasonCode, evidence: Evidence, detail?: string): ChainVerdict {
  return {
    verified: reason === 'verified',
    reason,
    message: verdictMessage(reason, evidence.file, detail),
    detail,
    evidence,
  };
}

/** One line for people and for the Node condition: the reason's sentence, the file, the specific detail. */
export function verdictMessage(reason: CniReasonCode, file?: string, detail?: string): string {
  const where = [file && `file ${file}`, detail].filter(Boolean).join(': ');
  return where ? `${CNI_REASONS[reason]} (${where})` : CNI_REASONS[reason];
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
