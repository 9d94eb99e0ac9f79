/**
 * The webhook process's own codes: its transport's (a request it could not judge: the `reason` label of
 * meshgate_admission_decisions_total besides the pod codes), and why its cache of node verdicts (src/facts/) does not
 * trust a node, besides the node agent's own codes (./cni.ts). A node code shows in refusals that name the node, in
 * meshgate_nodes{reason} and in `meshgate check`.
 */
import { CONDITION_TYPE, EVIDENCE_ANNOTATION, QUARANTINE_ANNOTATION, VERIFIED_LABEL } from '../node.ts';
import { ANSWER, type Codes, type Surface } from './entry.ts';

export const SERVER_CODES = {
  internal_error: {
    meaning:
      'a handler failed with an error of its own (a bug): the review is answered as errored, and the apiserver ' +
      "applies the webhook's failurePolicy",
    emitters: ['webhook'],
    shows: ANSWER,
  },
  answer_too_large: {
    meaning:
      "the answer (its patch, messages and warnings) would exceed meshgate's cap on an answer's size: it is replaced " +
      'by an errored review saying so',
    emitters: ['webhook'],
    shows: ANSWER,
  },
  bad_review: {
    meaning: 'the request body is not an AdmissionReview meshgate can read: answered 400, judged nothing',
    emitters: ['webhook'],
    shows: ['metric-label'],
  },
} as const satisfies Codes;

/** Why a node is not trusted: in refusals naming it, meshgate_nodes{reason} and `meshgate check` (node_verified). */
const NODE_FACT = ['admission-message', 'metric-label', 'check-report'] as const satisfies readonly Surface[];

export const NODE_CODES = {
  not_published: {
    meaning: 'the node agent has not published a verdict for this node',
    emitters: ['webhook'],
    shows: NODE_FACT,
  },
  condition_missing: {
    meaning:
      `the node carries label ${VERIFIED_LABEL} but no ${CONDITION_TYPE} condition: ` +
      'a label alone (which others can set) never verifies a node',
    emitters: ['webhook'],
    shows: NODE_FACT,
  },
  label_mismatch: {
    meaning: `label ${VERIFIED_LABEL} contradicts the ${CONDITION_TYPE} condition`,
    emitters: ['webhook'],
    shows: NODE_FACT,
  },
  evidence_missing: {
    meaning: `the verdict has no readable evidence (annotation ${EVIDENCE_ANNOTATION})`,
    emitters: ['webhook'],
    shows: NODE_FACT,
  },
  plugin_mismatch: {
    meaning: 'the node was verified for another mesh CNI plugin than the one meshgate is configured for',
    emitters: ['webhook', 'check'],
    shows: NODE_FACT,
  },
  runtime_changed: {
    meaning:
      "the node was verified for its container runtime's libcni line, and the node now reports a runtime whose line " +
      'differs (upgraded in place?): unverified until the node agent judges it again',
    emitters: ['webhook'],
    shows: NODE_FACT,
  },
  stale_verdict: {
    meaning:
      'the node agent has not re-confirmed its verdict for longer than cni.maxVerdictAgeSeconds (is it running?)',
    emitters: ['webhook', 'check'],
    shows: NODE_FACT,
  },
  node_not_found: {
    meaning: 'the node is not known to meshgate (no Node object in its cache)',
    emitters: ['mutate', 'validate'],
    shows: NODE_FACT,
  },
  node_quarantined: {
    meaning:
      "the meshgate repair controller withdrew the node's verification after redirect validation failed for pods on it " +
      `(annotation ${QUARANTINE_ANNOTATION})`,
    emitters: ['webhook', 'node-agent', 'repair'],
    shows: ['node-condition', 'admission-message', 'metric-label', 'check-report'],
  },
  condition_false: {
    meaning:
      `the node's ${CONDITION_TYPE} condition is not True and names no reason (meshgate's node agent always names ` +
      'one: someone else wrote it)',
    emitters: ['webhook'],
    shows: NODE_FACT,
  },
  not_verified: {
    meaning:
      'the node-state file (serve --node-state, node verdicts without a cluster) says the node is not verified and ' +
      'names no reason',
    emitters: ['webhook'],
    shows: NODE_FACT,
  },
} as const satisfies Codes;

/** Why the webhook's node facts do not trust a node, besides the node agent's own codes. */
export type NodeReason = keyof typeof NODE_CODES;
