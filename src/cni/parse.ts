/**
 * Parses a CNI network configuration file the way libcni (github.com/containernetworking/cni/libcni, v1.1–v1.3,
 * as vendored by containerd's go-cni and CRI-O's ocicni) does, so that "parses" means "the runtime would load it":
 *
 * - `.conflist` → `ConfListFromFile`: the top level is decoded into a Go map, so keys are case-sensitive. `name`
 *   must be present and a string; `cniVersion`, when present, a string; `cniVersions` an array of strings;
 *   `disableCheck`/`disableGC`/`loadOnlyInlinedPlugins` a bool or the strings "true"/"false"; `plugins` a
 *   non-empty array whose entries each parse as a plugin (below). A missing `cniVersion` is accepted.
 * - anything else (`.conf`, `.json`) → `ConfFromFile` + `ConfListFromConf`: the whole file is ONE plugin. A
 *   conflist saved as `.conf` therefore fails ("missing 'type'"), as it does in containerd and CRI-O.
 * - a plugin → `json.Unmarshal` into `types.NetConf`/`PluginConf`: `null` leaves a field unset, the known fields
 *   must have their Go types (`type`/`name`/`cniVersion` strings, `capabilities` an object of bools, `ipam` and
 *   `dns` objects, …), keys match case-insensitively (Go's struct decoding; the last matching key wins), unknown
 *   keys are ignored, and `type` must end up non-empty.
 *
 * Not emulated, on purpose: libcni ≥ 1.3 loads a conflist without `plugins` from `<confdir>/<name>/*.conf`; we
 * report such a file as unparsable (fail closed). Go's acceptance of invalid UTF-8 is matched by Node's UTF-8
 * decoding (both substitute U+FFFD); numbers beyond float64 range are accepted here but rejected by Go.
 */

export interface PluginConf {
  type: string;
  raw: Record<string, unknown>;
}

export interface ParsedNetwork {
  /** The network name (`name`; for a `.conf`, the plugin's name, possibly empty). */
  name: string;
  cniVersion: string;
  plugins: PluginConf[];
  /** The decoded JSON document, for the placeholder scan. */
  raw: unknown;
}

export type ParseResult = { ok: true; network: ParsedNetwork } | { ok: false; error: string };

type JsonObject = Record<string, unknown>;

/** Parses by extension: `.conflist` as a list, everything else as a single plugin (go-cni's and ocicni's rule). */
export function parseNetworkFile(fileName: string, content: string): ParseResult {
  return fileName.endsWith('.conflist') ? parseConfList(content) : parseConf(content);
}

export function parseConfList(content: string): ParseResult {
  const doc = decode(content);
  if (!doc.ok) return doc;
  const top = doc.value;
  // json.Unmarshal of `null` into a map leaves it nil: the "no name" check below fails, as in Go.
  if (top !== null && !isObject(top)) return fail(`cannot unmarshal ${jsonKind(top)} into a configuration list`);
  const list: JsonObject = top ?? {};
  if (!Object.hasOwn(list, 'name')) return fail('no name');
  if (typeof list.name !== 'string') return fail(`invalid name type ${goKind(list.name)}`);
  if (Object.hasOwn(list, 'cniVersion') && typeof list.cniVersion !== 'string') {
    return fail(`invalid cniVersion type ${goKind(list.cniVersion)}`);
  }
  if (Object.hasOwn(list, 'cniVersions')) {
    const versions = list.cniVersions;
    if (!Array.isArray(versions) || versions.some((v) => typeof v !== 'string')) return fail('invalid type for cniVersions');
  }
  for (const key of ['disableCheck', 'disableGC', 'loadOnlyInlinedPlugins']) {
    if (!Object.hasOwn(list, key)) continue;
    const v = list[key];
    const ok = typeof v === 'boolean' || (typeof v === 'string' && ['true', 'false'].includes(v.toLowerCase()));
    if (!ok) return fail(`invalid value for ${key}`);
  }
  if (!Object.hasOwn(list, 'plugins')) return fail("no 'plugins' key");
  const plugins = list.plugins;
  if (!Array.isArray(plugins)) return fail(`invalid 'plugins' type ${goKind(plugins)}`);
  if (plugins.length === 0) return fail('no plugins in list');
  const parsed: PluginConf[] = [];
  for (const [i, p] of plugins.entries()) {
    const plugin = parsePlugin(p);
    if (typeof plugin === 'string') return fail(`failed to parse plugin config ${i}: ${plugin}`);
    parsed.push(plugin);
  }
  const cniVersion = typeof list.cniVersion === 'string' ? list.cniVersion : '';
  return { ok: true, network: { name: list.name, cniVersion, plugins: parsed, raw: top } };
}

export function parseConf(content: string): ParseResult {
  const doc = decode(content);
  if (!doc.ok) return doc;
  const plugin = parsePlugin(doc.value);
  if (typeof plugin === 'string') return fail(plugin);
  const name = goField(plugin.raw, 'name');
  const cniVersion = goField(plugin.raw, 'cniVersion');
  return {
    ok: true,
    network: {
      name: typeof name === 'string' ? name : '',
      cniVersion: typeof cniVersion === 'string' ? cniVersion : '',
      plugins: [plugin],
      raw: doc.value,
    },
  };
}

/** One plugin entry, checked against the Go struct libcni decodes it into. Returns the error text on failure. */
function parsePlugin(value: unknown): PluginConf | string {
  if (value === null) return "missing 'type'";
  if (!isObject(value)) return `cannot unmarshal ${jsonKind(value)} into a plugin configuration`;
  const problem = checkFieldTypes(value);
  if (problem) return problem;
  const type = goField(value, 'type');
  if (typeof type !== 'string' || type === '') return "missing 'type'";
  return { type, raw: value };
}

/** The NetConf fields libcni decodes with a Go type; a JSON value of another type is a decode error. */
function checkFieldTypes(plugin: JsonObject): string | undefined {
  for (const key of ['cniVersion', 'name', 'type']) {
    if (!isNullOr(goField(plugin, key), 'string')) return `field ${key} is not a string`;
  }
  const caps = goField(plugin, 'capabilities');
  if (caps != null && (!isObject(caps) || Object.values(caps).some((v) => v !== null && typeof v !== 'boolean'))) {
    return 'field capabilities is not an object of booleans';
  }
  const ipam = goField(plugin, 'ipam');
  if (ipam != null && (!isObject(ipam) || !isNullOr(goField(ipam, 'type'), 'string'))) return 'field ipam is not an object';
  const dns = goField(plugin, 'dns');
  if (dns != null) {
    if (!isObject(dns)) return 'field dns is not an object';
    for (const key of ['nameservers', 'search', 'options']) {
      const v = goField(dns, key);
      if (v != null && (!Array.isArray(v) || v.some((s) => s !== null && typeof s !== 'string'))) {
        return `field dns.${key} is not an array of strings`;
      }
    }
    if (!isNullOr(goField(dns, 'domain'), 'string')) return 'field dns.domain is not a string';
  }
  const prev = goField(plugin, 'prevResult');
  if (prev != null && !isObject(prev)) return 'field prevResult is not an object';
  return undefined;
}

/** Go's struct decoding: a key matches a field case-insensitively, and the last matching key in the document wins. */
export function goField(obj: JsonObject, field: string): unknown {
  const wanted = field.toLowerCase();
  let found: unknown = undefined;
  for (const [key, value] of Object.entries(obj)) if (key.toLowerCase() === wanted) found = value;
  return found;
}

function decode(content: string): { ok: true; value: unknown } | { ok: false; error: string } {
  try {
    return { ok: true, value: JSON.parse(content) };
  } catch (err) {
    return fail(`not JSON: ${(err as Error).message}`);
  }
}

function fail(error: string): { ok: false; error: string } {
  return { ok: false, error };
}

function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isNullOr(v: unknown, type: 'string'): boolean {
  return v === undefined || v === null || typeof v === type;
}

function jsonKind(v: unknown): string {
  return Array.isArray(v) ? 'array' : v === null ? 'null' : typeof v;
}

/** The Go type name libcni puts in its messages (`invalid name type float64`). */
function goKind(v: unknown): string {
  if (v === null || v === undefined) return '<nil>';
  if (Array.isArray(v)) return '[]interface {}';
  return { number: 'float64', boolean: 'bool', object: 'map[string]interface {}', string: 'string' }[typeof v as string] ?? typeof v;
}
