/**
 * Typed options for the redirect validator, their defaults, and the pure parsers the CLI uses to build them.
 * Defaults are pinned by test/validator/options.test.ts because the webhook injects this container with them.
 */
import { isIPv4, isIPv6 } from 'node:net';

export interface Endpoint {
  /** An IP literal (no DNS: a lookup would itself be traffic and could be redirected or fail on its own). */
  readonly host: string;
  readonly port: number;
  readonly family: 4 | 6;
}

export interface ValidateOptions {
  /** The port the proxy will listen on for redirected outbound traffic; the validator borrows it first. */
  readonly outboundPort: number;
  /** Where the probe connection is addressed. With working redirection no packet ever reaches it. */
  readonly probe: Endpoint;
  /** Address the listener binds; see defaultListenAddress for why loopback. */
  readonly listenAddress: string;
  /** Deadline for the whole check (listen + connect + proof). */
  readonly timeoutMs: number;
}

/** Envoy's (Istio's) outbound capture port, the port istio-iptables REDIRECTs to. Linkerd's would be 4140. */
export const DEFAULT_OUTBOUND_PORT = 15001;

/**
 * RFC 5737 TEST-NET-1, port 80. No real server owns 192.0.2.0/24, so if redirection is missing the single SYN goes to
 * the pod's default route and is dropped (bogon filters) or answered with an ICMP unreachable — it cannot reach
 * someone's service. Port 80 because no mesh excludes it from outbound capture by default.
 */
export const DEFAULT_PROBE_ADDRESS = '192.0.2.1:80';

/** 5 s: a redirected connection is answered in-process within milliseconds; the rest is margin for a loaded node. */
export const DEFAULT_TIMEOUT_MS = 5_000;

/** Kubernetes' default terminationMessagePath; the kubelet reads at most 4096 bytes of it. */
export const DEFAULT_TERMINATION_LOG = '/dev/termination-log';

/**
 * Loopback of the probe's family: iptables REDIRECT in the nat OUTPUT chain rewrites the destination of locally
 * generated packets to 127.0.0.1 (::1 for IPv6), so that is where redirected probes arrive. Binding only loopback
 * also means nothing outside the pod can connect to the listener and use it to compute proofs for a relayed token.
 */
export function defaultListenAddress(family: 4 | 6): string {
  return family === 4 ? '127.0.0.1' : '::1';
}

/** Parses "IP:PORT" or "[IPv6]:PORT". Returns an error message instead of throwing. */
export function parseEndpoint(text: string): Endpoint | string {
  const m = /^\[([^\]]+)\]:(\d+)$/.exec(text) ?? /^([^:[\]]+):(\d+)$/.exec(text);
  if (!m) return `"${text}" is not IP:PORT (write IPv6 as [addr]:port)`;
  const [, host, portText] = m;
  const family = isIPv4(host) ? 4 : isIPv6(host) ? 6 : undefined;
  if (!family) return `"${host}" is not an IP address (host names are not resolved)`;
  const port = parsePort(portText);
  if (typeof port === 'string') return port;
  if (port === 0) return 'the probe port must not be 0';
  return { host, port, family };
}

/** Parses a TCP port number 0-65535 given as decimal text. */
export function parsePort(text: string): number | string {
  if (!/^\d{1,5}$/.test(text)) return `"${text}" is not a port number`;
  const port = Number(text);
  if (port > 65_535) return `${port} is not a port number (max 65535)`;
  return port;
}

/**
 * Parses a duration like "5s", "500ms" or "1m" (Go's notation, as Kubernetes users write it). A bare number is
 * rejected rather than guessed to be seconds or milliseconds.
 */
export function parseDuration(text: string): number | string {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m)$/.exec(text);
  if (!m) return `"${text}" is not a duration (use e.g. 500ms, 5s, 1m)`;
  const ms = Number(m[1]) * ({ ms: 1, s: 1_000, m: 60_000 } as const)[m[2] as 'ms' | 's' | 'm'];
  if (ms < 1) return `timeout ${text} is shorter than 1ms`;
  // setTimeout's limit (2^31-1 ms, ~24.8 days); longer would fire immediately.
  if (ms > 2_147_483_647) return `timeout ${text} is too long`;
  return Math.round(ms);
}

/**
 * Refuses a probe that could reach the listener without any redirection: with probe port = outbound port, a probe to
 * 127.0.0.1 or to any of the pod's own addresses connects straight to the listener and "proves" nothing.
 */
export function trivialProbeProblem(opts: ValidateOptions): string | undefined {
  if (opts.probe.port === opts.outboundPort) {
    return `--probe-address port ${opts.probe.port} equals --outbound-port: a probe to a local address would reach the listener without any redirection`;
  }
  return undefined;
}
