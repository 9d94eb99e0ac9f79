/**
 * Typed options for the redirect validator, their defaults, and the pure parsers the CLI uses to build them.
 * Defaults are pinned by test/validator/options.test.ts because the webhook injects this container with them.
 * Why the probe is 127.0.0.6:15002 by default (and when it cannot be): docs/validate-redirect.md, "The probe".
 */
import { isIPv4, isIPv6 } from 'node:net';

export interface ProbeEndpoint {
  /** An IP literal (no DNS: a lookup would itself be traffic and could be redirected or fail on its own). */
  readonly host: string;
  readonly port: number;
  readonly family: 4 | 6;
}

/**
 * `pod`: the probe address belongs to the pod itself (127.0.0.6, ::6 on lo), so without redirection the probe stays
 * inside the pod; the validator binds a listener there first, which both proves the address is local (nothing is
 * sent if it is not) and tells "not redirected" apart from "redirected to the wrong port".
 * `external`: for meshes whose rules never redirect loopback (Linkerd): the probe must be routed off the pod to be
 * redirected at all, and leaves the pod (one SYN) when the rules are missing.
 */
export type ProbeScope = 'pod' | 'external';

export interface ValidateOptions {
  /** The proxy's port for redirected outbound traffic; the validator listens there first. */
  readonly outboundPort: number;
  /**
   * The proxy's inbound capture port, also listened on: Istio's rules send the proxy UID's loopback traffic (the
   * default probe) to it rather than to the outbound port. null: no inbound listener (Linkerd's rules never do).
   */
  readonly inboundPort: number | null;
  /** Where the probe connection is addressed. With working redirection nothing ever reaches it. */
  readonly probe: ProbeEndpoint;
  readonly scope: ProbeScope;
  /** The probe's source address; null leaves it to the kernel (the pod IP for an external probe). */
  readonly sourceAddress: string | null;
  /** Address the listeners bind; see defaultListenAddress for why loopback. */
  readonly listenAddress: string;
  /** Deadline for the whole check (listen + connect + proof). */
  readonly timeoutMs: number;
}

/** Envoy's (Istio's) outbound capture port, istio-iptables' `-p`. Linkerd's would be 4140. */
export const DEFAULT_OUTBOUND_PORT = 15001;

/** Envoy's (Istio's) inbound capture port, istio-iptables' `-z`: where ISTIO_IN_REDIRECT sends loopback traffic. */
export const DEFAULT_INBOUND_PORT = 15006;

/**
 * Istio's own validation probe (istio-iptables' IptablesProbePort 15002, address 127.0.0.6): a loopback address that
 * is not 127.0.0.1, so Istio's rules redirect it for the proxy UID/GID, and that the kernel always delivers inside the
 * pod (the whole 127.0.0.0/8 is a local route on lo), so without the rules it cannot leave.
 */
export const DEFAULT_PROBE_ADDRESS = '127.0.0.6:15002';

/** The IPv6 variant, as Istio uses it. Local only when the mesh assigned ::6 to lo (istio-iptables does). */
export const DEFAULT_PROBE_ADDRESS_IPV6 = '[::6]:15002';

/**
 * The default with --external-probe: RFC 5737 TEST-NET-1, port 80. No real server owns 192.0.2.0/24, and port 80 is
 * in no mesh's default exclusion list. It is only "hopefully unroutable" (some networks do use the range), which is
 * why the external probe is opt-in and sends at most one SYN (EXTERNAL_SYN_WINDOW_MS).
 */
export const DEFAULT_EXTERNAL_PROBE_ADDRESS = '192.0.2.1:80';

/**
 * 5 s, as Istio's PROBE_TIMEOUT: a redirected connection is answered in-process within milliseconds; the rest is
 * margin.
 */
export const DEFAULT_TIMEOUT_MS = 5_000;

/**
 * How long an external probe waits for its handshake before giving up: below Linux's 1 s initial SYN retransmission
 * timeout (TCP_TIMEOUT_INIT, RFC 6298 §2.1), with 200 ms to spare for a late timer, so exactly one SYN leaves the pod
 * when redirection is missing. A REDIRECTed handshake completes in the kernel, in well under a millisecond.
 */
export const EXTERNAL_SYN_WINDOW_MS = 800;

/** Kubernetes' default terminationMessagePath; the kubelet reads at most 4096 bytes of it. */
export const DEFAULT_TERMINATION_LOG = '/dev/termination-log';

/**
 * Loopback of the probe's family: iptables REDIRECT in the nat OUTPUT chain rewrites the destination of locally
 * generated packets to 127.0.0.1 (::1 for IPv6), so that is where redirected probes arrive. Binding only loopback
 * also means nothing outside the pod can connect to the listeners and use them to compute proofs.
 */
export function defaultListenAddress(family: 4 | 6): string {
  return family === 4 ? '127.0.0.1' : '::1';
}

/**
 * As Istio's validator: a pod-scope probe comes from 127.0.0.1 (::1), never from 127.0.0.6, which Istio's rules
 * exempt as the inbound passthrough source. An external probe leaves the source to the kernel (the pod IP): it must
 * be routed off the pod to meet Linkerd's REDIRECT rule, and Linux refuses to route an IPv4 loopback source off lo
 * (connect fails with EINVAL).
 */
export function defaultSourceAddress(family: 4 | 6, scope: ProbeScope): string | null {
  return scope === 'pod' ? defaultListenAddress(family) : null;
}

/** Parses "IP:PORT" or "[IPv6]:PORT". Returns an error message instead of throwing. */
export function parseEndpoint(text: string): ProbeEndpoint | string {
  const m = /^\[([^\]]+)\]:(\d+)$/.exec(text) ?? /^([^:[\]]+):(\d+)$/.exec(text);
  if (!m) return `"${text}" is not IP:PORT (write IPv6 as [addr]:port)`;
  const [, host, portText] = m;
  const family = isIPv4(host) ? 4 : isIPv6(host) ? 6 : undefined;
  if (!family) return `"${host}" is not an IP address (host names are not resolved)`;
  const port = parseProbePort(portText);
  if (typeof port === 'string') return port;
  if (port === 0) return 'the probe port must not be 0';
  return { host, port, family };
}

/** Parses a TCP port number 0-65535 given as decimal text. */
export function parseProbePort(text: string): number | string {
  if (!/^\d{1,5}$/.test(text)) return `"${text}" is not a port number`;
  const port = Number(text);
  if (port > 65_535) return `${port} is not a port number (max 65535)`;
  return port;
}

/** The ports the validator listens on, outbound first. */
export function listenPorts(opts: Pick<ValidateOptions, 'outboundPort' | 'inboundPort'>): number[] {
  return opts.inboundPort === null ? [opts.outboundPort] : [opts.outboundPort, opts.inboundPort];
}
