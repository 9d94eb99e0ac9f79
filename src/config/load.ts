/**
 * Reads and validates meshgate's configuration once, at startup. `mesh` is required and picks the profile whose
 * defaults (config/defaults.ts) the file is merged onto: objects merge key by key, arrays and scalars replace.
 * Which keys exist and the kind of each value come from the one declaration (config/schema.ts); which keys a profile
 * does not use, and which were removed, are the tables below (messages, not shape). Unknown keys, keys the profile
 * does not use, wrong types and out-of-range values are errors naming the key path, so a typo never becomes a
 * silent default.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { PROFILE_DEFAULTS } from './defaults.ts';
import { MeshgateConfigSchema } from './schema.ts';
import { NOT_USED, REMOVED } from './profile-keys.ts';
import type { MeshgateConfig } from './types.ts';
import { checkSemantics } from './semantics.ts';
import { constraintProblems } from './constraints.ts';
import { deepFreeze } from '../util/json.ts';
import type { DeepReadonly } from '../util/readonly.ts';
import { MESH_NAMES, type MeshName } from '../mesh/types.ts';

export class ConfigError extends Error {
  readonly problems: string[];
  constructor(source: string, problems: string[]) {
    super(`invalid configuration in ${source}:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.problems = problems;
  }
}

import type { SchemaNode } from '../contract/shape.ts';

function kind(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}

/**
 * The kinds a schema node admits, as kind() names them (JSON Schema's integer is a number here; constraints.ts says
 * when it must be whole).
 */
function kindsOf(schema: SchemaNode): string[] {
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  return types.map((t) => (t === 'integer' ? 'number' : String(t)));
}

/**
 * A section of meshgate's own: its keys are the schema's, and each value is checked in turn. The others (label maps,
 * Kubernetes objects copied into the proxy) are free-form here: only their outer kind is checked.
 */
function isSection(schema: SchemaNode): schema is SchemaNode & { properties: Record<string, SchemaNode> } {
  return schema.additionalProperties === false && schema.properties !== undefined;
}

/** The keys of `schema` that mesh `mesh` takes: the schema's, less the ones its profile does not use. */
function knownKeys(schema: SchemaNode & { properties: Record<string, SchemaNode> }, path: string, mesh: MeshName) {
  return Object.keys(schema.properties).filter((k) => !NOT_USED[path ? `${path}.${k}` : k]?.[mesh]);
}

/**
 * Merges `override` onto the profile's `base` where the schema lets it, recording what is wrong in `problems`:
 * objects merge key by key, arrays and scalars replace.
 */
function merge(
  schema: SchemaNode,
  base: unknown,
  override: unknown,
  path: string,
  problems: string[],
  mesh: MeshName,
): unknown {
  if (override === undefined) return base;
  const kinds = kindsOf(schema);
  const got = kind(override);
  if (!kinds.includes(got)) {
    problems.push(`${path}: expected ${kinds[0]}, got ${got} (${JSON.stringify(override)})`);
    return base;
  }
  if (schema.enum && !schema.enum.includes(override)) {
    problems.push(`${path}: ${JSON.stringify(override)} is not one of ${schema.enum.join(', ')}`);
    return base;
  }
  if (got === 'array') {
    const items = schema.items;
    if (items && !kindsOf(items).includes('object')) {
      const list = override as unknown[];
      const bad = list.findIndex((x) => !kindsOf(items).includes(kind(x)));
      if (bad >= 0) problems.push(`${path}[${bad}]: expected ${kindsOf(items)[0]}, got ${kind(list[bad])}`);
    }
    return override;
  }
  if (got !== 'object' || !isSection(schema)) return override;
  const known = knownKeys(schema, path, mesh);
  const out: Record<string, unknown> = { ...((base ?? {}) as Record<string, unknown>) };
  for (const [key, value] of Object.entries(override as Record<string, unknown>)) {
    const sub = path ? `${path}.${key}` : key;
    if (!known.includes(key)) {
      const why = REMOVED[sub] ?? (NOT_USED[sub]?.[mesh] && `not used with mesh ${mesh}: ${NOT_USED[sub][mesh]}`);
      problems.push(why ? `${sub}: ${why}` : `${sub}: unknown key (known: ${known.join(', ')})`);
      continue;
    }
    out[key] = merge(schema.properties[key], out[key], value, sub, problems, mesh);
  }
  return out;
}

/** Builds a validated, frozen config from an already-parsed object (a config file's contents). */
export function buildConfig(raw: unknown, source = 'config'): DeepReadonly<MeshgateConfig> {
  if (raw === undefined || raw === null || kind(raw) !== 'object') {
    throw new ConfigError(source, [
      raw === undefined || raw === null
        ? `mesh: required: one of ${MESH_NAMES.join(', ')} (which mesh meshgate guards)`
        : `top level: expected a mapping, got ${kind(raw)}`,
    ]);
  }
  const { mesh, ...rest } = raw as Record<string, unknown>;
  if (typeof mesh !== 'string' || !(MESH_NAMES as readonly string[]).includes(mesh)) {
    const got = mesh === undefined ? 'it is missing' : `got ${JSON.stringify(mesh)}`;
    throw new ConfigError(source, [
      `mesh: required: one of ${MESH_NAMES.join(', ')} (which mesh meshgate guards); ${got}`,
    ]);
  }
  const problems: string[] = [];
  const merged = merge(
    MeshgateConfigSchema,
    structuredClone(PROFILE_DEFAULTS[mesh as MeshName]),
    rest,
    '',
    problems,
    mesh as MeshName,
  ) as MeshgateConfig;
  if (problems.length === 0) constraintProblems(MeshgateConfigSchema, merged, '', problems);
  if (problems.length === 0) problems.push(...checkSemantics(merged));
  if (problems.length > 0) throw new ConfigError(source, problems);
  return deepFreeze(merged);
}

/**
 * JSON when the text is JSON (the chart writes the config so: JSON is YAML), else YAML. The YAML parser is loaded
 * only for the latter: it is ~1.4 MiB of the node agent's RSS on every node (`npm run bench -- --footprint`).
 */
function parseConfigText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    const yaml = createRequire(import.meta.url)('yaml') as typeof import('yaml');
    return yaml.parse(text);
  }
}

/** Reads a YAML or JSON config file. */
export function loadConfig(file: string): DeepReadonly<MeshgateConfig> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(file, [`cannot read: ${(err as Error).message}`]);
  }
  let raw: unknown;
  try {
    raw = parseConfigText(text);
  } catch (err) {
    throw new ConfigError(file, [`not valid YAML: ${(err as Error).message.split('\n')[0]}`]);
  }
  return buildConfig(raw, file);
}

/** The CLI's `--config FILE` or `--mesh NAME` (a config of just that profile's defaults); one of them is required. */
export function configFromFlags(flags: { config?: string; mesh?: string }): DeepReadonly<MeshgateConfig> {
  if (flags.config && flags.mesh)
    throw new ConfigError('flags', ['--config and --mesh go alone: set mesh in the file']);
  if (flags.config) return loadConfig(flags.config);
  return buildConfig(
    flags.mesh === undefined ? undefined : { mesh: flags.mesh },
    flags.mesh === undefined ? 'flags (no --config or --mesh)' : '--mesh',
  );
}
