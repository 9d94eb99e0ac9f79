#!/usr/bin/env node
/**
 * Writes `properties.config` of charts/meshgate/values.schema.json from meshgate's one declaration of its
 * configuration (src/config/schema.ts), so helm accepts the keys and kinds meshgate's loader accepts. The chart's
 * `config` is an override merged onto the mesh profile's defaults, so no key is required there, and `mesh` and
 * `meshNamespace` are the chart's own values. The rest of the file (the chart's other values, and the per-mesh `allOf`
 * closures at its end, which say which config keys each profile takes) stays hand-written.
 *
 *   node scripts/values-schema.ts          rewrite charts/meshgate/values.schema.json
 *   node scripts/values-schema.ts --check  exit 1 when the committed file is not what this would write
 *
 * test/chart/values-schema.test.ts fails when the committed file is out of date; regenerate docs/values.md after
 * (node scripts/values-doc.ts).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MeshgateConfigSchema } from '../src/config/schema.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
export const VALUES_SCHEMA = join(root, 'charts', 'meshgate', 'values.schema.json');

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

const isObject = (v: Json | undefined): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A section of the config is merged onto the profile's defaults: none of its keys is required in an override. */
function asOverride(node: Json): Json {
  if (Array.isArray(node)) return node.map(asOverride);
  if (!isObject(node)) return node;
  const section = node.additionalProperties === false && isObject(node.properties);
  return Object.fromEntries(
    Object.entries(node)
      .filter(([key]) => !(section && key === 'required'))
      .map(([key, value]) => [key, asOverride(value)]),
  );
}

/** The chart's `properties.config`, generated. */
export function chartConfigSchema(): JsonObject {
  // JSON round trip: TypeBox's symbol-keyed bookkeeping is not schema.
  const { properties, ...rest } = JSON.parse(JSON.stringify(MeshgateConfigSchema)) as JsonObject;
  const { mesh: _mesh, meshNamespace: _ns, ...chartKeys } = properties as JsonObject;
  return asOverride({
    description: "meshgate's config file (src/config/schema.ts) without mesh and meshNamespace, which the chart sets",
    ...rest,
    properties: chartKeys,
  }) as JsonObject;
}

/** A description first, then the type, then the rest: as a reader looks for them. */
function ordered(node: JsonObject): [string, Json][] {
  const rank = (key: string) => ['description', 'type'].indexOf(key) >>> 0;
  return Object.entries(node).sort(([a], [b]) => rank(a) - rank(b));
}

/**
 * As the rest of the file is written: a section (a closed object with keys of its own) and the map of its keys
 * opened up over lines, any other schema on one line.
 */
function render(value: Json, indent: string, keyMap = false): string {
  if (Array.isArray(value)) return `[${value.map((v) => render(v, indent)).join(', ')}]`;
  if (!isObject(value)) return JSON.stringify(value);
  const section = value.additionalProperties === false && isObject(value.properties);
  if (!keyMap && !section)
    return `{${ordered(value)
      .map(([k, v]) => `${JSON.stringify(k)}: ${render(v, indent)}`)
      .join(', ')}}`;
  const inner = `${indent}  `;
  const lines = (keyMap ? Object.entries(value) : ordered(value)).map(
    ([k, v]) => `${inner}${JSON.stringify(k)}: ${render(v, inner, !keyMap && k === 'properties')}`,
  );
  return `{\n${lines.join(',\n')}\n${indent}}`;
}

/** Where `"config": {…}` sits in the file: from its opening brace to the matching closing one (strings skipped). */
function configSpan(text: string): [number, number] {
  const marker = '\n    "config": ';
  const start = text.indexOf(marker);
  if (start < 0) throw new Error(`${VALUES_SCHEMA}: no top-level properties.config`);
  const open = start + marker.length;
  let depth = 0;
  let inString = false;
  for (let i = open; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{') depth++;
    else if (c === '}' && --depth === 0) return [open, i + 1];
  }
  throw new Error(`${VALUES_SCHEMA}: properties.config is not closed`);
}

/** The whole file, with `properties.config` generated and everything else as it is. */
export function renderValuesSchema(current = readFileSync(VALUES_SCHEMA, 'utf8')): string {
  const [from, to] = configSpan(current);
  return `${current.slice(0, from)}${render(chartConfigSchema(), '    ')}${current.slice(to)}`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const current = readFileSync(VALUES_SCHEMA, 'utf8');
  const text = renderValuesSchema(current);
  JSON.parse(text);
  if (process.argv.includes('--check')) {
    if (current !== text) {
      process.stderr.write(`${VALUES_SCHEMA} is out of date: run node scripts/values-schema.ts\n`);
      process.exit(1);
    }
  } else {
    writeFileSync(VALUES_SCHEMA, text);
    process.stderr.write(`wrote ${VALUES_SCHEMA}\n`);
  }
}
