/**
 * Parsers for values people write in annotations and config: Kubernetes quantities, ports, port lists, CIDRs.
 * Each returns the parsed value or an error sentence; callers add where the value came from.
 */
import { isIP } from 'node:net';

/** `tooLarge`: refused unparsed for its size (reason too_large), not for what it says. */
export type Parsed<T> = { ok: true; value: T } | { ok: false; error: string; tooLarge?: true };

/**
 * Entries one comma-separated list (CIDRs, ports, port ranges) may hold, counted before it is split or parsed, so a
 * list costs at most this many parses however long it is (a 60,000-CIDR list took 22.9 s when every entry was
 * parsed and checked against all the others). The meshes' own lists hold a handful: istiod's template excludes 3
 * inbound ports, clusters exclude their 2-4 service and pod CIDRs; 256 /8s would be all of IPv4.
 */
export const MAX_LIST_ENTRIES = 256;

/** The refusal of a list holding more than MAX_LIST_ENTRIES comma-separated parts (empty ones count). */
function tooManyEntries(raw: string): { ok: false; error: string; tooLarge: true } | undefined {
  let parts = 1;
  for (let i = raw.indexOf(','); i !== -1; i = raw.indexOf(',', i + 1)) parts++;
  if (parts <= MAX_LIST_ENTRIES) return undefined;
  return {
    ok: false,
    tooLarge: true,
    error: `${parts} comma-separated entries; meshgate reads at most ${MAX_LIST_ENTRIES} in one list`,
  };
}

// Kubernetes resource.Quantity grammar: a signed decimal number, then a binary (Ki..Ei), decimal (n,u,m,k,M,G,T,P,E)
// or exponent suffix. Negative quantities are refused: no resource request can be negative.
const QUANTITY = /^(\d+(\.\d*)?|\.\d+)(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?\d+)?$/;

export function parseQuantity(raw: string): Parsed<string> {
  const value = raw.trim();
  if (!QUANTITY.test(value)) {
    return { ok: false, error: `"${raw}" is not a Kubernetes quantity (examples: 100m, 0.5, 128Mi, 1G)` };
  }
  return { ok: true, value };
}

export function parsePort(raw: string): Parsed<number> {
  const value = raw.trim();
  if (!/^\d+$/.test(value)) return { ok: false, error: `"${raw}" is not a port number` };
  const port = Number(value);
  if (port < 1 || port > 65535) return { ok: false, error: `port ${port} is out of range 1-65535` };
  return { ok: true, value: port };
}

export function parseCidr(raw: string): Parsed<string> {
  const value = raw.trim();
  const slash = value.indexOf('/');
  if (slash < 0) return { ok: false, error: `"${raw}" is not a CIDR (expected address/prefix, e.g. 10.0.0.0/8)` };
  const addr = value.slice(0, slash);
  const prefix = value.slice(slash + 1);
  const family = isIP(addr);
  if (family === 0) return { ok: false, error: `"${raw}" has an invalid address "${addr}"` };
  const max = family === 4 ? 32 : 128;
  if (!/^\d+$/.test(prefix) || Number(prefix) > max) {
    return { ok: false, error: `"${raw}" has an invalid prefix length "${prefix}" (0-${max} for IPv${family})` };
  }
  return { ok: true, value };
}

/** Comma-separated CIDRs; empty string means none. Each kept once, in the order of its first occurrence. */
export function parseCidrList(raw: string): Parsed<string[]> {
  const tooMany = tooManyEntries(raw);
  if (tooMany) return tooMany;
  const out = new Set<string>();
  for (const part of raw.split(',')) {
    if (part.trim() === '') continue;
    const c = parseCidr(part);
    if (!c.ok) return c;
    out.add(c.value);
  }
  return { ok: true, value: [...out] };
}

/** host:port with an IPv4 address or [IPv6]; used for the validator's probe address. */
export function parseHostPort(raw: string): Parsed<{ host: string; port: number }> {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([0-9.]+)):(\d+)$/.exec(raw.trim());
  if (!m) return { ok: false, error: `"${raw}" is not IP:PORT (IPv6 as [addr]:port)` };
  const host = m[1] ?? m[2];
  if (isIP(host) === 0) return { ok: false, error: `"${raw}" has an invalid IP address "${host}"` };
  const port = parsePort(m[3]);
  if (!port.ok) return port;
  return { ok: true, value: { host, port: port.value } };
}

/** An inclusive range of ports; a single port is a range of one. */
export interface PortRange {
  readonly from: number;
  readonly to: number;
}

/** Every port: how a wildcard (`*`) exclusion reads. */
export const ALL_PORTS: PortRange = Object.freeze({ from: 1, to: 65535 });

/**
 * Comma-separated ports as the meshes' redirect tools read them: `15020`, a range `1000:2000` (iptables, which
 * istio-iptables passes the value to) or `1000-2000` (Linkerd), or `*` for every port. Empty means none.
 */
export function parsePortRanges(raw: string): Parsed<PortRange[]> {
  const tooMany = tooManyEntries(raw);
  if (tooMany) return tooMany;
  const out: PortRange[] = [];
  for (const part of raw.split(',')) {
    const text = part.trim();
    if (text === '') continue;
    if (text === '*') {
      out.push(ALL_PORTS);
      continue;
    }
    const m = /^(\d+)(?:[:-](\d+))?$/.exec(text);
    if (!m) return { ok: false, error: `"${text}" is not a port or port range` };
    const from = Number(m[1]);
    const to = m[2] === undefined ? from : Number(m[2]);
    for (const p of [from, to])
      if (p < 1 || p > 65535) return { ok: false, error: `port ${p} is out of range 1-65535` };
    if (to < from) return { ok: false, error: `"${text}" is an empty range` };
    out.push({ from, to });
  }
  return { ok: true, value: out };
}

/** How many distinct ports the ranges cover together. */
export function portCount(ranges: readonly PortRange[]): number {
  const sorted = [...ranges].sort((a, b) => a.from - b.from);
  let count = 0;
  let end = 0;
  for (const r of sorted) {
    const from = Math.max(r.from, end + 1);
    if (r.to >= from) count += r.to - from + 1;
    end = Math.max(end, r.to);
  }
  return count;
}

export function coversPort(ranges: readonly PortRange[], port: number): boolean {
  return ranges.some((r) => r.from <= port && port <= r.to);
}
