/**
 * Every skip, mode choice and denial has a stable code mapped to one readable sentence, reused in admission
 * messages, logs, events, metrics labels and `meshgate explain`. Codes never change once shipped. The codes, their
 * sentences, fixes, emitters and surfaces are declared once, in the catalogue (src/contract/codes/); this is the
 * pod family's sentence lookup and the unions the rest of the tree types its reasons with.
 */
import { POD_CODES, type SERVER_CODES } from './codes/index.ts';
import { meaningsOf } from './codes/entry.ts';

/** Each pod code's sentence. */
export const REASONS = meaningsOf(POD_CODES);

export type ReasonCode = keyof typeof POD_CODES;

/**
 * Reasons of the server itself, not of a pod's decision: a handler that threw, an answer over the size cap, a body
 * that is not an AdmissionReview. With ReasonCode, every value the `reason` label of
 * meshgate_admission_decisions_total can take: a closed set, so its series stay bounded by the type.
 */
export type ServerReason = keyof typeof SERVER_CODES;
export type VerdictReason = ReasonCode | ServerReason;

export type {
  CniReasonCode,
  EventReason,
  FailureCode,
  FindingCode,
  HoldReason,
  NodeReason,
  ReportWhy,
  UntrustedWhy,
  ValidatorReason,
} from './codes/index.ts';

export function reasonText(code: ReasonCode): string {
  return REASONS[code];
}
