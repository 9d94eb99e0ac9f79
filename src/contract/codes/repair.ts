/**
 * The repair controller's label codes besides the pod and validator codes: why it leaves a failed validator alone
 * (its pod's admission mark does not verify), what holds a withdrawn node, and why it reports an unmeshed pod rather
 * than evicting it. Each is a closed set of one metric label (docs/metrics.md); the hold is also in the node's
 * quarantine mark (src/node/quarantine.ts). And the code of a would-deny record it cannot read.
 */
import type { Codes, Surface } from './entry.ts';

const LABEL = ['metric-label'] as const satisfies readonly Surface[];

/** meshgate_repair_untrusted_failures_total{why}: the pod is neither acted on nor counted against its node. */
export const UNTRUSTED_CODES = {
  mark_missing: {
    meaning:
      "the failed validator's pod has no admission mark (meshgate.io/admitted): a look-alike, a pod admitted through " +
      'a pod-level opt-in entry, or one the mutating webhook never saw',
    emitters: ['repair'],
    shows: LABEL,
  },
  mark_invalid: {
    meaning:
      "the failed validator's pod carries an admission mark that does not verify: from another namespace, another " +
      'key, or copied onto a pod created later',
    emitters: ['repair'],
    shows: LABEL,
  },
  no_key: {
    meaning: "the repair controller has not loaded the admission mark's key yet, so no mark can verify",
    emitters: ['repair'],
    shows: LABEL,
  },
} as const satisfies Codes;

/** meshgate_repair_node_withdrawals_total{hold}, and the quarantine mark's `hold`. */
export const HOLD_CODES = {
  hold_off: {
    meaning:
      "the withdrawn node is held for its hold-off: --hold-off, doubled by each of the node's withdrawals within the " +
      'hour and each failed probe, capped at --max-hold-off',
    emitters: ['repair'],
    shows: LABEL,
  },
  flap_limit: {
    meaning:
      'the node was withdrawn --max-withdrawals-per-hour times within an hour: held until the first of those is an ' +
      'hour old',
    emitters: ['repair'],
    shows: LABEL,
  },
} as const satisfies Codes;

/** meshgate_repair_unmeshed_pods_reported_total{why}: an Event (MeshUnmeshedPod), no eviction. */
export const UNMESHED_CODES = {
  bare_pod: {
    meaning: 'the unmeshed pod has no controller: nothing would recreate it if it were evicted',
    emitters: ['repair'],
    shows: LABEL,
  },
  would_be_refused: {
    meaning:
      'meshgate would refuse the unmeshed pod as it is (an opt-out, hostNetwork, …): recreated, it would stay down',
    emitters: ['repair'],
    shows: LABEL,
  },
  not_evicting: {
    meaning: 'the unmeshed pod could be recreated meshed, but eviction is off (--unmeshed-pods report)',
    emitters: ['repair'],
    shows: LABEL,
  },
} as const satisfies Codes;

/** Why a failed validator's pod is not trusted. */
export type UntrustedWhy = keyof typeof UNTRUSTED_CODES;
/** What holds a withdrawn node. */
export type HoldReason = keyof typeof HOLD_CODES;
/** Why an unmeshed pod is reported rather than evicted. */
export type ReportWhy = keyof typeof UNMESHED_CODES;

/**
 * A would-deny record on a pod (label and annotation meshgate.io/would-deny, src/admission/level.ts) whose annotation
 * does not read as `<code>: <message>`: the pod's author (or a copy) wrote it, not meshgate's mutating webhook. Its
 * readers, the repair controller's MeshWouldDeny Event and `meshgate check --audit`, name it so.
 */
export const RECORD_CODES = {
  unknown: {
    meaning: "the pod's meshgate.io/would-deny annotation does not read as meshgate writes it (`<code>: <message>`)",
    emitters: ['repair', 'check'],
    shows: ['event', 'check-report'],
  },
} as const satisfies Codes;
