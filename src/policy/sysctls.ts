/**
 * Pod sysctls that stop the redirect validator's probe from running (issue 33 §7). Three are in the kubelet's safe
 * set, so any pod may set them, and each takes effect in the pod's network namespace, where the validator runs first:
 * - `net.ipv4.ip_unprivileged_port_start` above a port the validator listens on (the proxy's outbound and inbound
 *   ports, meshgate's loopback probe port): the unprivileged validator (no NET_BIND_SERVICE) cannot listen there;
 * - `net.ipv4.ip_local_port_range` and `net.ipv4.ip_local_reserved_ports` that leave no ephemeral port free: the
 *   probe's connect() (meshgate's, Istio's `istio-validation` binding 127.0.0.1:0, Linkerd's) gets EADDRNOTAVAIL.
 * Each makes a validator fail on a healthy redirect — Istio's and Linkerd's own validators exit with their
 * "not redirected" code then, and three such pods can withdraw a verified node — so they are refused at admission.
 * Two sysctls outside the safe set (a node must allow them with --allowed-unsafe-sysctls) are refused too:
 * `ip_nonlocal_bind` lets the validator bind an address that is not the pod's, which is its proof that an
 * unredirected probe stays in the pod (src/validator/validate.ts destinationFailure).
 * A pod's network namespace starts with the kernel's defaults, not the node's: ephemeral ports 32768-60999, none
 * reserved (net/ipv4/af_inet.c inet_init_net).
 */
import type { Compiled } from '../config/compile.ts';
import type { Pod } from '../contract/pod.ts';
import { isObject } from '../util/json.ts';

/** The kernel's default ephemeral range in a new network namespace. */
const DEFAULT_RANGE: readonly [number, number] = [32768, 60999];

/** A pod has a handful of sysctls; the kubelet's whole safe set is 14. More are not read. */
const MAX_SYSCTLS = 64;
/** ip_local_reserved_ports items read; each is a port or a range. */
const MAX_RESERVED_ITEMS = 256;

/** Kubernetes accepts `/` as the separator too (net/ipv4/ip_local_port_range). */
const dotted = (name: string) => (name.includes('/') ? name.replaceAll('/', '.') : name);

/** The ports the validator listens on in the pod: the proxy's two capture ports and, with a loopback probe, its port. */
export function validatorPorts(cfg: Compiled): number[] {
  const ports = [cfg.identity.outboundPort, cfg.identity.inboundPort];
  if (cfg.probe.loopback) ports.push(cfg.probe.port);
  return [...new Set(ports)];
}

function parseRange(v: string): [number, number] | undefined {
  const m = /^\s*(\d{1,5})\s+(\d{1,5})\s*$/.exec(v);
  if (!m) return undefined;
  const lo = Number(m[1]);
  const hi = Number(m[2]);
  return lo >= 1 && hi <= 65535 && lo <= hi ? [lo, hi] : undefined;
}

/** `1,2,10-20` as the kernel's bitmap parser reads it; undefined when it would not. */
function parseReserved(v: string): Array<[number, number]> | undefined {
  if (v.trim() === '') return [];
  const items = v.trim().split(',');
  if (items.length > MAX_RESERVED_ITEMS) return undefined;
  const out: Array<[number, number]> = [];
  for (const item of items) {
    const m = /^(\d{1,5})(?:-(\d{1,5}))?$/.exec(item.trim());
    if (!m) return undefined;
    const lo = Number(m[1]);
    const hi = m[2] === undefined ? lo : Number(m[2]);
    if (hi > 65535 || lo > hi) return undefined;
    out.push([lo, hi]);
  }
  return out;
}

/**
 * How many ports of `range` the probe's connect() may still take: not reserved, not one the validator listens on.
 * Intervals merged once: linear in the (bounded) number of reserved items, whatever the range's size.
 */
function freeEphemeral(
  range: readonly [number, number],
  reserved: Array<[number, number]>,
  listening: number[],
): number {
  const blocked = [...reserved, ...listening.map((p): [number, number] => [p, p])]
    .map(([lo, hi]): [number, number] => [Math.max(lo, range[0]), Math.min(hi, range[1])])
    .filter(([lo, hi]) => lo <= hi)
    .sort((a, b) => a[0] - b[0]);
  let covered = 0;
  let end = range[0] - 1;
  for (const [lo, hi] of blocked) {
    if (hi <= end) continue;
    covered += hi - Math.max(lo, end + 1) + 1;
    end = hi;
  }
  return range[1] - range[0] + 1 - covered;
}

/** Why the pod's sysctls would break the validator's probe; undefined when they would not. */
export function probeSysctlProblem(pod: Pod, cfg: Compiled): string | undefined {
  const raw = (pod.spec.securityContext as Record<string, unknown> | undefined)?.sysctls;
  if (raw === undefined) return undefined;
  if (!Array.isArray(raw)) return "the pod's securityContext.sysctls is not a list";
  if (raw.length > MAX_SYSCTLS)
    return `the pod sets ${raw.length} sysctls; meshgate reads at most ${MAX_SYSCTLS} (the kubelet's safe set is 14)`;
  const values = new Map<string, string>();
  for (const s of raw) {
    if (!isObject(s) || typeof s.name !== 'string' || typeof s.value !== 'string')
      return `the pod's securityContext.sysctls holds ${JSON.stringify(s)}, not a name and a value`;
    values.set(dotted(s.name), s.value);
  }
  const listening = validatorPorts(cfg);
  const lowest = Math.min(...listening);
  const where = (name: string) => `sysctl ${name}=${JSON.stringify(values.get(name))}`;

  const unprivileged = values.get('net.ipv4.ip_unprivileged_port_start');
  if (unprivileged !== undefined) {
    const n = /^\s*\d{1,6}\s*$/.test(unprivileged) ? Number(unprivileged) : Number.NaN;
    if (Number.isNaN(n)) return `${where('net.ipv4.ip_unprivileged_port_start')} is not a port number`;
    if (n > lowest)
      return (
        `${where('net.ipv4.ip_unprivileged_port_start')} makes port ${lowest} privileged: the redirect validator, ` +
        `which runs without NET_BIND_SERVICE, could not listen on it (it listens on ${listening.join(', ')})`
      );
  }
  const rangeText = values.get('net.ipv4.ip_local_port_range');
  const reservedText = values.get('net.ipv4.ip_local_reserved_ports');
  if (rangeText !== undefined || reservedText !== undefined) {
    const range = rangeText === undefined ? DEFAULT_RANGE : parseRange(rangeText);
    if (!range) return `${where('net.ipv4.ip_local_port_range')} is not a range "LOW HIGH" of ports`;
    const reserved = reservedText === undefined ? [] : parseReserved(reservedText);
    if (!reserved)
      return `${where('net.ipv4.ip_local_reserved_ports')} is not a list of ports and ranges meshgate reads`;
    if (freeEphemeral(range, reserved, listening) === 0)
      return (
        `${[rangeText === undefined ? '' : where('net.ipv4.ip_local_port_range'), reservedText === undefined ? '' : where('net.ipv4.ip_local_reserved_ports')].filter(Boolean).join(' and ')} ` +
        `leave no ephemeral port for the redirect validator's probe connection (ports ${range[0]}-${range[1]}, ` +
        `less the reserved ones and the ${listening.join(', ')} it listens on)`
      );
  }
  for (const name of ['net.ipv4.ip_nonlocal_bind', 'net.ipv6.ip_nonlocal_bind']) {
    const v = values.get(name);
    if (v !== undefined && v.trim() !== '0')
      return (
        `${where(name)} lets the redirect validator listen on an address that is not the pod's, which is how it ` +
        'proves that an unredirected probe stays inside the pod'
      );
  }
  return undefined;
}
