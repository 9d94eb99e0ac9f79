/**
 * The kinds of value meshgate's configuration is built of (config/schema.ts), as TypeBox schemas written so that
 * their JSON Schema reads as the chart's did: enums as `enum`, nullable values as `type: [kind, "null"]`, sections
 * closed. config/load.ts reads exactly these keywords (type, enum, items, properties, additionalProperties).
 */
import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { DNS_LABEL_PATTERN, NETWORK_NAME_PATTERN } from '../util/names.ts';

export interface Described {
  description?: string;
  /** What a value that breaks the node's constraint is, for the loader's message (config/constraints.ts). */
  errorMessage?: string;
}

/**
 * Patterns with what a value that breaks them is, for the loader's message (config/constraints.ts reads
 * `errorMessage`, the keyword ajv-errors reads; helm ignores it).
 */
export const NamespaceName = (options: Described = {}) =>
  Type.String({ pattern: DNS_LABEL_PATTERN, maxLength: 63, errorMessage: 'is not a namespace name', ...options });
export const SecretName = (options: Described = {}) =>
  Type.String({
    pattern: '^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$',
    maxLength: 253,
    errorMessage: 'is not a Secret name',
    ...options,
  });
/** `namespace/name`, each a DNS-1123 label as Multus requires of network names (parsePodNetworkObjectName). */
export const NetworkName = () =>
  Type.String({
    pattern: NETWORK_NAME_PATTERN,
    errorMessage:
      'is not namespace/name of a NetworkAttachmentDefinition ' +
      "(lower-case DNS labels; the namespace is required: a name alone resolves in each pod's own namespace, " +
      'where its admins could define it to run anything)',
  });

/** A string from a closed list, as JSON Schema's `enum` (TypeBox's union of literals would be an `anyOf`). */
export function StringEnum<const T extends readonly string[]>(values: T, options: Described = {}) {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });
}

/** `schema` or null, as one `type: [kind, "null"]`, which the chart's docs and the loader read as one kind. */
export function Nullable<T extends TSchema>(schema: T, options: Described = {}) {
  const { type, ...rest } = JSON.parse(JSON.stringify(schema)) as { type: string };
  return Type.Unsafe<Static<T> | null>({ ...options, type: [type, 'null'], ...rest });
}

/** A closed object: an unknown key under it is an error, in the loader and in helm. */
export function Section<T extends Parameters<typeof Type.Object>[0]>(properties: T, options: Described = {}) {
  return Type.Object(properties, { ...options, additionalProperties: false });
}

export const StringMap = (options: Described = {}) =>
  Type.Unsafe<Record<string, string>>({ type: 'object', additionalProperties: { type: 'string' }, ...options });
export const StringList = (options: Described = {}) => Type.Array(Type.String(), options);
export const NonEmptyStringList = (options: Described = {}) =>
  Type.Array(Type.String({ minLength: 1 }), { minItems: 1, ...options });
export const ContainerName = (description: string) =>
  Type.String({
    pattern: DNS_LABEL_PATTERN,
    maxLength: 63,
    errorMessage: 'is not a valid container name',
    description,
  });
/** namespace/name of a ServiceAccount, each a DNS-1123 label (the username is system:serviceaccount:NS:NAME). */
export const ServiceAccountName = (description: string) =>
  Type.String({
    pattern: NETWORK_NAME_PATTERN,
    errorMessage: 'is not namespace/name of a ServiceAccount (lower-case DNS labels)',
    description,
  });
/** 0 is root: the proxy and validator must never run as root. */
export const NonRootId = (description: string) =>
  Type.Integer({ minimum: 1, maximum: 2147483647, errorMessage: 'is not a non-root ID', description });
export const Port = (description: string) =>
  Type.Integer({ minimum: 1, maximum: 65535, errorMessage: 'is not a port (1-65535)', description });
export const Image = (description: string) =>
  Type.String({ minLength: 1, errorMessage: 'is not set; set the image this mesh really runs', description });

export {
  APP_PRIVILEGES,
  ENFORCEMENT_LEVELS,
  NATIVE_SIDECAR_MODES,
  ON_UNVERIFIED_NODE,
  REDIRECT_MODES,
} from './enums.ts';
