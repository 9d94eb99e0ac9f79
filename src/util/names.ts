/**
 * Kubernetes' DNS-1123 label (lower-case letters, digits and '-' inside, as namespaces, container and volume names
 * are): one spelling, as a RegExp for the code and as a pattern source for the configuration's schema
 * (config/schema-kinds.ts). The length bound (63) is the caller's: some names are checked with it, some are not.
 */
const LABEL = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';

export const DNS_LABEL_PATTERN = `^${LABEL}$`;
export const DNS_LABEL = new RegExp(DNS_LABEL_PATTERN);
/** namespace/name of a NetworkAttachmentDefinition, each a DNS-1123 label (Multus' parsePodNetworkObjectName). */
export const NETWORK_NAME_PATTERN = `^${LABEL}/${LABEL}$`;
export const NETWORK_NAME = new RegExp(NETWORK_NAME_PATTERN);
