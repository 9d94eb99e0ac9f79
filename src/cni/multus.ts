/**
 * When the network the runtime loads is Multus' (`00-multus.conf`, type `multus` or the thick plugin's
 * `multus-shim`), the runtime runs Multus, and Multus runs the pod's default network from a configuration of its
 * own. Judging `[multus]` would call every such node unmeshed and send operators to delete the file that keeps
 * their pods networked; so meshgate follows Multus as multus-cni v4 does (pkg/types/conf.go `LoadNetConf`,
 * pkg/k8sclient `GetDefaultNetworks`/`getNetDelegate`, NetworkAttachmentDefinition client `GetCNIConfigFromFile`):
 *
 * - `clusterNetwork` set: it names the default network. A value without "/" is a network name: first a
 *   NetworkAttachmentDefinition of that name in `multusNamespace` (meshgate does not read the API here: see
 *   docs/platforms/openshift.md), then the first file of Multus' `confDir` (default /etc/cni/multus/net.d) whose
 *   network has that name, in name order — a file that does not parse on the way is an error. A value with "/" is
 *   a path: a directory gives its first file, a file is read itself (`.conflist` as a list).
 * - else `delegates[0]`, inline, is the default network (a plugin with a `type`, or a list).
 * The thick plugin's daemon runs in a container, so its paths are the container's (`/host/etc/cni/net.d/…`):
 * `MultusOptions.paths` maps them to the host (src/cni/types.ts). Everything is read from the snapshot, never from
 * disk: a path outside the conf dir and the dirs given with --multus-dir cannot be judged, and says so.
 *
 * The OpenShift model: the mesh plugin is not in the default network but runs as an additional network each pod
 * selects (`k8s.v1.cni.cncf.io/networks: default/istio-cni`). Its NetworkAttachmentDefinition has an empty spec,
 * so Multus runs the file of that network name in its confDir: `additionalNetwork` finds it.
 */
import { createHash } from 'node:crypto';
import { decodeJson, JsonObject, type JsonValue } from './gojson.ts';
import { decodeNetConf, goFold, keysAsDecoded, marshalGo } from './netconf.ts';
import { type PluginConf, parseConfList } from './parse.ts';
import { sortedConfFiles } from './runtime.ts';
import type { ConfFileEntry, LibcniLine, MultusEvidence, MultusOptions, NetDir, Snapshot } from './types.ts';

/** The plugin types of Multus: the thin plugin, and the thick plugin's shim (its daemon does the same lookups). */
export const MULTUS_TYPES: readonly string[] = ['multus', 'multus-shim'];
/** multus-cni's `defaultConfDir`: where network names are looked up. */
export const MULTUS_CONF_DIR = '/etc/cni/multus/net.d';
/**
 * The upstream thick daemonset and OpenShift both mount the runtime's conf dir at this path in the Multus daemon,
 * and the daemon writes `clusterNetwork` with it: the default alias maps it to the conf dir.
 */
export const THICK_CONF_DIR = '/host/etc/cni/net.d';

/** The fields of Multus' NetConf this module reads. */
export interface MultusConf {
  type: string;
  clusterNetwork: string;
  delegates: JsonValue[];
  confDir: string;
}

export type Followed =
  | { ok: true; plugins: PluginConf[]; evidence: MultusEvidence }
  | { ok: false; detail: string; evidence: MultusEvidence };

/** Go's decoding of the plugin (as libcni hands it over: re-marshalled) into Multus' NetConf, or its error. */
export function readMultusConf(plugin: PluginConf): MultusConf | string {
  const conf: MultusConf = { type: plugin.type, clusterNetwork: '', delegates: [], confDir: MULTUS_CONF_DIR };
  for (const [key, v] of keysAsDecoded(plugin.raw, 'remarshalled')) {
    const field = FIELDS[goFold(key)];
    if (!field || v === null) continue;
    if (field === 'delegates') {
      if (!Array.isArray(v) || v.some((d) => d !== null && !(d instanceof JsonObject)))
        return `LoadNetConf: ${key} is not a list of objects`;
      conf.delegates = v;
    } else if (typeof v !== 'string') return `LoadNetConf: ${key} is not a string`;
    else conf[field] = v;
  }
  if (conf.clusterNetwork === '' && conf.delegates.length === 0)
    return 'LoadNetConf: at least one delegate/clusterNetwork must be specified';
  return conf;
}

const FIELDS: Record<string, 'clusterNetwork' | 'delegates' | 'confDir'> = {
  CLUSTERNETWORK: 'clusterNetwork',
  DELEGATES: 'delegates',
  CONFDIR: 'confDir',
};

export function isMultus(plugins: readonly PluginConf[]): boolean {
  return plugins.length > 0 && MULTUS_TYPES.includes(plugins[0].type);
}

/** The default network Multus runs for a pod: its plugins, and where they came from. */
export function followMultus(
  snapshot: Snapshot,
  multus: PluginConf,
  line: LibcniLine,
  options?: MultusOptions,
): Followed {
  const conf = readMultusConf(multus);
  const base: MultusEvidence = { type: multus.type, by: 'delegates' };
  if (typeof conf === 'string') return { ok: false, detail: conf, evidence: base };
  if (conf.clusterNetwork === '') {
    const evidence: MultusEvidence = { ...base, by: 'delegates' };
    const d = delegateFromBytes(marshalGo(conf.delegates[0]), line);
    return typeof d === 'string'
      ? { ok: false, detail: `delegates[0]: ${d}`, evidence }
      : { ok: true, plugins: d, evidence };
  }
  const network = conf.clusterNetwork;
  const evidence: MultusEvidence = { ...base, by: 'clusterNetwork', network };
  const found = network.includes('/')
    ? byPath(snapshot, hostPath(network, options), line)
    : byName(snapshot, hostPath(conf.confDir, options), network, line);
  if (!found.ok) return { ok: false, detail: `clusterNetwork ${JSON.stringify(network)}: ${found.detail}`, evidence };
  const located = { ...evidence, file: found.path, sha256: sha256(found.file.content ?? '') };
  return { ok: true, plugins: found.plugins, evidence: located };
}

/** The OpenShift model's network: the file Multus runs for `namespace/name`, when it chains the mesh plugin. */
export function additionalNetwork(
  snapshot: Snapshot,
  multus: PluginConf,
  network: string,
  line: LibcniLine,
  options?: MultusOptions,
): { ok: true; file: string; plugins: string[] } | { ok: false; detail: string } {
  const conf = readMultusConf(multus);
  if (typeof conf === 'string') return { ok: false, detail: conf };
  const name = network.slice(network.indexOf('/') + 1);
  const found = byName(snapshot, hostPath(conf.confDir, options), name, line);
  if (!found.ok) return { ok: false, detail: `additional network ${network}: ${found.detail}` };
  return { ok: true, file: found.path, plugins: found.plugins.map((p) => p.type) };
}

type Found = { ok: true; path: string; file: ConfFileEntry; plugins: PluginConf[] } | { ok: false; detail: string };

/** `getNetDelegate` for a path: a dir's first file, or the file itself. */
function byPath(snapshot: Snapshot, path: string, line: LibcniLine): Found {
  const dir = netDirAt(snapshot, path);
  if (dir) return byName(snapshot, path, '', line);
  const slash = path.lastIndexOf('/');
  const parent = netDirAt(snapshot, path.slice(0, slash) || '/');
  const name = path.slice(slash + 1);
  if (!parent)
    return { ok: false, detail: `${path} lies outside the dirs meshgate reads (add its dir with --multus-dir)` };
  if (parent.error) return { ok: false, detail: `${parent.path}: ${parent.error}` };
  const file = parent.files.find((f) => f.name === name);
  if (!file) {
    const known = sortedConfFiles([{ name }]).length > 0;
    return {
      ok: false,
      detail: known ? `${path}: no such file` : `${path}: meshgate reads only .conf, .conflist and .json files`,
    };
  }
  const read = readFile(parent, file, line, name.endsWith('.conflist'));
  return read.ok ? { ok: true, path, file, plugins: read.plugins } : { ok: false, detail: `${path}: ${read.detail}` };
}

/** `GetCNIConfigFromFile(name, dir)`: the first file whose network is `name` ("" = the first file). */
function byName(snapshot: Snapshot, dirPath: string, name: string, line: LibcniLine): Found {
  const dir = netDirAt(snapshot, dirPath);
  if (!dir) return { ok: false, detail: `Multus' dir ${dirPath} is not read by meshgate (add it with --multus-dir)` };
  if (dir.error) return { ok: false, detail: `${dir.path}: ${dir.error}` };
  const files = sortedConfFiles(dir.files);
  // A directory named as clusterNetwork counts only if it holds a .conf or .conflist (libcni.ConfFiles).
  if (files.length === 0 || (name === '' && !files.some((f) => !f.name.endsWith('.json'))))
    return { ok: false, detail: `no networks found in ${dir.path}` };
  for (const file of files) {
    const where = `${dir.path}/${file.name}`;
    const read = readFile(dir, file, line, false);
    if (!read.ok) return { ok: false, detail: `${where}: ${read.detail}` };
    if (name === '' || read.name === name) return { ok: true, path: where, file, plugins: read.plugins };
  }
  return { ok: false, detail: `no network named ${JSON.stringify(name)} in ${dir.path}` };
}

/** One file as Multus loads it as a delegate: a list (`.conflist`) or one plugin, whose document `type` runs. */
function readFile(
  dir: NetDir,
  file: ConfFileEntry,
  line: LibcniLine,
  subdirChain: boolean,
): { ok: true; name: string; plugins: PluginConf[] } | { ok: false; detail: string } {
  if (file.oversize) return { ok: false, detail: 'larger than meshgate reads, not judged' };
  if (file.content === undefined) return { ok: false, detail: file.readError ?? 'not read' };
  if (file.name.endsWith('.conflist')) {
    // Only a clusterNetwork path is loaded with its per-network plugin dir (multus' loadSubdirectoryChain); a file
    // found by name is handed on as bytes.
    const dirs = new Map((dir.pluginDirs ?? []).map((d) => [d.name, d]));
    const pluginDir = subdirChain ? (n: string) => dirs.get(n) : undefined;
    const parsed = parseConfList(file.content, { line, pluginDir });
    if (!parsed.ok) return { ok: false, detail: parsed.error };
    const { name } = parsed.network;
    if (subdirChain && line === '1.3' && !/^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/.test(name))
      return { ok: false, detail: `invalid network config name: ${name}` };
    const typed = topLevelType(bytesOf(file.content), line);
    if (typeof typed === 'string') return { ok: false, detail: typed };
    return { ok: true, name, plugins: typed.plugin ? [typed.plugin] : parsed.network.plugins };
  }
  const doc = decodeJson(bytesOf(file.content));
  if (!doc.ok) return { ok: false, detail: `error parsing configuration: ${doc.error}` };
  const conf = decodeNetConf(doc.value, 'document', line);
  if (typeof conf === 'string') return { ok: false, detail: `error parsing configuration: ${conf}` };
  if (!conf.type) return { ok: false, detail: "no 'type'; perhaps this is a .conflist?" };
  return { ok: true, name: conf.name, plugins: [{ type: conf.type, raw: doc.value as JsonObject }] };
}

/**
 * `LoadDelegateNetConf(bytes)`: a delegate with a `type` runs that one plugin (`confAdd`), else it is a list
 * (`conflistAdd`, libcni's parsing of the bytes).
 */
function delegateFromBytes(text: string, line: LibcniLine): PluginConf[] | string {
  const bytes = bytesOf(text);
  const typed = topLevelType(bytes, line);
  if (typeof typed === 'string') return typed;
  if (typed.plugin) return [typed.plugin];
  const list = parseConfList(bytes, { line });
  return list.ok ? list.network.plugins : list.error;
}

/** The delegate's own `type` (Go's decoding into types.NetConf, in document order), or the decode error. */
function topLevelType(bytes: Uint8Array, line: LibcniLine): { plugin?: PluginConf } | string {
  const doc = decodeJson(bytes);
  if (!doc.ok) return `error unmarshalling delegate config: ${doc.error}`;
  const conf = decodeNetConf(doc.value, 'document', line);
  if (typeof conf === 'string') return `error unmarshalling delegate config: ${conf}`;
  return conf.type ? { plugin: { type: conf.type, raw: doc.value as JsonObject } } : {};
}

/** A path from Multus' configuration, on the host: the longest alias whose `from` is the path or a parent of it. */
export function hostPath(path: string, options?: MultusOptions): string {
  const clean = normalise(path);
  const aliases = [...(options?.paths ?? [])].sort((a, b) => b.from.length - a.from.length);
  for (const { from, to } of aliases) {
    const f = normalise(from);
    if (clean === f) return normalise(to);
    if (clean.startsWith(`${f}/`)) return normalise(`${to}/${clean.slice(f.length + 1)}`);
  }
  return clean;
}

function normalise(path: string): string {
  const parts: string[] = [];
  for (const p of path.split('/')) {
    if (p === '' || p === '.') continue;
    if (p === '..') parts.pop();
    else parts.push(p);
  }
  return path.startsWith('/') ? `/${parts.join('/')}` : parts.join('/');
}

/** The dir read at `path`: the conf dir itself, or one of the extra dirs. */
export function netDirAt(snapshot: Snapshot, path: string): NetDir | undefined {
  const want = normalise(path);
  if (snapshot.confDir !== undefined && normalise(snapshot.confDir) === want) {
    return {
      path: want,
      files: snapshot.files,
      ...(snapshot.pluginDirs ? { pluginDirs: snapshot.pluginDirs } : {}),
      ...(snapshot.dirError ? { error: snapshot.dirError } : {}),
      ...(snapshot.dirMissing ? { missing: true } : {}),
    };
  }
  return snapshot.extraDirs?.find((d) => normalise(d.path) === want);
}

function bytesOf(content: string | Uint8Array): Uint8Array {
  return typeof content === 'string' ? Buffer.from(content, 'utf8') : content;
}

function sha256(content: string | Uint8Array): string {
  return createHash('sha256').update(content).digest('hex');
}
