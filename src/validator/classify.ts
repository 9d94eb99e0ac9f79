/**
 * Maps a probe that did not reach a capture listener to its reason and a detail sentence with the facts an operator
 * needs. The stand-in at the probe's destination is what makes "no rule applied" (not_redirected) and "a rule sent it
 * to the wrong port" (redirect_missing, refused) two different answers for a pod-scope probe.
 */
import type { ProofListener } from './listener.ts';
import type { ValidateOptions } from './options.ts';
import type { ProbeOutcome } from './probe.ts';
import type { ValidatorReason } from './reasons.ts';

export interface ClassifyContext {
  readonly opts: ValidateOptions;
  /** Printable probe address, "[v6]:port" for IPv6. */
  readonly probe: string;
  /** The proxy-port listeners (outbound, inbound). */
  readonly capture: readonly ProofListener[];
  /** "uid 1337 gid 1337": whose traffic the rules had to redirect. */
  readonly identity: string;
}

export type Unproved =
  | Exclude<ProbeOutcome, { kind: 'proved' }>
  | { readonly kind: 'reached_destination'; readonly client: string };

export function classify(outcome: Unproved, ctx: ClassifyContext): [ValidatorReason, string] {
  const { opts, probe } = ctx;
  const listeners = ctx.capture.map((l) => `${l.address} (${l.role})`).join(', ');
  const answered = ctx.capture.reduce((n, l) => n + l.answered(), 0);
  switch (outcome.kind) {
    case 'reached_destination':
      return [
        'not_redirected',
        `connected from ${outcome.client} to ${probe} and the validator's own listener at that address answered: ` +
          'no rule rewrote the destination. ' +
          "The mesh's rules are missing in this pod, or they do not apply to this process " +
          `(${ctx.identity}): Istio's rules redirect loopback traffic ` +
          'only for the proxy UID/GID, so the validator must run as them',
      ];
    case 'connect_failed':
      if (outcome.syscall === 'bind') {
        return [
          'internal_error',
          `could not bind the probe's source address ${opts.sourceAddress}: ${outcome.code} (${outcome.message}); ` +
            'it must be an address of this pod',
        ];
      }
      if (outcome.code === 'EADDRNOTAVAIL' || outcome.code === 'EADDRINUSE') {
        // connect() found no free local port: the pod's ephemeral range (net.ipv4.ip_local_port_range,
        // ip_local_reserved_ports) left none — EADDRNOTAVAIL, or EADDRINUSE where the source address was bound first
        // (libuv reports that bind's error at connect). Nothing was sent, so nothing about the redirect is known
        // (issue 33 §7).
        return [
          'internal_error',
          `connect to ${probe} failed with ${outcome.code} (${outcome.message}) before anything was sent: no local ` +
            "port was free for the probe (the pod's net.ipv4.ip_local_port_range and ip_local_reserved_ports); " +
            'the redirect could not be checked',
        ];
      }
      if (opts.scope === 'pod' && outcome.code === 'ECONNREFUSED') {
        return [
          'redirect_missing',
          `connect to ${probe} was refused at once inside the pod although the validator listens on ${probe} itself: ` +
            'a rule rewrote the destination, ' +
            `but to a port where nothing listens, not to ${listeners}. The rules redirect to the wrong port`,
        ];
      }
      return [
        'redirect_missing',
        `connect to ${probe} failed with ${outcome.code} (${outcome.message}); ` +
          `a redirected connection would have reached ${listeners}`,
      ];
    case 'not_proved':
      return [
        'wrong_listener',
        `connected to ${probe} but ${outcome.detail}; ` +
          `the validator's listeners ${listeners} answered ${answered} probes`,
      ];
    case 'timed_out':
      if (outcome.connected) {
        return [
          'wrong_listener',
          `connected to ${probe} but got no proof within ${outcome.waitedMs}ms; ` +
            `the validator's listeners ${listeners} answered ${answered} probes`,
        ];
      }
      if (opts.scope === 'external') {
        return [
          'timeout',
          `no TCP handshake with ${probe} within ${outcome.waitedMs}ms, ` +
            `so the SYN was not redirected to ${listeners}; ` +
            'the validator gave up before Linux would retransmit it, so at most one SYN left the pod',
        ];
      }
      return [
        'timeout',
        `no TCP handshake with ${probe} within ${outcome.waitedMs}ms although it is an address of this pod: ` +
          'something in the pod drops the probe',
      ];
  }
}
