/**
 * Reads a CNI network configuration file the way libcni v1.1.1 (github.com/containernetworking/cni/libcni, the
 * version containerd 1.6.20 builds go-cni v1.1.6 with) does, so that "parses" means "the runtime would load it"
 * and the plugin types are the ones it would run. Proven by test/cni/oracle.test.ts, which runs the real Go code
 * (scripts/build-cni-oracle.sh) over the shared corpus and generated edge cases and requires 100% agreement on:
 * loads or not, network name, cniVersion and plugin types in order.
 *
 * The bytes are decoded like Go's encoding/json (src/cni/gojson.ts: depth limit 10000, float64 range, invalid
 * UTF-8, duplicate keys kept in order). Then:
 * - `.conflist` → `ConfListFromFile`: the document is decoded into a Go map (exact keys, the last duplicate wins,
 *   every number must fit a float64). `name` must be present and a string, `cniVersion` a string when present,
 *   `disableCheck` a bool when present, `plugins` a non-empty array. Each plugin is RE-MARSHALLED (keys deduplicated
 *   and sorted by bytes, "TYPE" < "Type" < "type") and decoded into `types.NetConf` (below).
 * - anything else (`.conf`, `.json`) → `ConfFromFile` decodes the whole file into `NetConf` in document order,
 *   then `ConfListFromConf` decodes it again into a map and re-marshals it as the single plugin of a list. So the
 *   file must pass both: `{"type":"a","TYPE":"b"}` is type "b" for the first decode and runs as "a"; the network's
 *   name and cniVersion come from the first decode; and as the list adds two levels, a `.conf` may nest only
 *   9998 deep. A conflist saved as `.conf` has no `type` and fails.
 * - `NetConf` decoding (Go struct rules): keys match fields case-insensitively with Go's folding (so "ſ" matches
 *   "s"), every matching key is applied in order, `null` leaves a field as it was, unknown keys are skipped
 *   unread, and the known fields must have their Go types (`type`/`name`/`cniVersion` strings, `capabilities` an
 *   object of bools, `ipam` an object with a string `type`, `dns` an object of string arrays and a string `domain`,
 *   `prevResult` an object). `type` must end up non-empty.
 *
 * Not emulated, on purpose (each is a difference with the newest libcni v1.3.1, listed by the oracle test):
 * libcni ≥ 1.2 also accepts "true"/"false" strings for `disableCheck`, checks `cniVersions`, `disableGC`,
 * `loadOnlyInlinedPlugins` and `cni.dev/valid-attachments`, and ≥ 1.3 loads (more) plugins of a conflist from
 * `<confdir>/<name>/*.conf`. meshgate follows v1.1.1, the version proven on the real nodes (Debian containerd
 * 1.6.20).
 */
import { decodeJson, type JsonValue, JsonNumber, JsonObject, MAX_NESTING_DEPTH } from './gojson.ts';

export interface PluginConf {
  /** The plugin type the runtime runs (the binary's name). */
  type: string;
  raw: JsonObject;
}

export interface ParsedNetwork {
  /** The network name (`name`; for a `.conf`, the plugin's name, possibly empty). */
  name: string;
  cniVersion: string;
  plugins: PluginConf[];
  /** The decoded document, for the placeholder scan. */
  raw: JsonValue;
}

export type ParseResult = { ok: true; network: ParsedNetwork } | { ok: false; error: string };

/** Parses by extension: `.conflist` as a list, everything else as a single plugin (go-cni's and ocicni's rule). */
export function parseNetworkFile(fileName: string, content: string | Uint8Array): ParseResult {
  return fileName.endsWith('.conflist') ? parseConfList(content) : parseConf(content);
}

/** libcni's `ConfListFromBytes`. */
export function parseConfList(content: string | Uint8Array): ParseResult {
  const doc = decodeJson(toBytes(content));
  if (!doc.ok) return fail(`error parsing configuration list: ${doc.error}`);
  const top = doc.value;
  if (top !== null && !(top instanceof JsonObject))
    return fail(`error parsing configuration list: ${typeError(top, 'map[string]interface {}')}`);
  if (doc.numberOutOfRange !== undefined)
    return fail(`error parsing configuration list: ${rangeError(doc.numberOutOfRange)}`);
  // json.Unmarshal of `null` into the map leaves it empty: "no name", as in Go.
  const list = lastByKey(top?.entries ?? []);
  if (!list.has('name')) return fail('error parsing configuration list: no name');
  const name = list.get('name');
  if (typeof name !== 'string') return fail(`error parsing configuration list: invalid name type ${goTypeName(name)}`);
  const cniVersion = list.get('cniVersion');
  if (list.has('cniVersion') && typeof cniVersion !== 'string') {
    return fail(`error parsing configuration list: invalid cniVersion type ${goTypeName(cniVersion)}`);
  }
  if (list.has('disableCheck') && typeof list.get('disableCheck') !== 'boolean') {
    return fail(`error parsing configuration list: invalid disableCheck type ${goTypeName(list.get('disableCheck'))}`);
  }
  if (!list.has('plugins')) return fail("error parsing configuration list: no 'plugins' key");
  const plugins = list.get('plugins');
  if (!Array.isArray(plugins))
    return fail(`error parsing configuration list: invalid 'plugins' type ${goTypeName(plugins)}`);
  if (plugins.length === 0) return fail('error parsing configuration list: no plugins in list');
  const parsed: PluginConf[] = [];
  for (const [i, p] of plugins.entries()) {
    const conf = decodeNetConf(p, 'remarshalled');
    if (typeof conf === 'string')
      return fail(`failed to parse plugin config ${i}: error parsing configuration: ${conf}`);
    if (!conf.type) return fail(`failed to parse plugin config ${i}: error parsing configuration: missing 'type'`);
    parsed.push({ type: conf.type, raw: p as JsonObject });
  }
  return {
    ok: true,
    network: { name, cniVersion: typeof cniVersion === 'string' ? cniVersion : '', plugins: parsed, raw: top },
  };
}

/** libcni's `ConfFromBytes` followed by `ConfListFromConf`, as go-cni and ocicni call them for `.conf`/`.json`. */
export function parseConf(content: string | Uint8Array): ParseResult {
  const doc = decodeJson(toBytes(content));
  if (!doc.ok) return fail(`error parsing configuration: ${doc.error}`);
  const first = decodeNetConf(doc.value, 'document');
  if (typeof first === 'string') return fail(`error parsing configuration: ${first}`);
  if (!first.type) return fail("error parsing configuration: missing 'type'");
  // ConfListFromConf: the same bytes into a map (an object here, or the type would be empty), then re-marshalled
  // as {"plugins":[…]} and decoded again: two levels deeper, so Go's depth limit is 2 lower for a .conf.
  if (doc.numberOutOfRange !== undefined) return fail(rangeError(doc.numberOutOfRange));
  if (doc.depth + LIST_WRAPPING > MAX_NESTING_DEPTH) {
    return fail(
      `error parsing configuration list: exceeded max depth (${doc.depth} levels, ` +
        `${doc.depth + LIST_WRAPPING} once wrapped in a list; Go allows ${MAX_NESTING_DEPTH})`,
    );
  }
  const plugin = doc.value as JsonObject;
  const second = decodeNetConf(plugin, 'remarshalled');
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

/** ConfListFromConf puts the plugin in `{"plugins":[…]}`: an object and an array around it. */
const LIST_WRAPPING = 2;

/**
 * How an object reaches Go's struct decoder: straight from the file (`document`: every key in file order) or after
 * a round trip through `map[string]interface{}` and json.Marshal (`remarshalled`: at every level, one key per exact
 * name, the last duplicate's value, keys sorted by their UTF-8 bytes).
 */
type KeyOrder = 'document' | 'remarshalled';

type FieldKind = 'string' | 'boolMap' | 'anyMap' | 'stringArray' | Fields;
interface Fields {
  struct: string;
  /** Go's folded field name → the field. */
  byFold: Record<string, { name: string; kind: FieldKind }>;
}

function fields(struct: string, list: Record<string, FieldKind>): Fields {
  return {
    struct,
    byFold: Object.fromEntries(Object.entries(list).map(([name, kind]) => [goFold(name), { name, kind }])),
  };
}

const IPAM = fields('types.IPAM', { type: 'string' });
const DNS = fields('types.DNS', {
  nameservers: 'stringArray',
  domain: 'string',
  search: 'stringArray',
  options: 'stringArray',
});
/** libcni v1.1.1's `types.NetConf` (PrevResult is `json:"-"`, so not a field). */
const NETCONF = fields('types.NetConf', {
  cniVersion: 'string',
  name: 'string',
  type: 'string',
  capabilities: 'boolMap',
  ipam: IPAM,
  dns: DNS,
  prevResult: 'anyMap',
});

interface NetConf {
  type: string;
  name: string;
  cniVersion: string;
}

/** json.Unmarshal into `types.NetConf`: the three strings it ends with, or the (first) decode error. */
function decodeNetConf(value: JsonValue, order: KeyOrder): NetConf | string {
  const strings: Record<string, string> = {};
  const error = decodeStruct(value, NETCONF, order, strings);
  if (error) return error;
  return { type: strings.type ?? '', name: strings.name ?? '', cniVersion: strings.cniVersion ?? '' };
}

/**
 * Go's decoding of `value` into a struct; top-level string fields land in `out`. Not recursive beyond the
 * known fields (at most three levels: NetConf → dns → nameservers), so document depth costs no stack here.
 */
function decodeStruct(
  value: JsonValue,
  struct: Fields,
  order: KeyOrder,
  out?: Record<string, string>,
): string | undefined {
  if (value === null) return undefined;
  if (!(value instanceof JsonObject)) return typeError(value, struct.struct);
  for (const [key, v] of keysAsDecoded(value, order)) {
    const field = struct.byFold[goFold(key)];
    if (!field || v === null) continue;
    const where = `Go struct field ${struct.struct.replace('types.', '')}.${field.name}`;
    const kind = field.kind;
    if (kind === 'string') {
      if (typeof v !== 'string') return typeError(v, `string (${where})`);
      if (out) out[field.name] = v;
    } else if (kind === 'stringArray') {
      if (!Array.isArray(v)) return typeError(v, `[]string (${where})`);
      const bad = v.find((s) => s !== null && typeof s !== 'string');
      if (bad !== undefined) return typeError(bad, `string (${where})`);
    } else if (kind === 'boolMap' || kind === 'anyMap') {
      if (!(v instanceof JsonObject))
        return typeError(v, `map[string]${kind === 'boolMap' ? 'bool' : 'interface {}'} (${where})`);
      if (kind === 'boolMap') {
        const bad = keysAsDecoded(v, order).find(([, x]) => x !== null && typeof x !== 'boolean');
        if (bad) return typeError(bad[1], `bool (${where})`);
      }
    } else {
      const error = decodeStruct(v, kind, order);
      if (error) return error;
    }
  }
  return undefined;
}

function keysAsDecoded(obj: JsonObject, order: KeyOrder): Array<[string, JsonValue]> {
  if (order === 'document') return obj.entries;
  return [...lastByKey(obj.entries)].sort(([a], [b]) => compareUtf8(a, b));
}

/** A Go map decoded from these entries: one value per exact key, the last one. */
function lastByKey(entries: ReadonlyArray<[string, JsonValue]>): Map<string, JsonValue> {
  return new Map(entries);
}

/** Go's `foldName` restricted to what can match an ASCII field name: ASCII upper case, ſ → S, K (Kelvin) → K. */
function goFold(key: string): string {
  return key.replace(/[a-z\u017f\u212a]/g, (c) => (c === '\u017f' ? 'S' : c === '\u212a' ? 'K' : c.toUpperCase()));
}

function compareUtf8(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

function toBytes(content: string | Uint8Array): Uint8Array {
  return typeof content === 'string' ? Buffer.from(content, 'utf8') : content;
}

function fail(error: string): { ok: false; error: string } {
  return { ok: false, error };
}

function rangeError(text: string): string {
  return `json: cannot unmarshal number ${text} into Go value of type float64`;
}

function typeError(value: JsonValue, goType: string): string {
  return `json: cannot unmarshal ${jsonKind(value)} into Go value of type ${goType}`;
}

function jsonKind(v: JsonValue): string {
  if (v instanceof JsonObject) return 'object';
  if (v instanceof JsonNumber) return 'number';
  if (Array.isArray(v)) return 'array';
  return typeof v === 'boolean' ? 'bool' : typeof v;
}

/** The Go type name libcni prints with %T (`invalid name type float64`). */
function goTypeName(v: JsonValue | undefined): string {
  if (v === null || v === undefined) return '<nil>';
  if (v instanceof JsonObject) return 'map[string]interface {}';
  if (v instanceof JsonNumber) return 'float64';
  if (Array.isArray(v)) return '[]interface {}';
  return typeof v === 'boolean' ? 'bool' : 'string';
}
