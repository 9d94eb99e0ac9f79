/**
 * The kinds of value meshgate's configuration is built of (config/schema.ts), in the shape language
 * (contract/shape.ts), written so that their JSON Schema reads as the chart's did: enums as `enum`, nullable values
 * as `type: [kind, "null"]`, sections closed. config/load.ts reads type, enum, items, properties and
 * additionalProperties; config/constraints.ts the value constraints.
 */
import {
  type Described,
  type Infer,
  list,
  nonEmptyString,
  type Schema,
  type SchemaNode,
  string,
  integer,
  typed,
} from '../contract/shape.ts';
import { DNS_LABEL_PATTERN, NETWORK_NAME_PATTERN } from '../util/names.ts';

/**
 * Patterns with what a value that breaks them is, for the loader's message (config/constraints.ts reads
 * `errorMessage`, the keyword ajv-errors reads; helm ignores it).
 */
export const namespaceName = (options: Described = {}) =>
  string({ pattern: DNS_LABEL_PATTERN, maxLength: 63, errorMessage: 'is not a namespace name', ...options });
export const secretName = (options: Described = {}) =>
  string({
    pattern: '^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$',
    maxLength: 253,
    errorMessage: 'is not a Secret name',
    ...options,
  });
/** `namespace/name`, each a DNS-1123 label as Multus requires of network names (parsePodNetworkObjectName). */
export const networkName = () =>
  string({
    pattern: NETWORK_NAME_PATTERN,
    errorMessage:
      'is not namespace/name of a NetworkAttachmentDefinition ' +
      "(lower-case DNS labels; the namespace is required: a name alone resolves in each pod's own namespace, " +
      'where its admins could define it to run anything)',
  });

/** A string from a closed list, as JSON Schema's `enum`. */
export function stringEnum<const T extends readonly string[]>(values: T, options: Described = {}) {
  return typed<T[number]>({ type: 'string', enum: [...values], ...options });
}

/** `schema` or null, as one `type: [kind, "null"]`, which the chart's docs and the loader read as one kind. */
export function nullable<T extends SchemaNode>(schema: T, options: Described = {}): Schema<Infer<T> | null> {
  const { type, ...rest } = schema;
  return { ...options, type: [type as string, 'null'], ...rest };
}

export const stringList = (options: Described = {}) => list(string(), options);
export const nonEmptyStringList = (options: Described = {}) => list(nonEmptyString(), { minItems: 1, ...options });
export const containerName = (description: string) =>
  string({
    pattern: DNS_LABEL_PATTERN,
    maxLength: 63,
    errorMessage: 'is not a valid container name',
    description,
  });
/** namespace/name of a ServiceAccount, each a DNS-1123 label (the username is system:serviceaccount:NS:NAME). */
export const serviceAccountName = (description: string) =>
  string({
    pattern: NETWORK_NAME_PATTERN,
    errorMessage: 'is not namespace/name of a ServiceAccount (lower-case DNS labels)',
    description,
  });
/** 0 is root: the proxy and validator must never run as root. */
export const nonRootId = (description: string) =>
  integer({ minimum: 1, maximum: 2147483647, errorMessage: 'is not a non-root ID', description });
export const portNumber = (description: string) =>
  integer({ minimum: 1, maximum: 65535, errorMessage: 'is not a port (1-65535)', description });
export const imageReference = (description: string) =>
  string({ minLength: 1, errorMessage: 'is not set; set the image this mesh really runs', description });

export {
  APP_PRIVILEGES,
  ENFORCEMENT_LEVELS,
  NATIVE_SIDECAR_MODES,
  ON_UNVERIFIED_NODE,
  REDIRECT_MODES,
} from './enums.ts';
