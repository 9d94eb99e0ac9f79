/**
 * Reads a CNI network configuration file the way libcni (github.com/containernetworking/cni/libcni) does, in each
 * release line whose reading differs (src/cni/types.ts `LibcniLine`), so that "parses" means "this runtime would
 * load it" and the plugin types are the ones it would run. Proven by test/cni/oracle.test.ts, which runs the real
 * go-cni (containerd) and ocicni (CRI-O) of every line over the shared corpus and generated edge cases and requires
 * 100% agreement on: loads or not, network name, cniVersion and plugin types in order.
 *
 * The bytes are decoded like Go's encoding/json (src/cni/gojson.ts: depth limit 10000, float64 range, invalid
 * UTF-8, duplicate keys kept in order). Then, in every line:
 * - `.conflist` → `ConfListFromFile`: the document is decoded into a Go map (exact keys, the last duplicate wins,
 *   every number must fit a float64). `name` must be present and a string, `cniVersion` a string when present,
 *   `plugins` a non-empty array. Each plugin is RE-MARSHALLED (keys deduplicated and sorted by bytes, "TYPE" <
 *   "Type" < "type") and decoded into the plugin struct (src/cni/netconf.ts).
 * - anything else (`.conf`, `.json`) → `ConfFromFile` decodes the whole file into the plugin struct in document
 *   order, then `ConfListFromConf` decodes it again into a map and re-marshals it as the single plugin of a list
 *   holding only `name`, `cniVersion` and `plugins` (so no line's conflist keys apply). The file must pass both:
 *   `{"type":"a","TYPE":"b"}` is type "b" for the first decode and runs as "a"; the network's name and cniVersion
 *   come from the first decode; and as the list adds two levels, a `.conf` may nest only 9998 deep. A conflist
 *   saved as `.conf` has no `type` and fails.
 *
 * What the lines change in a conflist (libcni v1.1.2 → v1.2.3 → v1.3.0; v1.1.0–v1.1.2 and v1.3.0–v1.3.1 read
 * files alike; v1.0.1, in containerd < 1.6.8, differs only in dereferencing nil for a `.conf` holding `null`):
 * - 1.1: `disableCheck` must be a JSON bool; `cniVersions`, `disableGC` and `loadOnlyInlinedPlugins` are ignored.
 * - 1.2: `cniVersions` must be a list of versions and its highest supported one replaces `cniVersion`
 *   (src/cni/cni-versions.ts); `disableCheck` and `disableGC` may be a bool or "true"/"false" in any case; a
 *   plugin's `cni.dev/valid-attachments` must be a list of `{containerID, ifname}` strings (also in `.conf` files).
 * - 1.3: as 1.2, plus `loadOnlyInlinedPlugins` (bool or such a string); unless it is true, the `*.conf` files of
 *   `<confdir>/<name>/` are appended to the plugins, each decoded straight from its bytes into the plugin struct
 *   (`type` required, any error fails the conflist), and `plugins` may then be absent; a list left with no
 *   plugin fails ("no plugin configs found").
 * The plugin binaries' check (CRI-O), the network-name check at ADD and go-cni's and ocicni's loops are the same
 * in every line.
 */
import { resolveCniVersions } from './cni-versions.ts';
import { decodeJson, type JsonValue, JsonObject, MAX_NESTING_DEPTH } from './gojson.ts';
import { decodeNetConf, goTypeName, lastByKey, typeError } from './netconf.ts';
import type { LibcniLine, PluginDir } from './types.ts';

export interface PluginConf {
  /** The plugin type the runtime runs (the binary's name). */
  type: string;
  raw: JsonObject;
  /** libcni 1.3: the per-network plugin file it came from (`name/file.conf`); absent for the file's own plugins. */
  file?: string;
}

export interface ParsedNetwork {
  /** The network name (`name`; for a `.conf`, the plugin's name, possibly empty). */
  name: string;
  cniVersion: string;
  plugins: PluginConf[];
  /** The decoded document, for the placeholder scan. */
  raw: JsonValue;
}

export type ParseResult =
  | { ok: true; network: ParsedNetwork }
  /** `undecidable`: the runtime would read something meshgate does not (see `loadPluginDir`); judge fail-closed. */
  | { ok: false; error: string; undecidable?: true };

export interface ParseOptions {
  line: LibcniLine;
  /** libcni ≥ 1.3: the per-network plugin dir of the conflist named `name`; undefined when it does not exist. */
  pluginDir?: (name: string) => PluginDir | undefined;
}

/** Parses by extension: `.conflist` as a list, everything else as a single plugin (go-cni's and ocicni's rule). */
export function parseNetworkFile(fileName: string, content: string | Uint8Array, options: ParseOptions): ParseResult {
  return fileName.endsWith('.conflist') ? parseConfList(content, options) : parseConf(content, options.line);
}

/** libcni's `ConfListFromFile` (`NetworkConfFromFile` from v1.3). */
export function parseConfList(content: string | Uint8Array, options: ParseOptions): ParseResult {
  const { line } = options;
  const doc = decodeJson(toBytes(content));
  if (!doc.ok) return listFail(doc.error);
  const top = doc.value;
  if (top !== null && !(top instanceof JsonObject)) return listFail(typeError(top, 'map[string]interface {}'));
  if (doc.numberOutOfRange !== undefined) return listFail(rangeError(doc.numberOutOfRange));
  // json.Unmarshal of `null` into the map leaves it empty: "no name", as in Go.
  const list = lastByKey(top?.entries ?? []);
  if (!list.has('name')) return listFail('no name');
  const name = list.get('name');
  if (typeof name !== 'string') return listFail(`invalid name type ${goTypeName(name)}`);
  let cniVersion = list.get('cniVersion');
  if (list.has('cniVersion') && typeof cniVersion !== 'string')
    return listFail(`invalid cniVersion type ${goTypeName(cniVersion)}`);
  cniVersion = typeof cniVersion === 'string' ? cniVersion : '';
  if (line !== '1.1' && list.has('cniVersions')) {
    const versions = resolveCniVersions(list.get('cniVersions') ?? null, cniVersion);
    if (!versions.ok) return listFail(versions.error);
    cniVersion = versions.cniVersion;
  }
  const flags = readFlags(list, line);
  if (typeof flags === 'string') return listFail(flags);
  const plugins: PluginConf[] = [];
  if (!list.has('plugins')) {
    if (line !== '1.3') return listFail("no 'plugins' key");
    if (flags.loadOnlyInlinedPlugins) return listFail("`loadOnlyInlinedPlugins` is true, and no 'plugins' key");
  } else {
    const inline = list.get('plugins');
    if (!Array.isArray(inline)) return listFail(`invalid 'plugins' type ${goTypeName(inline)}`);
    if (inline.length === 0) return listFail('no plugins in list');
    for (const [i, p] of inline.entries()) {
      const conf = decodeNetConf(p, 'remarshalled', line);
      if (typeof conf === 'string')
        return fail(`failed to parse plugin config ${i}: error parsing configuration: ${conf}`);
      if (!conf.type) return fail(`failed to parse plugin config ${i}: error parsing configuration: missing 'type'`);
      plugins.push({ type: conf.type, raw: p as JsonObject });
    }
  }
  if (line === '1.3' && !flags.loadOnlyInlinedPlugins) {
    const fromDir = loadPluginDir(name, options.pluginDir?.(name));
    if (!Array.isArray(fromDir)) return fromDir;
    plugins.push(...fromDir);
    if (plugins.length === 0) return fail('no plugin configs found');
  }
  return { ok: true, network: { name, cniVersion, plugins, raw: top } };
}

interface Flags {
  loadOnlyInlinedPlugins: boolean;
}

/** `disableCheck` (a JSON bool in 1.1), then from 1.2 `disableGC` and from 1.3 `loadOnlyInlinedPlugins` (`readBool`). */
function readFlags(list: Map<string, JsonValue>, line: LibcniLine): Flags | string {
  if (line === '1.1') {
    const v = list.get('disableCheck');
    if (list.has('disableCheck') && typeof v !== 'boolean') return `invalid disableCheck type ${goTypeName(v)}`;
    return { loadOnlyInlinedPlugins: false };
  }
  const keys = line === '1.2' ? ['disableCheck', 'disableGC'] : ['disableCheck', 'disableGC', 'loadOnlyInlinedPlugins'];
  const values: Record<string, boolean> = {};
  for (const key of keys) {
    if (!list.has(key)) continue;
    const v = list.get(key) ?? null;
    if (typeof v === 'boolean') values[key] = v;
    else if (typeof v !== 'string') return `invalid type ${goTypeName(v)} for ${key}`;
    else if (v.toLowerCase() === 'true' || v.toLowerCase() === 'false') values[key] = v.toLowerCase() === 'true';
    else return `invalid value ${JSON.stringify(v.toLowerCase())} for ${key}`;
  }
  return { loadOnlyInlinedPlugins: values.loadOnlyInlinedPlugins === true };
}

/**
 * libcni 1.3's `NetworkPluginConfsFromFiles(confdir, name)`: the plugins of `<confdir>/<name>/*.conf` in name order,
 * or why the conflist fails. A dir outside the conf dir, or a file over meshgate's size limit, is `undecidable`:
 * the runtime would read it, meshgate does not (the node agent sees only its mount of the conf dir).
 */
function loadPluginDir(name: string, dir: PluginDir | undefined): PluginConf[] | Extract<ParseResult, { ok: false }> {
  if (dir === undefined || 'missing' in dir) return [];
  if ('outside' in dir)
    return {
      ...fail(`the plugin dir of network ${JSON.stringify(name)} lies outside the conf dir`),
      undecidable: true,
    };
  if ('error' in dir) return fail(`failed to read plugin config files in ${name}: ${dir.error}`);
  const out: PluginConf[] = [];
  // os.ReadDir's order (bytes of the names); ConfFiles keeps what filepath.Ext calls ".conf".
  const files = dir.files
    .filter((f) => f.name.endsWith('.conf'))
    .sort((a, b) => Buffer.compare(Buffer.from(a.name, 'utf8'), Buffer.from(b.name, 'utf8')));
  for (const file of files) {
    const where = `${name === '' ? '.' : name}/${file.name}`;
    if (file.oversize) return { ...fail(`${where} is larger than meshgate reads`), undecidable: true };
    if (file.content === undefined) return fail(`error reading ${where}: ${file.readError ?? 'not read'}`);
    const doc = decodeJson(toBytes(file.content));
    if (!doc.ok) return fail(`error parsing configuration: ${doc.error}`);
    const conf = decodeNetConf(doc.value, 'document', '1.3', true);
    if (typeof conf === 'string') return fail(`error parsing configuration: ${conf}`);
    if (!conf.type) return fail(`${where}: error parsing configuration: missing 'type'`);
    out.push({ type: conf.type, raw: doc.value as JsonObject, file: where });
  }
  return out;
}

/** libcni's `ConfFromBytes` followed by `ConfListFromConf`, as go-cni and ocicni call them for `.conf`/`.json`. */
export function parseConf(content: string | Uint8Array, line: LibcniLine): ParseResult {
  const doc = decodeJson(toBytes(content));
  if (!doc.ok) return fail(`error parsing configuration: ${doc.error}`);
  const first = decodeNetConf(doc.value, 'document', line);
  if (typeof first === 'string') return fail(`error parsing configuration: ${first}`);
  if (!first.type) return fail("error parsing configuration: missing 'type'");
  // ConfListFromConf: the same bytes into a map (an object here, or the type would be empty), then re-marshalled
  // as {"plugins":[…]} and decoded again: two levels deeper, so Go's depth limit is 2 lower for a .conf.
  if (doc.numberOutOfRange !== undefined) return fail(rangeError(doc.numberOutOfRange));
  if (doc.depth + LIST_WRAPPING > MAX_NESTING_DEPTH) {
    return listFail(
      `exceeded max depth (${doc.depth} levels, ` +
        `${doc.depth + LIST_WRAPPING} once wrapped in a list; Go allows ${MAX_NESTING_DEPTH})`,
    );
  }
  const plugin = doc.value as JsonObject;
  const second = decodeNetConf(plugin, 'remarshalled', line);
  if (typeof second === 'string')
    return fail(`failed to parse plugin config 0: error parsing configuration: ${second}`);
  if (!second.type) return fail("failed to parse plugin config 0: error parsing configuration: missing 'type'");
  return {
    ok: true,
    network: {
      name: first.name,
      cniVersion: first.cniVersion,
      plugins: [{ type: second.type, raw: plugin }],
      raw: plugin,
    },
  };
}

/**
 * The network name of a conflist as every line reads it (the map's last "name", when a string), or undefined:
 * src/cni/snapshot.ts reads the per-network plugin dir of each such name.
 */
export function conflistName(content: string | Uint8Array): string | undefined {
  const doc = decodeJson(toBytes(content));
  if (!doc.ok || !(doc.value instanceof JsonObject)) return undefined;
  const name = lastByKey(doc.value.entries).get('name');
  return typeof name === 'string' ? name : undefined;
}

/** ConfListFromConf puts the plugin in `{"plugins":[…]}`: an object and an array around it. */
const LIST_WRAPPING = 2;

function toBytes(content: string | Uint8Array): Uint8Array {
  return typeof content === 'string' ? Buffer.from(content, 'utf8') : content;
}

function fail(error: string): { ok: false; error: string } {
  return { ok: false, error };
}

function listFail(error: string): { ok: false; error: string } {
  return fail(`error parsing configuration list: ${error}`);
}

function rangeError(text: string): string {
  return `json: cannot unmarshal number ${text} into Go value of type float64`;
}
