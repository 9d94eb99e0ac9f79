/**
 * The codes of findings only `meshgate check` makes (the `[code]` of an item in its report and its JSON): about the
 * webhook's serving certificate as the apiserver would see it, and a node running another mesh's CNI plugin. Its
 * checks themselves (node_verified, serving_cert_trusted, …) are src/check/report.ts's CHECKS, each with what it
 * verifies and its hint; nodes' and pods' items carry the node and pod codes.
 */
import type { Codes, Surface } from './entry.ts';

const ITEM = ['check-report'] as const satisfies readonly Surface[];

export const FINDING_CODES = {
  ca_mismatch: {
    meaning:
      "the serving certificate a webhook endpoint presents is not issued by any CA in the webhook's caBundle: the " +
      'apiserver refuses the TLS handshake',
    emitters: ['check'],
    shows: ITEM,
  },
  host_mismatch: {
    meaning: 'the serving certificate is not valid for the host name the apiserver dials',
    emitters: ['check'],
    shows: ITEM,
  },
  other_mesh_plugin: {
    meaning:
      "the node's CNI chain runs another mesh's plugin and not the one meshgate is configured for: is meshgate " +
      'configured for the right mesh?',
    emitters: ['check'],
    shows: ITEM,
  },
} as const satisfies Codes;

/** A finding only `meshgate check` makes. */
export type FindingCode = keyof typeof FINDING_CODES;
