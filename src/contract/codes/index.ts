/**
 * The catalogue of every stable code meshgate emits, by family (issue 35 "One catalogue of codes"): each code once,
 * as a ReasonEntry (./entry.ts). Everything else is derived from it: the code unions (`keyof`), the sentence and fix
 * lookups (src/contract/reasons.ts REASONS, src/policy/mutate/advice.ts, src/cni/reasons.ts, src/facts/judge-node.ts,
 * src/validator/reasons.ts) and docs/reasons.md (scripts/reasons-doc.ts). test/contract/codes.test.ts holds the
 * catalogue to the code: every code emitted somewhere is here, and every code here is emitted by each component it
 * names.
 */
import type { Codes } from './entry.ts';
import { FINDING_CODES } from './check.ts';
import { CNI_CODES } from './cni.ts';
import { EVENT_CODES } from './events.ts';
import { ADMITTED_CODES } from './pod-admitted.ts';
import { AMBIENT_NODE_CODES } from './pod-ambient.ts';
import { REFUSED_CODES } from './pod-refused.ts';
import { VALIDATED_CODES } from './pod-validated.ts';
import { HOLD_CODES, RECORD_CODES, UNMESHED_CODES, UNTRUSTED_CODES } from './repair.ts';
import { FAILURE_CODES, VALIDATOR_CODES } from './validator.ts';
import { NODE_CODES, SERVER_CODES } from './webhook.ts';

/**
 * Every decision on a pod or a request about one (skips, redirect modes, refusals, the validating webhook's and the
 * node side's): the ReasonCode of admission verdicts, split over four files by kind.
 */
export const POD_CODES = {
  ...ADMITTED_CODES,
  ...REFUSED_CODES,
  ...VALIDATED_CODES,
  ...AMBIENT_NODE_CODES,
} as const satisfies Codes;

export interface CodeFamily {
  /** Its section's heading in docs/reasons.md. */
  readonly title: string;
  /** What the family's codes are and the union type that names them, one sentence for the docs. */
  readonly about: string;
  readonly codes: Codes;
}

/** The families, in the order docs/reasons.md lists them. */
export const CATALOGUE = {
  pod: {
    title: 'Pod decisions',
    about:
      "The webhooks' decision on a pod or a request about one (`ReasonCode`): the `[code]` of an admission message, " +
      'the `reason` of meshgate_admission_decisions_total and the audit annotation `meshgate.io/reason`.',
    codes: POD_CODES,
  },
  server: {
    title: 'Webhook requests',
    about: "A request the webhook could not judge (`ServerReason`): with the pod codes, the decisions' `reason` label.",
    codes: SERVER_CODES,
  },
  cni: {
    title: 'Node CNI chain',
    about:
      "The node agent's verdict on its node's CNI chain (`CniReasonCode`): the MeshCNIVerified condition's reason.",
    codes: CNI_CODES,
  },
  node: {
    title: 'Node trust',
    about:
      "Why the webhook's node facts do not trust a node, besides the node agent's own codes (`NodeReason`); `check` " +
      'reports two of them itself.',
    codes: NODE_CODES,
  },
  validator: {
    title: 'Redirect validation',
    about: "Why meshgate's validation container failed (`ValidatorReason`): its termination message's `reason`.",
    codes: VALIDATOR_CODES,
  },
  failure: {
    title: 'Failed validators (repair)',
    about:
      "How the repair controller names a failed validator that is not meshgate's or that it cannot read " +
      '(`FailureReason`, with the validator codes).',
    codes: FAILURE_CODES,
  },
  event: {
    title: 'Kubernetes Events',
    about: 'The reason of each Event meshgate writes (`EventReason`).',
    codes: EVENT_CODES,
  },
  untrusted: {
    title: 'Untrusted failed validators',
    about: "Why the repair controller leaves a failed validator alone (`UntrustedWhy`): the untrusted count's `why`.",
    codes: UNTRUSTED_CODES,
  },
  hold: {
    title: 'Withdrawn node holds',
    about: "What holds a node whose verification the repair controller withdrew (`HoldReason`): the mark's `hold`.",
    codes: HOLD_CODES,
  },
  unmeshed: {
    title: 'Unmeshed pods reported',
    about: 'Why the repair controller reports an unmeshed pod rather than evicting it (`ReportWhy`).',
    codes: UNMESHED_CODES,
  },
  record: {
    title: 'Would-deny records',
    about: "A pod's would-deny record that meshgate did not write, as its readers name it.",
    codes: RECORD_CODES,
  },
  finding: {
    title: 'Check findings',
    about: 'Findings only `meshgate check` makes (`FindingCode`), besides the node and pod codes its items carry.',
    codes: FINDING_CODES,
  },
} as const satisfies Record<string, CodeFamily>;

export type FamilyName = keyof typeof CATALOGUE;

export {
  CNI_CODES,
  EVENT_CODES,
  FAILURE_CODES,
  FINDING_CODES,
  HOLD_CODES,
  NODE_CODES,
  RECORD_CODES,
  SERVER_CODES,
  UNMESHED_CODES,
  UNTRUSTED_CODES,
  VALIDATOR_CODES,
};
export type { CniReasonCode } from './cni.ts';
export type { EventReason } from './events.ts';
export type { FindingCode } from './check.ts';
export type { HoldReason, ReportWhy, UntrustedWhy } from './repair.ts';
export type { FailureCode, ValidatorReason } from './validator.ts';
export type { NodeReason } from './webhook.ts';
