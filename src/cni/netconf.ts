/**
 * Go's `json.Unmarshal` of one plugin object into libcni's plugin struct (`types.NetConf`; `types.PluginConf` from
 * v1.3), the decode that decides whether a plugin loads and which `type` the runtime runs. Go struct rules: keys
 * match fields case-insensitively with Go's folding (so "ſ" matches "s"), every matching key is applied in order,
 * `null` leaves a field as it was, unknown keys are skipped unread, and the known fields must have their Go types
 * (`type`/`name`/`cniVersion` strings, `capabilities` an object of bools, `ipam` an object with a string `type`,
 * `dns` an object of string arrays and a string `domain`, `prevResult` an object). libcni ≥ 1.2 adds one field,
 * `cni.dev/valid-attachments`: a list of `{containerID, ifname}` strings (v1.1 skips the key like any unknown one).
 */
import { JsonNumber, JsonObject, type JsonValue } from './gojson.ts';
import type { LibcniLine } from './types.ts';

/**
 * How an object reaches Go's struct decoder: straight from the file (`document`: every key in file order) or after
 * a round trip through `map[string]interface{}` and json.Marshal (`remarshalled`: at every level, one key per exact
 * name, the last duplicate's value, keys sorted by their UTF-8 bytes).
 */
export type KeyOrder = 'document' | 'remarshalled';

/** The three strings of the struct meshgate uses. */
export interface NetConf {
  type: string;
  name: string;
  cniVersion: string;
}

type FieldKind = 'string' | 'boolMap' | 'anyMap' | 'stringArray' | Fields | { arrayOf: Fields };
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
const COMMON: Record<string, FieldKind> = {
  cniVersion: 'string',
  name: 'string',
  type: 'string',
  capabilities: 'boolMap',
  ipam: IPAM,
  dns: DNS,
  // PrevResult is `json:"-"`; RawPrevResult takes "prevResult".
  prevResult: 'anyMap',
};
/** libcni ≥ 1.2: `ValidAttachments []GCAttachment \`json:"cni.dev/valid-attachments"\``. */
const VALID_ATTACHMENTS = { arrayOf: fields('types.GCAttachment', { containerID: 'string', ifname: 'string' }) };

const STRUCTS: Record<LibcniLine, Fields> = {
  '1.1': fields('types.NetConf', COMMON),
  '1.2': fields('types.NetConf', { ...COMMON, 'cni.dev/valid-attachments': VALID_ATTACHMENTS }),
  '1.3': fields('types.PluginConf', { ...COMMON, 'cni.dev/valid-attachments': VALID_ATTACHMENTS }),
};

/**
 * json.Unmarshal into the line's plugin struct: the three strings it ends with, or the (first) decode error.
 * `checkRange`: the bytes were not decoded into a map before (a plugin file of libcni 1.3's per-network dir), so a
 * number beyond float64 fails only where it lands in an `interface{}` (inside `prevResult`).
 */
export function decodeNetConf(
  value: JsonValue,
  order: KeyOrder,
  line: LibcniLine,
  checkRange = false,
): NetConf | string {
  const strings: Record<string, string> = {};
  const error = decodeStruct(value, STRUCTS[line], order, checkRange, strings);
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
  checkRange: boolean,
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
      } else if (checkRange) {
        const big = numberBeyondFloat64(v);
        if (big !== undefined) return `json: cannot unmarshal number ${big} into Go value of type float64`;
      }
    } else if ('arrayOf' in kind) {
      if (!Array.isArray(v)) return typeError(v, `[]${kind.arrayOf.struct} (${where})`);
      for (const item of v) {
        const error = decodeStruct(item, kind.arrayOf, order, checkRange);
        if (error) return error;
      }
    } else {
      const error = decodeStruct(v, kind, order, checkRange);
      if (error) return error;
    }
  }
  return undefined;
}

/** The first number literal under `root` that float64 cannot hold (Go's ParseFloat range error); iterative. */
function numberBeyondFloat64(root: JsonValue): string | undefined {
  const pending: JsonValue[] = [root];
  for (let v = pending.pop(); v !== undefined; v = pending.pop()) {
    if (v instanceof JsonNumber) {
      if (!Number.isFinite(Number(v.text))) return v.text;
    } else if (v instanceof JsonObject) {
      for (const [, x] of v.entries) pending.push(x);
    } else if (Array.isArray(v)) {
      for (const x of v) pending.push(x);
    }
  }
  return undefined;
}

export function keysAsDecoded(obj: JsonObject, order: KeyOrder): Array<[string, JsonValue]> {
  if (order === 'document') return obj.entries;
  return [...lastByKey(obj.entries)].sort(([a], [b]) => compareUtf8(a, b));
}

/** A Go map decoded from these entries: one value per exact key, the last one. */
export function lastByKey(entries: ReadonlyArray<[string, JsonValue]>): Map<string, JsonValue> {
  return new Map(entries);
}

/**
 * The text json.Marshal writes for a value decoded into `interface{}`: at every level one key per exact name (the
 * last), sorted by UTF-8 bytes. Numbers keep their literal (Go would reformat them; no reader here looks at one).
 * Iterative, so a value nested 10000 deep costs no stack.
 */
export function marshalGo(root: JsonValue): string {
  type Item = { raw: string } | { value: JsonValue };
  const out: string[] = [];
  const pending: Item[] = [{ value: root }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    if ('raw' in next) {
      out.push(next.raw);
      continue;
    }
    const v = next.value;
    const parts: Item[] = [];
    if (v instanceof JsonObject) {
      for (const [i, [k, x]] of keysAsDecoded(v, 'remarshalled').entries())
        parts.push({ raw: `${i > 0 ? ',' : ''}${JSON.stringify(k)}:` }, { value: x });
      parts.unshift({ raw: '{' });
      parts.push({ raw: '}' });
    } else if (Array.isArray(v)) {
      for (const [i, x] of v.entries()) parts.push(...(i > 0 ? [{ raw: ',' }] : []), { value: x });
      parts.unshift({ raw: '[' });
      parts.push({ raw: ']' });
    } else out.push(v instanceof JsonNumber ? v.text : JSON.stringify(v));
    for (let i = parts.length - 1; i >= 0; i--) pending.push(parts[i]);
  }
  return out.join('');
}

/** Go's `foldName` restricted to what can match an ASCII field name: ASCII upper case, ſ → S, K (Kelvin) → K. */
export function goFold(key: string): string {
  return key.replace(/[a-z\u017f\u212a]/g, (c) => (c === '\u017f' ? 'S' : c === '\u212a' ? 'K' : c.toUpperCase()));
}

function compareUtf8(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

export function typeError(value: JsonValue, goType: string): string {
  return `json: cannot unmarshal ${jsonKind(value)} into Go value of type ${goType}`;
}

function jsonKind(v: JsonValue): string {
  if (v instanceof JsonObject) return 'object';
  if (v instanceof JsonNumber) return 'number';
  if (Array.isArray(v)) return 'array';
  return typeof v === 'boolean' ? 'bool' : typeof v;
}

/** The Go type name libcni prints with %T (`invalid name type float64`). */
export function goTypeName(v: JsonValue | undefined): string {
  if (v === null || v === undefined) return '<nil>';
  if (v instanceof JsonObject) return 'map[string]interface {}';
  if (v instanceof JsonNumber) return 'float64';
  if (Array.isArray(v)) return '[]interface {}';
  return typeof v === 'boolean' ? 'bool' : 'string';
}
