/**
 * Address arithmetic for exclusion policy: how many addresses a set of CIDRs covers together (overlaps counted
 * once) and whether one contains an address. BigInt for both families, so IPv4 and IPv6 share one code path.
 */
import { isIP } from 'node:net';

export interface Block {
  family: 4 | 6;
  start: bigint;
  /** Number of addresses: 2^(bits - prefix). */
  size: bigint;
}

function ipv4ToBig(addr: string): bigint {
  return addr.split('.').reduce((n, o) => (n << 8n) | BigInt(Number(o)), 0n);
}

function ipv6ToBig(addr: string): bigint {
  let text = addr;
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4) {
    const n = ipv4ToBig(v4[1]);
    text = `${text.slice(0, -v4[1].length)}${(n >> 16n).toString(16)}:${(n & 0xffffn).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const groups = tail === undefined ? h : [...h, ...Array(8 - h.length - t.length).fill('0'), ...t];
  return groups.reduce((n, g) => (n << 16n) | BigInt(parseInt(g || '0', 16)), 0n);
}

export function addressToBig(addr: string): { family: 4 | 6; value: bigint } | undefined {
  const family = isIP(addr);
  if (family === 4) return { family, value: ipv4ToBig(addr) };
  if (family === 6) return { family, value: ipv6ToBig(addr) };
  return undefined;
}

/** A CIDR (already validated by util/values.ts parseCidr) as a block aligned to its prefix. */
export function block(cidr: string): Block | undefined {
  const [addr, prefixText] = cidr.split('/');
  const a = addressToBig(addr);
  if (!a) return undefined;
  const bits = a.family === 4 ? 32n : 128n;
  const prefix = BigInt(Number(prefixText));
  const size = 1n << (bits - prefix);
  return { family: a.family, start: (a.value / size) * size, size };
}

/** Addresses covered by the blocks of one family, overlaps counted once. */
export function coverage(blocks: readonly Block[], family: 4 | 6): bigint {
  const sorted = blocks
    .filter((b) => b.family === family)
    .sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
  let total = 0n;
  let end = -1n;
  for (const b of sorted) {
    const bEnd = b.start + b.size - 1n;
    if (bEnd <= end) continue;
    const from = b.start > end ? b.start : end + 1n;
    total += bEnd - from + 1n;
    end = bEnd;
  }
  return total;
}

export function contains(b: Block, addr: string): boolean {
  const a = addressToBig(addr);
  return !!a && a.family === b.family && a.value >= b.start && a.value < b.start + b.size;
}
