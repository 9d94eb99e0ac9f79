#!/usr/bin/env node
/**
 * Writes docs/values.md, the reference of every chart value, from charts/meshgate/values.schema.json (which keys
 * exist, their types and allowed values, and for config: which mesh profiles take them) and values.yaml (defaults,
 * and the comment above each key where the schema has no description).
 *
 *   node scripts/values-doc.ts          rewrite docs/values.md
 *   node scripts/values-doc.ts --check  exit 1 when docs/values.md is not what this would write
 *
 * test/chart/values-doc.test.ts fails when the committed file is out of date.
 */
import { readFileSync } from 'node:fs';
import { writeOrCheck } from './generated-doc.ts';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isMap, isScalar, parseDocument, type YAMLMap } from 'yaml';
import { PROFILE_DEFAULTS } from '../src/config/defaults.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const CHART = join(root, 'charts', 'meshgate');
export const VALUES_DOC = join(root, 'docs', 'values.md');
const MESHES = ['istio', 'linkerd', 'custom'] as const;

// biome-ignore lint/suspicious/noExplicitAny: JSON Schema nodes are walked generically; test/chart/values-doc.test.ts checks the output
type Schema = Record<string, any>;

interface Row {
  key: string;
  type: string;
  allowed: string;
  default: string;
  description: string;
}

function resolve(node: Schema, root: Schema): Schema {
  if (!node?.$ref) return node ?? {};
  const target = (node.$ref as string)
    .replace('#/', '')
    .split('/')
    .reduce((o: Schema, k: string) => o[k], root);
  // A description next to the $ref is about this use of the definition: it wins.
  return { ...resolve(target, root), ...(node.description ? { description: node.description } : {}) };
}

function typeOf(s: Schema): string {
  if (s.const !== undefined) return typeof s.const;
  if (s.enum) return 'enum';
  const t = s.type;
  if (Array.isArray(t)) return t.join(' or ');
  if (t === 'array' && s.items?.type) return `${s.items.type}[]`;
  return t ?? (s.properties ? 'object' : 'any');
}

function allowed(s: Schema): string {
  const parts: string[] = [];
  if (s.const !== undefined) parts.push(`only \`${JSON.stringify(s.const)}\``);
  if (s.enum) parts.push(s.enum.map((v: unknown) => `\`${String(v)}\``).join(', '));
  if (s.minimum !== undefined && s.maximum !== undefined) parts.push(`${s.minimum}–${s.maximum}`);
  else if (s.minimum !== undefined) parts.push(`≥ ${s.minimum}`);
  else if (s.maximum !== undefined) parts.push(`≤ ${s.maximum}`);
  if (s.exclusiveMinimum !== undefined) parts.push(`> ${s.exclusiveMinimum}`);
  if (s.minLength) parts.push('not empty');
  if (s.minItems) parts.push(`at least ${s.minItems} item${s.minItems > 1 ? 's' : ''}`);
  if (s.maxItems) parts.push(`at most ${s.maxItems} items`);
  if (s.pattern) parts.push(`matches \`${s.pattern}\``);
  return parts.join('; ');
}

/** The values.yaml node at `path`, and the comment written above its key (the last paragraph of it). */
function valuesAt(doc: ReturnType<typeof parseDocument>, path: string[]): { value: unknown; comment: string } {
  let node: unknown = doc.contents;
  let comment = '';
  for (const [i, key] of path.entries()) {
    if (!isMap(node)) return { value: undefined, comment: '' };
    const map = node as YAMLMap;
    const index = map.items.findIndex((p) => isScalar(p.key) && p.key.value === key);
    if (index < 0) return { value: undefined, comment: '' };
    const pair = map.items[index];
    const before =
      (pair.key as { commentBefore?: string }).commentBefore ?? (index === 0 ? map.commentBefore : undefined) ?? '';
    if (i === path.length - 1)
      comment = before
        .split(/\n\s*\n/)
        .at(-1)!
        .split('\n')
        .map((l) => l.trim())
        .join(' ')
        .trim();
    node = pair.value;
  }
  return { value: (node as { toJSON?: () => unknown })?.toJSON?.() ?? (node as { value?: unknown })?.value, comment };
}

function show(v: unknown): string {
  if (v === undefined) return '';
  const text = JSON.stringify(v);
  return `\`${text.length > 60 ? `${text.slice(0, 57)}…` : text}\``.replaceAll('|', '\\|');
}

/** For a key under config: meshgate's own default for each mesh profile (src/config/defaults.ts), one if they agree. */
function configDefault(path: string[]): string {
  const per = MESHES.map(
    (mesh) =>
      [
        mesh,
        path
          .slice(1)
          .reduce<unknown>((o, k) => (o as Record<string, unknown> | undefined)?.[k], PROFILE_DEFAULTS[mesh]),
      ] as const,
  ).filter(([, v]) => v !== undefined);
  if (per.length === 0) return '';
  if (per.every(([, v]) => JSON.stringify(v) === JSON.stringify(per[0][1]))) return show(per[0][1]);
  return per.map(([mesh, v]) => `${mesh}: ${show(v)}`).join('<br>');
}

/** For a key under config: the meshes whose allOf closure lets it through ('' when all do). */
function meshesFor(path: string[], schema: Schema): string {
  if (path[0] !== 'config' || path.length < 2) return '';
  const ok = MESHES.filter((mesh) => {
    let allowedHere = true;
    for (const entry of schema.allOf ?? []) {
      const m = entry.if?.properties?.mesh;
      if (!(m?.const === mesh || m?.enum?.includes(mesh))) continue;
      let node = entry.then?.properties?.config;
      for (const key of path.slice(1)) {
        if (!node) break;
        if (node.additionalProperties === false && node.properties && !(key in node.properties)) allowedHere = false;
        node = node.properties?.[key];
        if (node === true) node = undefined;
      }
    }
    return allowedHere;
  });
  return ok.length === MESHES.length ? '' : `mesh ${ok.join(', ')} only. `;
}

function walk(node: Schema, path: string[], schema: Schema, doc: ReturnType<typeof parseDocument>, rows: Row[]): void {
  const s = resolve(node, schema);
  const { value, comment } = valuesAt(doc, path);
  // This key's own description, then the comment above it in values.yaml, then its definition's (generic) one.
  const description = node?.description ?? (comment || s.description) ?? '';
  const closedObject = s.type === 'object' && s.properties && s.additionalProperties === false;
  if (path.length > 0 && !closedObject) {
    const dflt = path[0] === 'config' ? configDefault(path) : show(value);
    rows.push({
      key: path.join('.'),
      type: typeOf(s),
      allowed: allowed(s),
      default: dflt,
      description: `${meshesFor(path, schema)}${description}`.trim(),
    });
    return;
  }
  if (path.length > 0 && description)
    rows.push({ key: path.join('.'), type: 'object', allowed: '', default: '', description });
  for (const [key, child] of Object.entries(s.properties ?? {}))
    walk(child as Schema, [...path, key], schema, doc, rows);
}

export function renderValuesDoc(): string {
  const schema = JSON.parse(readFileSync(join(CHART, 'values.schema.json'), 'utf8')) as Schema;
  const doc = parseDocument(readFileSync(join(CHART, 'values.yaml'), 'utf8'));
  const rows: Row[] = [];
  walk(schema, [], schema, doc, rows);
  const cell = (t: string) => t.replaceAll('\n', ' ').replaceAll('|', '\\|');
  const table = rows
    .map((r) => `| \`${r.key}\` | ${r.type} | ${cell(r.allowed)} | ${r.default} | ${cell(r.description)} |`)
    .join('\n');
  return `# Chart values

<!-- Generated by \`node scripts/values-doc.ts\` from charts/meshgate/values.schema.json and values.yaml; do not edit.
test/chart/values-doc.test.ts fails when this file is out of date. -->

Every key of \`charts/meshgate\`: its type and allowed values as \`values.schema.json\` checks them (an unknown key or a
value outside them fails \`helm install\`), its default from \`values.yaml\`, and what it does. Keys under \`config\` are
meshgate's own configuration file (src/config), with each mesh profile's defaults from src/config/defaults.ts (the
chart leaves them to meshgate): the schema and meshgate's loader accept the same keys and values,
which \`test/chart/config-agreement.test.ts\` holds them to; checks between keys (for instance the validator's UID
against its probe address) are meshgate's alone and fail at startup with the loader's message.

| Key | Type | Allowed | Default | Description |
|---|---|---|---|---|
${table}
`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  writeOrCheck(VALUES_DOC, renderValuesDoc(), 'scripts/values-doc.ts');
}
