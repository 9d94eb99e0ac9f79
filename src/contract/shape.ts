/**
 * The one language meshgate declares the shape of JSON in (issue 35): the pod it reads (contract/pod.ts) and its
 * configuration (config/schema.ts). A declaration is a JSON Schema node built by the functions below, so the shape is
 * written once and everything else comes from it: the TypeScript type of the values that pass (`Infer`), the pod's
 * parser (src/pod/parse.ts), the configuration's loader (config/load.ts, config/constraints.ts) and the chart's
 * values.schema.json (the configuration's node written out by scripts/values-schema.ts, which helm checks). Plain
 * data, no library: the daemons load no schema library (their memory, issue 22), and the contract floor imports
 * nothing.
 *
 * The walkers read the same keywords with the same meaning: `type`, `items`, `properties` with `required`, `enum`,
 * `additionalProperties` (false: another key is an error; a node: the kind of every value) and the value constraints
 * (`minimum`, `pattern`, `maxItems`, …, with `errorMessage` saying what a value that breaks one is). The pod parser
 * refuses a declaration with a keyword it does not check; the configuration's loader checks its sections' keys, kinds
 * and enums and every value constraint, and leaves the inside of a free-form object (a Kubernetes object copied into
 * the proxy) to helm and config/semantics.ts, as it always has.
 *
 * A mapping lists the fields meshgate reads, each required or `optional`, in the order they are checked. `open`
 * mappings keep every other field (typed unknown: an admission patch must not lose them); `mapping`'s type has only
 * the fields it lists, though other fields pass unread; a `section` refuses every other key (the configuration's).
 */

/** The TypeScript type a node stands for: a type only, nothing of it exists at run time. */
declare const VALUES: unique symbol;

/** A JSON Schema node, as the walkers read it. */
export interface SchemaNode {
  readonly type?: string | readonly string[];
  readonly items?: SchemaNode;
  readonly enum?: readonly unknown[];
  readonly properties?: Readonly<Record<string, SchemaNode>>;
  readonly required?: readonly string[];
  readonly additionalProperties?: unknown;
  readonly [keyword: string]: unknown;
}

/** A node whose passing values have the TypeScript type T. */
export interface Schema<T> extends SchemaNode {
  readonly [VALUES]?: T;
}

/** The TypeScript type of values that pass a declaration's checks. */
export type Infer<S> = S extends Schema<infer T> ? T : never;

/** What an operator reads (`description`), and what a value that breaks the node's constraint is (`errorMessage`). */
export interface Described {
  readonly description?: string;
  readonly errorMessage?: string;
}
export interface StringKeywords extends Described {
  readonly pattern?: string;
  readonly minLength?: number;
  readonly maxLength?: number;
}
export interface NumberKeywords extends Described {
  readonly minimum?: number;
  readonly maximum?: number;
  readonly exclusiveMinimum?: number;
  readonly exclusiveMaximum?: number;
}
export interface ListKeywords extends Described {
  readonly minItems?: number;
  readonly maxItems?: number;
  readonly uniqueItems?: boolean;
}
export interface MappingKeywords extends Described {
  /** What a value of the wrong kind should have been, in the pod parser's messages; default "a mapping". */
  readonly what?: string;
}

export const string = (o?: StringKeywords): Schema<string> & { readonly type: 'string' } => ({ ...o, type: 'string' });
/** A string that must not be empty. */
export const nonEmptyString = (o?: Described) => string({ minLength: 1, ...o });
export const boolean = (o?: Described): Schema<boolean> & { readonly type: 'boolean' } => ({ ...o, type: 'boolean' });
export const integer = (o?: NumberKeywords): Schema<number> & { readonly type: 'integer' } => ({
  ...o,
  type: 'integer',
});
export const number = (o?: NumberKeywords): Schema<number> & { readonly type: 'number' } => ({ ...o, type: 'number' });
/** labels and annotations: every value a string. */
export const stringMap = (o?: Described): Schema<Record<string, string>> => ({
  type: 'object',
  additionalProperties: { type: 'string' },
  ...o,
});
/** A mapping of any keys and values (a Kubernetes object meshgate copies as it is). */
export const record = (o?: Described): Schema<Record<string, unknown>> => ({
  ...o,
  type: 'object',
  patternProperties: { '^(.*)$': {} },
});
export const list = <I extends SchemaNode>(
  items: I,
  o?: ListKeywords,
): Schema<Infer<I>[]> & { readonly type: 'array'; readonly items: I } => ({ ...o, type: 'array', items });
/**
 * A node the walkers check by its keywords only, whose values the declaration says are T: for a shape JSON Schema
 * writes loosely (a free-form object with a required key) or that is another module's to check.
 */
export const typed = <T>(node: SchemaNode): Schema<T> => node;

export interface Optional<S extends SchemaNode = SchemaNode> {
  readonly optional: S;
}
type Field = SchemaNode | Optional;
export const optional = <S extends SchemaNode>(node: S): Optional<S> => ({ optional: node });

type Flat<T> = { -readonly [K in keyof T]: T[K] };
type FieldsOf<F> = Flat<
  { [K in keyof F as F[K] extends Optional ? never : K]: Infer<F[K]> } & {
    [K in keyof F as F[K] extends Optional ? K : never]?: F[K] extends Optional<infer S> ? Infer<S> : never;
  }
>;
/** The node of each field, as `properties` holds it. */
type Nodes<F> = { readonly [K in keyof F]: F[K] extends Optional<infer S> ? S : F[K] };
type MappingNode<F, T> = Schema<T> & { readonly type: 'object'; readonly properties: Nodes<F> };

/**
 * As JSON Schema writes a mapping: `required` lists the fields not `optional` (omitted when none is), `properties`
 * every field's node, in the order given.
 */
function mappingNode(fields: Readonly<Record<string, Field>>, before: object): SchemaNode {
  const properties: Record<string, SchemaNode> = {};
  const required: string[] = [];
  for (const [key, f] of Object.entries(fields)) {
    if (isOptional(f)) properties[key] = f.optional;
    else {
      properties[key] = f;
      required.push(key);
    }
  }
  return { ...before, type: 'object', ...(required.length > 0 ? { required } : {}), properties };
}
const isOptional = (f: Field): f is Optional => Object.hasOwn(f, 'optional');

/** A mapping that keeps the fields it does not list, typed unknown. */
export const open = <const F extends Record<string, Field>>(
  fields: F,
  o?: MappingKeywords,
): MappingNode<F, FieldsOf<F> & { [key: string]: unknown }> => mappingNode(fields, { ...o }) as never;
/** A mapping whose type has only the fields it lists; other fields pass unread. */
export const mapping = <const F extends Record<string, Field>>(
  fields: F,
  o?: MappingKeywords,
): MappingNode<F, FieldsOf<F>> => mappingNode(fields, { ...o }) as never;
/** A closed mapping: a key it does not list is an error (`additionalProperties: false`). */
export const section = <const F extends Record<string, Field>>(
  fields: F,
  o?: Described,
): MappingNode<F, FieldsOf<F>> & { readonly additionalProperties: false } =>
  mappingNode(fields, { ...o, additionalProperties: false }) as never;
