/**
 * The value constraints of meshgate's configuration, read from its one declaration (config/schema.ts, in the shape
 * language of contract/shape.ts): whole numbers, ranges, lengths, patterns, list sizes, duplicates. The chart's
 * values.schema.json is generated from the same declaration, so helm and meshgate refuse the same values, and no
 * range or pattern is written a second time. A schema node may say what its constraint means (`errorMessage`, the
 * keyword ajv-errors reads): "is not a namespace name" says more than the regular expression.
 *
 * The walk runs on the merged config (the profile's defaults too) after config/load.ts checked keys, kinds and enums;
 * what must hold between keys is config/semantics.ts's.
 */
import type { SchemaNode } from '../contract/shape.ts';

const num = (node: SchemaNode, keyword: string): number | undefined =>
  typeof node[keyword] === 'number' ? node[keyword] : undefined;
/** What the node says a value that breaks it is (`errorMessage`), if it says. */
const says = (node: SchemaNode): string | undefined =>
  typeof node.errorMessage === 'string' ? node.errorMessage : undefined;

interface Bounds {
  min?: number;
  max?: number;
  xmin?: number;
  xmax?: number;
}

const boundsOf = (node: SchemaNode): Bounds => ({
  min: num(node, 'minimum'),
  max: num(node, 'maximum'),
  xmin: num(node, 'exclusiveMinimum'),
  xmax: num(node, 'exclusiveMaximum'),
});

/** "in 1-65535", "in (0, 300]", ">= 60", or undefined when the node sets no bound. */
function range({ min, max, xmin, xmax }: Bounds): string | undefined {
  if (min === undefined && max === undefined && xmin === undefined && xmax === undefined) return undefined;
  if ((min ?? xmin) === undefined) return xmax !== undefined ? `< ${xmax}` : `<= ${max}`;
  if ((max ?? xmax) === undefined) return xmin !== undefined ? `> ${xmin}` : `>= ${min}`;
  if (min !== undefined && max !== undefined) return `in ${min}-${max}`;
  return `in ${min !== undefined ? `[${min}` : `(${xmin}`}, ${max !== undefined ? `${max}]` : `${xmax})`}`;
}

function numberProblem(node: SchemaNode, v: number): string | undefined {
  const whole = node.type === 'integer' || (Array.isArray(node.type) && node.type.includes('integer'));
  const b = boundsOf(node);
  const { min, max, xmin, xmax } = b;
  const out =
    !Number.isFinite(v) ||
    (min !== undefined && v < min) ||
    (max !== undefined && v > max) ||
    (xmin !== undefined && v <= xmin) ||
    (xmax !== undefined && v >= xmax);
  const fraction = whole && !Number.isInteger(v);
  if (!fraction && !out) return undefined;
  const message = says(node);
  if (message) return `${v} ${message}`;
  const bounds = range(b);
  if (fraction) return `${v} is not a whole number${bounds ? ` ${bounds}` : ''}`;
  return `${v} is not ${bounds ?? 'a finite number'}`;
}

function stringProblem(node: SchemaNode, v: string): string | undefined {
  const minLength = num(node, 'minLength');
  const maxLength = num(node, 'maxLength');
  const message = says(node);
  if (minLength !== undefined && v.length < minLength) {
    if (v === '') return message ?? 'must not be empty';
    return message ? `"${v}" ${message}` : `"${v}" is shorter than ${minLength} characters`;
  }
  const pattern = typeof node.pattern === 'string' ? node.pattern : undefined;
  const tooLong = maxLength !== undefined && v.length > maxLength;
  if ((pattern !== undefined && !new RegExp(pattern, 'u').test(v)) || tooLong) {
    if (message) return `"${v}" ${message}`;
    return tooLong ? `"${v}" is longer than ${maxLength} characters` : `"${v}" does not match ${pattern}`;
  }
  return undefined;
}

function listProblems(node: SchemaNode, v: readonly unknown[], path: string, out: string[]): void {
  const minItems = num(node, 'minItems');
  const maxItems = num(node, 'maxItems');
  if (minItems !== undefined && v.length < minItems) {
    const fallback = minItems === 1 ? 'must not be empty' : `${v.length} items, at least ${minItems}`;
    out.push(`${path}: ${says(node) ?? fallback}`);
  }
  if (maxItems !== undefined && v.length > maxItems) out.push(`${path}: ${v.length} items, at most ${maxItems}`);
  v.forEach((item, i) => {
    if (node.items) constraintProblems(node.items, item, `${path}[${i}]`, out);
    if (node.uniqueItems === true && typeof item !== 'object' && v.indexOf(item) !== i)
      out.push(`${path}[${i}]: ${JSON.stringify(item)} is listed twice`);
  });
}

/**
 * Appends to `out` one sentence per value of `value` that breaks a constraint of `node`, each starting with the
 * value's key path. Kinds are load.ts's: a value of another kind than the node's is skipped here.
 */
export function constraintProblems(node: SchemaNode, value: unknown, path: string, out: string[] = []): string[] {
  const at = (why: string | undefined) => why !== undefined && out.push(`${path}: ${why}`);
  if (typeof value === 'number') at(numberProblem(node, value));
  else if (typeof value === 'string') at(stringProblem(node, value));
  else if (Array.isArray(value)) listProblems(node, value, path, out);
  else if (typeof value === 'object' && value !== null && node.properties)
    for (const [key, sub] of Object.entries(node.properties)) {
      const v = (value as Record<string, unknown>)[key];
      if (v !== undefined) constraintProblems(sub, v, path ? `${path}.${key}` : key, out);
    }
  return out;
}
