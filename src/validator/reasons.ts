/**
 * Why `meshgate validate-redirect` failed, as stable codes. The code is what the termination message, logs and any
 * controller reading pod status match on; the sentence is the one readable explanation reused everywhere.
 * Never rename a code: a repair controller or a dashboard may already key on it. New codes are appended.
 */

export const VALIDATOR_REASONS = [
  'redirect_missing',
  'timeout',
  'wrong_listener',
  'listen_failed',
  'internal_error',
  'not_redirected',
  'probe_not_local',
  'ambient_not_captured',
] as const;

export type ValidatorReason = (typeof VALIDATOR_REASONS)[number];

/**
 * The single non-zero exit code for every failure, so a pod spec, a controller or a human can tell "the validator
 * ran and refused" apart from the runtime's own codes (1 generic, 2 usage, 126/127 exec problems, 128+N signals,
 * 137 OOM kill). The reason code in the termination message says which failure it was.
 */
export const VALIDATION_FAILED_EXIT_CODE = 42;

const SENTENCES: Record<ValidatorReason, string> = {
  redirect_missing:
    'TCP is not redirected to the proxy ports: ' +
    'the probe connection was refused, reset or unroutable instead of reaching the validator',
  timeout:
    'TCP is not redirected to the proxy ports: the probe connection got no handshake before the deadline ' +
    "(an external probe's SYN most likely left the pod and was dropped)",
  wrong_listener:
    'TCP reached a listener that is not the validator: ' +
    'the connection was established but did not return the proof for the token',
  listen_failed:
    'the validator could not listen on the proxy ports or the probe address, so it could not check redirection',
  internal_error: 'the validator failed for a reason unrelated to redirection, so redirection is unverified',
  not_redirected:
    'TCP is not redirected: the probe reached its own destination inside the pod ' +
    "(the mesh's rules are missing, or they do not apply to the validator's UID/GID); nothing left the pod",
  probe_not_local:
    'the probe address is not an address of this pod, so an unredirected probe could leave it; nothing was sent ' +
    "(for [::6] the mesh's own setup, which assigns ::6 to lo, did not run)",
  ambient_not_captured:
    "TCP is not captured by Istio's ambient mode: the probe to port 53 of a pod-local address never reached " +
    'ztunnel (its in-pod rules are missing or ztunnel does not serve the pod); nothing left the pod',
};

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
