/**
 * Reads and validates meshgate's configuration once, at startup. A config file holds any subset of the
 * defaults' keys; objects merge with the defaults key by key, arrays and scalars replace them. Unknown keys,
 * wrong types and out-of-range values are errors naming the key path, so a typo never becomes a silent default.
 */
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { defaultConfig } from './defaults.ts';
import type { MeshgateConfig } from './types.ts';
import { checkSemantics } from './semantics.ts';
import { deepFreeze } from '../util/json.ts';

export class ConfigError extends Error {
  readonly problems: string[];
  constructor(source: string, problems: string[]) {
    super(`invalid configuration in ${source}:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.problems = problems;
  }
}

/** Key paths whose contents are free-form Kubernetes objects: only their outer type is checked here. */
const FREE_FORM = new Set([
  'injection.podOptInNamespaceLabels',
  'proxy.env',
  'proxy.ports',
  'proxy.resources',
  'proxy.volumeMounts',
  'volumes',
]);
const NULLABLE = new Set(['injection.podOptInNamespaceLabels']);

function kind(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}

function merge(base: unknown, override: unknown, path: string, problems: string[]): unknown {
  if (override === undefined) return base;
  if (override === null && NULLABLE.has(path)) return null;
  const want = kind(base) === 'null' && NULLABLE.has(path) ? 'object' : kind(base);
  const got = kind(override);
  if (want !== got) {
    problems.push(`${path}: expected ${want}, got ${got} (${JSON.stringify(override)})`);
    return base;
  }
  if (want !== 'object' || FREE_FORM.has(path)) {
    if (want === 'array' && !FREE_FORM.has(path)) {
      const bad = (override as unknown[]).findIndex((x) => typeof x !== 'string');
      if (bad >= 0) problems.push(`${path}[${bad}]: expected string, got ${kind((override as unknown[])[bad])}`);
    }
    return override;
  }
  const out: Record<string, unknown> = { ...(base as Record<string, unknown>) };
  for (const [key, value] of Object.entries(override as Record<string, unknown>)) {
    const sub = path ? `${path}.${key}` : key;
    if (!(key in out)) {
      problems.push(`${sub}: unknown key (known: ${Object.keys(out).join(', ')})`);
      continue;
    }
    out[key] = merge(out[key], value, sub, problems);
  }
  return out;
}

/** Builds a validated, frozen config from an already-parsed object (a config file's contents). */
export function buildConfig(raw: unknown, source = 'config'): MeshgateConfig {
  const problems: string[] = [];
  if (raw !== undefined && raw !== null && kind(raw) !== 'object') {
    throw new ConfigError(source, [`top level: expected a mapping, got ${kind(raw)}`]);
  }
  const merged = merge(structuredClone(defaultConfig), raw ?? {}, '', problems) as MeshgateConfig;
  problems.push(...checkSemantics(merged));
  if (problems.length > 0) throw new ConfigError(source, problems);
  return deepFreeze(merged);
}

/** Reads a YAML or JSON config file; no file means the embedded defaults. */
export function loadConfig(file?: string): MeshgateConfig {
  if (!file) return buildConfig({}, 'embedded defaults');
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(file, [`cannot read: ${(err as Error).message}`]);
  }
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (err) {
    throw new ConfigError(file, [`not valid YAML: ${(err as Error).message.split('\n')[0]}`]);
  }
  return buildConfig(raw, file);
}
