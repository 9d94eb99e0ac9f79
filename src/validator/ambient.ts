/**
 * The ambient probe (`validate-redirect --ambient`): proves that Istio's ambient in-pod rules are in force and that
 * ztunnel serves this pod, by a TCP handshake to 127.0.0.2:53 and nothing more. ztunnel's in-pod nat OUTPUT chain
 * (istio cni/pkg/iptables, default.golden rule `! -d 127.0.0.1/32 -p tcp --dport 53 … -j REDIRECT --to-ports 15053`)
 * sends it to ztunnel's DNS listener 127.0.0.1:15053 inside the pod; without the rules 127.0.0.2 is an address of the
 * pod itself (127/8 is a local route on lo) where nothing listens, so the kernel refuses it and nothing leaves the
 * pod. No listener of our own: the answer must come from ztunnel. Why it cannot be fooled: docs/validate-redirect.md,
 * "Ambient mode".
 */
import { connect } from 'node:net';
import type { NetworkInterfaceInfo } from 'node:os';
import { isLoopback } from './checks.ts';
import { formatHostPort } from './listener.ts';
import type { ProbeEndpoint } from './options.ts';
import type { ValidatorReason } from './reasons.ts';

/** TCP to port 53 is what the DNS-capture rule redirects; any other port is not redirected from loopback. */
export const AMBIENT_PROBE_PORT = 53;

/** The IPv4 probe: a loopback address other than 127.0.0.1, which the DNS rule exempts. */
export const AMBIENT_PROBE_ADDRESS = '127.0.0.2:53';

/** ztunnel's in-pod DNS listener, where the rule delivers the probe (for messages). */
export const ZTUNNEL_DNS_PORT = 15053;

/**
 * 10 s: a pod whose sandbox was created without istio-cni in the chain may still be enrolled by istio-cni's node
 * agent (its informer path enrols pods on their first status update) while the probe retries; nothing of the workload
 * runs meanwhile, so a late enrolment is a safe one. Beyond that the pod is refused and the kubelet retries it.
 */
export const DEFAULT_AMBIENT_TIMEOUT_MS = 10_000;

/** Between refused attempts: each attempt is one loopback handshake, refused in microseconds. */
export const AMBIENT_RETRY_INTERVAL_MS = 100;

/**
 * One attempt never waits longer than this for a handshake: on loopback it is answered (SYN-ACK or RST) at once, so
 * silence means something in the pod drops the probe.
 */
const ATTEMPT_MS = 1_000;

export interface AmbientOptions {
  readonly probe: ProbeEndpoint;
  readonly timeoutMs: number;
  readonly retryIntervalMs: number;
}

export type AmbientResult =
  | { readonly ok: true; readonly elapsedMs: number; readonly attempts: number; readonly client: string }
  | {
      readonly ok: false;
      readonly reason: ValidatorReason;
      readonly detail: string;
      readonly elapsedMs: number;
      readonly attempts: number;
    };

type Attempt = { kind: 'connected'; client: string } | { kind: 'failed'; code: string } | { kind: 'silent' };

export interface AmbientDeps {
  readonly now?: () => number;
  readonly sleep?: (ms: number) => Promise<void>;
  readonly attempt?: (probe: ProbeEndpoint, waitMs: number) => Promise<Attempt>;
}

/**
 * Where the probe goes when --probe-address is not given: 127.0.0.2:53, unless the pod has no IPv4 address but its
 * loopback (an IPv6-only pod, where Istio installs only the ip6tables rules): then the pod's own first global IPv6
 * address, port 53 — the v6 rule exempts only ::1 and, without rules, the address is the pod's own, so nothing leaves.
 */
export function ambientProbeFor(
  interfaces: Readonly<Record<string, NetworkInterfaceInfo[] | undefined>>,
): ProbeEndpoint {
  const all = Object.values(interfaces).flatMap((list) => list ?? []);
  const v4 = all.some((a) => a.family === 'IPv4' && !a.internal);
  const v6 = all.find((a) => a.family === 'IPv6' && !a.internal && !a.address.toLowerCase().startsWith('fe80:'));
  if (!v4 && v6) return { host: v6.address, port: AMBIENT_PROBE_PORT, family: 6 };
  return { host: '127.0.0.2', port: AMBIENT_PROBE_PORT, family: 4 };
}

/**
 * Why `probe` cannot serve as the ambient probe, as a sentence naming the flag; undefined when it can. `local`: the
 * pod's own addresses (a non-loopback probe must be one, or an unredirected probe would leave the pod).
 */
export function ambientProbeProblem(probe: ProbeEndpoint, local: readonly string[]): string | undefined {
  if (probe.port !== AMBIENT_PROBE_PORT)
    return `--probe-address port ${probe.port}: with --ambient it must be ${AMBIENT_PROBE_PORT}, the only port the ambient rules redirect from inside the pod`;
  if (probe.host === '127.0.0.1' || probe.host === '::1')
    return `--probe-address ${probe.host}: the ambient rules exempt it, so the probe could never be redirected`;
  if (!isLoopback(probe.host) && !local.includes(probe.host))
    return `--probe-address ${probe.host} is not an address of this pod: an unredirected probe would leave it`;
  return undefined;
}

/** Connects until the handshake succeeds or the deadline passes; never throws. */
export async function validateAmbient(opts: AmbientOptions, deps: AmbientDeps = {}): Promise<AmbientResult> {
  const now = deps.now ?? (() => performance.now());
  const sleep = deps.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const attempt = deps.attempt ?? handshake;
  const start = now();
  const elapsed = () => Math.max(0, Math.round(now() - start));
  const codes = new Map<string, number>();
  let attempts = 0;
  try {
    for (;;) {
      const remaining = opts.timeoutMs - elapsed();
      attempts++;
      const a = await attempt(opts.probe, Math.max(1, Math.min(remaining, ATTEMPT_MS)));
      if (a.kind === 'connected') return { ok: true, elapsedMs: elapsed(), attempts, client: a.client };
      const code = a.kind === 'failed' ? a.code : 'no answer';
      codes.set(code, (codes.get(code) ?? 0) + 1);
      if (opts.timeoutMs - elapsed() <= opts.retryIntervalMs) break;
      await sleep(opts.retryIntervalMs);
    }
  } catch (err) {
    const detail = `unexpected error: ${(err as Error)?.stack ?? String(err)}`;
    return { ok: false, reason: 'internal_error', detail, elapsedMs: elapsed(), attempts };
  }
  const seen = [...codes].map(([code, n]) => `${code} ×${n}`).join(', ');
  const probe = formatHostPort(opts.probe.host, opts.probe.port);
  return {
    ok: false,
    reason: 'ambient_not_captured',
    detail:
      `${attempts} connects to ${probe} over ${elapsed()}ms got no handshake (${seen}): ` +
      `ztunnel's in-pod rule that redirects TCP port ${AMBIENT_PROBE_PORT} to its DNS listener ` +
      `127.0.0.1:${ZTUNNEL_DNS_PORT} is missing in this pod, or ztunnel does not serve the pod (yet); ` +
      'the probe is local to the pod, so nothing left it',
    elapsedMs: elapsed(),
    attempts,
  };
}

/** One TCP handshake, closed as soon as it completes (no byte sent: ztunnel's DNS server does nothing upstream). */
function handshake(probe: ProbeEndpoint, waitMs: number): Promise<Attempt> {
  return new Promise((resolve) => {
    const socket = connect({ host: probe.host, port: probe.port, family: probe.family, noDelay: true });
    const settle = (a: Attempt) => {
      clearTimeout(timer);
      socket.removeAllListeners();
      socket.on('error', () => {});
      socket.destroy();
      resolve(a);
    };
    const timer = setTimeout(() => settle({ kind: 'silent' }), waitMs);
    socket.on('connect', () =>
      settle({ kind: 'connected', client: formatHostPort(socket.localAddress ?? '', socket.localPort ?? 0) }),
    );
    socket.on('error', (err: NodeJS.ErrnoException) => settle({ kind: 'failed', code: err.code ?? 'UNKNOWN' }));
  });
}
