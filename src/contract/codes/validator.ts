/**
 * Why a validation init container failed (`meshgate validate-redirect`, `validate-ambient`: src/validator/), and how
 * the repair controller counts a failed validator it reads from a pod. The validator writes its code in its
 * termination message (JSON) and exits 42; the repair controller reads it back, names it in its MeshRedirectFailed
 * Event and in a node's quarantine mark, and counts it (meshgate_repair_pods_deleted_total{reason}). Never rename a
 * code: a repair controller of another version or a dashboard may key on it. New codes are appended: the order is
 * the validator's (VALIDATOR_REASONS).
 */
import type { Codes, Surface } from './entry.ts';

/** A failed validation: the pod's container status, the repair controller's Events and its metrics. */
const FAILED = ['container-status', 'event', 'metric-label'] as const satisfies readonly Surface[];

export const VALIDATOR_CODES = {
  redirect_missing: {
    meaning:
      'TCP is not redirected to the proxy ports: ' +
      'the probe connection was refused, reset or unroutable instead of reaching the validator',
    emitters: ['validator'],
    shows: FAILED,
  },
  timeout: {
    meaning:
      'TCP is not redirected to the proxy ports: the probe connection got no handshake before the deadline ' +
      "(an external probe's SYN most likely left the pod and was dropped)",
    emitters: ['validator'],
    shows: FAILED,
  },
  wrong_listener: {
    meaning:
      'TCP reached a listener that is not the validator: ' +
      'the connection was established but did not return the proof for the token',
    emitters: ['validator'],
    shows: FAILED,
  },
  listen_failed: {
    meaning:
      'the validator could not listen on the proxy ports or the probe address, so it could not check redirection',
    emitters: ['validator'],
    shows: FAILED,
  },
  internal_error: {
    meaning: 'the validator failed for a reason unrelated to redirection, so redirection is unverified',
    emitters: ['validator'],
    shows: FAILED,
  },
  not_redirected: {
    meaning:
      'TCP is not redirected: the probe reached its own destination inside the pod ' +
      "(the mesh's rules are missing, or they do not apply to the validator's UID/GID); nothing left the pod",
    emitters: ['validator'],
    shows: FAILED,
  },
  probe_not_local: {
    meaning:
      'the probe address is not an address of this pod, so an unredirected probe could leave it; nothing was sent ' +
      "(for [::6] the mesh's own setup, which assigns ::6 to lo, did not run)",
    emitters: ['validator'],
    shows: FAILED,
  },
  ambient_not_captured: {
    meaning:
      "TCP is not captured by Istio's ambient mode: the probe to port 53 of a pod-local address never reached " +
      'ztunnel (its in-pod rules are missing or ztunnel does not serve the pod); nothing left the pod',
    emitters: ['validator'],
    shows: FAILED,
  },
} as const satisfies Codes;

/**
 * The repair controller's reasons for a failed validator that is not meshgate's, or whose termination message it
 * cannot read (src/repair/failed/decide.ts FailureReason, with the validator's codes). A closed set: a message read
 * from a pod never makes a new series.
 */
export const FAILURE_CODES = {
  istio_validation_failed: {
    meaning:
      "Istio's own validation init container (istio-validation) failed: it exits with one code for every failure, " +
      'so the first line of its termination message is the detail',
    emitters: ['repair'],
    shows: ['event', 'metric-label'],
  },
  linkerd_validation_failed: {
    meaning:
      "Linkerd's own validator (linkerd-network-validator) failed: it exits with one code for every failure, so " +
      'the first line of its termination message is the detail',
    emitters: ['repair'],
    shows: ['event', 'metric-label'],
  },
  unknown: {
    meaning:
      "meshgate's validator failed with a termination message the repair controller cannot read (not its JSON, or a " +
      'code it does not know): no evidence against the node',
    emitters: ['repair'],
    shows: ['event', 'metric-label'],
  },
} as const satisfies Codes;

/** Why meshgate's validator failed: the `reason` of its termination message. */
export type ValidatorReason = keyof typeof VALIDATOR_CODES;
/** The repair controller's own names for a failed validator. */
export type FailureCode = keyof typeof FAILURE_CODES;
