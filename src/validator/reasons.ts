/**
 * Why `meshgate validate-redirect` failed, as stable codes. The code is what the termination message, logs and any
 * controller reading pod status match on; the sentence is the one readable explanation reused everywhere. Both are
 * declared in the catalogue (src/contract/codes/validator.ts), in the validator's order: never rename a code (a repair
 * controller or a dashboard may already key on it); new codes are appended.
 */
import { codesOf, meaningsOf } from '../contract/codes/entry.ts';
import { VALIDATOR_CODES, type ValidatorReason } from '../contract/codes/index.ts';

export type { ValidatorReason };

export const VALIDATOR_REASONS = codesOf(VALIDATOR_CODES);

/**
 * The single non-zero exit code for every failure, so a pod spec, a controller or a human can tell "the validator
 * ran and refused" apart from the runtime's own codes (1 generic, 2 usage, 126/127 exec problems, 128+N signals,
 * 137 OOM kill). The reason code in the termination message says which failure it was.
 */
export const VALIDATION_FAILED_EXIT_CODE = 42;

const SENTENCES = meaningsOf(VALIDATOR_CODES);

/**
 * The reasons that say the validator could NOT CHECK the redirect (issue 33 §7): it could not listen on the proxy
 * ports (a pod sysctl made them privileged, something already held them) or failed for a reason of its own. They
 * still exit 42 — the pod must not start unproven — but they are no evidence against the node: the repair
 * controller never counts them towards withdrawing a verdict, and the quarantine's probe pod calls them
 * inconclusive. Every other reason is a probe that ran and was not redirected.
 */
export const COULD_NOT_CHECK: ReadonlySet<ValidatorReason> = new Set<ValidatorReason>([
  'listen_failed',
  'internal_error',
]);

/** One readable sentence per reason, for stderr and the termination message. */
export function describeReason(reason: ValidatorReason): string {
  return SENTENCES[reason];
}
