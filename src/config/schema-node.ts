/** The parts of a JSON Schema node the loader reads (config/schema.ts declares them; schema.generated.ts holds them). */
export interface SchemaNode {
  type?: string | readonly string[];
  items?: SchemaNode;
  enum?: readonly unknown[];
  properties?: Readonly<Record<string, SchemaNode>>;
  additionalProperties?: unknown;
  [keyword: string]: unknown;
}
