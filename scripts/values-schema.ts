#!/usr/bin/env node
/**
 * Writes `properties.config` of charts/meshgate/values.schema.json from meshgate's one declaration of its
 * configuration (src/config/schema.ts), so helm accepts the keys and kinds meshgate's loader accepts. The chart's
 * `config` is an override merged onto the mesh profile's defaults, so no key is required there, and `mesh` and
 * `meshNamespace` are the chart's own values. The top-level `allOf` (which config keys each mesh profile takes) is
 * generated too, from the loader's NOT_USED table (src/config/profile-keys.ts). The rest of the file, the chart's
 * other values, stays hand-written.
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
import { NOT_USED } from '../src/config/profile-keys.ts';
import { MeshgateConfigSchema } from '../src/config/schema.ts';
import { MESH_NAMES, type MeshName } from '../src/mesh/types.ts';

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
  // A copy: the declaration is plain JSON (test/chart/values-schema.test.ts), and shared with the loader.
  const { properties, ...rest } = structuredClone(MeshgateConfigSchema) as JsonObject;
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

/** Where `marker` opens a value in the file: from its opening bracket to the matching one (strings skipped). */
function spanOf(text: string, marker: string): [number, number] {
  const start = text.indexOf(marker);
  if (start < 0) throw new Error(`${VALUES_SCHEMA}: no ${marker.trim()}`);
  const open = start + marker.length;
  let depth = 0;
  let inString = false;
  for (let i = open; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{' || c === '[') depth++;
    else if ((c === '}' || c === ']') && --depth === 0) return [open, i + 1];
  }
  throw new Error(`${VALUES_SCHEMA}: ${marker.trim()} is not closed`);
}

/**
 * What mesh `mesh` takes of the section `schema` at `path`: its keys less the ones NOT_USED names for the mesh, closed
 * (additionalProperties false) where it drops one; undefined where the mesh takes the section whole.
 */
function closure(schema: Json, path: string, mesh: MeshName): JsonObject | undefined {
  if (!isObject(schema) || schema.additionalProperties !== false || !isObject(schema.properties)) return undefined;
  const keyPath = (key: string) => (path ? `${path}.${key}` : key);
  const keys = Object.keys(schema.properties);
  const dropped = keys.filter((k) => NOT_USED[keyPath(k)]?.[mesh]);
  const taken: JsonObject = {};
  for (const key of keys.filter((k) => !dropped.includes(k))) {
    const inner = closure(schema.properties[key], keyPath(key), mesh);
    if (inner || dropped.length > 0) taken[key] = inner ?? true;
  }
  if (dropped.length === 0) return Object.keys(taken).length === 0 ? undefined : { properties: taken };
  const why = [...new Set(dropped.map((k) => NOT_USED[keyPath(k)][mesh]))].join('; ');
  return {
    description: `${dropped.map(keyPath).join(', ')}: not used with mesh ${mesh}: ${why}`,
    properties: taken,
    additionalProperties: false,
  };
}

/** JSON Schema's if/then: with mesh `mesh`, config must also be `config`. */
function forMesh(mesh: MeshName, config: JsonObject): JsonObject {
  return {
    if: { required: ['mesh'], properties: { mesh: { const: mesh } } },
    // biome-ignore lint/suspicious/noThenProperty: JSON Schema's keyword, written to a file, never awaited
    then: { properties: { config } },
  };
}

/** The chart's top-level `allOf`: each mesh's closure of config, and what the chart requires of custom. */
export function chartMeshRules(): Json[] {
  const config = chartConfigSchema();
  const rules: Json[] = [];
  for (const mesh of MESH_NAMES) {
    const taken = closure(config, '', mesh);
    if (taken) rules.push(forMesh(mesh, taken));
  }
  // meshgate refuses to start without them (config/semantics.ts); helm says so before the install.
  rules.push(
    forMesh('custom', {
      description:
        'mesh custom: meshgate injects from its own templates, so their images and the CNI plugin are required',
      required: ['proxy', 'init', 'cni'],
      properties: { cni: { required: ['pluginType'] }, proxy: { required: ['image'] }, init: { required: ['image'] } },
    }),
  );
  return rules;
}

/** On one line when it fits in 120 columns after `indent` and `prefix`, else opened up. */
function renderFit(value: Json, indent: string, prefix = 0): string {
  const flat = JSON.stringify(value, null, 1)
    .replace(/\n\s*/g, ' ')
    .replace(/([[{]) /g, '$1')
    .replace(/ ([\]}])/g, '$1');
  if (!isObject(value) && !Array.isArray(value)) return flat;
  if (indent.length + prefix + flat.length <= 120) return flat;
  const inner = `${indent}  `;
  if (Array.isArray(value)) return `[\n${value.map((v) => `${inner}${renderFit(v, inner)}`).join(',\n')}\n${indent}]`;
  const lines = Object.entries(value).map(
    ([k, v]) => `${inner}${JSON.stringify(k)}: ${renderFit(v, inner, JSON.stringify(k).length + 2)}`,
  );
  return `{\n${lines.join(',\n')}\n${indent}}`;
}

/** The whole file, with `properties.config` and the top-level `allOf` generated and everything else as it is. */
export function renderValuesSchema(current = readFileSync(VALUES_SCHEMA, 'utf8')): string {
  const [from, to] = spanOf(current, '\n    "config": ');
  const withConfig = `${current.slice(0, from)}${render(chartConfigSchema(), '    ')}${current.slice(to)}`;
  const [allFrom, allTo] = spanOf(withConfig, '\n  "allOf": ');
  return `${withConfig.slice(0, allFrom)}${renderFit(chartMeshRules(), '  ')}${withConfig.slice(allTo)}`;
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
  } else if (current !== text) {
    writeFileSync(VALUES_SCHEMA, text);
    process.stderr.write(`wrote ${VALUES_SCHEMA}\n`);
  }
}
