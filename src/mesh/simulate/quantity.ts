/**
 * A resource quantity as Kubernetes writes it back (k8s.io/apimachinery resource.Quantity's canonical form): what an
 * injector's Go code serialises after parsing the values' "2000m" or "1024Mi", and what meshgate then reads ("2",
 * "1Gi"). Binary suffixes stay binary, decimal and milli values take the largest exact decimal suffix. A value this
 * does not parse is returned as it is.
 */
const BINARY: ReadonlyArray<[string, bigint]> = [
  ['Ei', 1n << 60n],
  ['Pi', 1n << 50n],
  ['Ti', 1n << 40n],
  ['Gi', 1n << 30n],
  ['Mi', 1n << 20n],
  ['Ki', 1n << 10n],
];
const DECIMAL: ReadonlyArray<[string, bigint]> = [
  ['E', 10n ** 18n],
  ['P', 10n ** 15n],
  ['T', 10n ** 12n],
  ['G', 10n ** 9n],
  ['M', 10n ** 6n],
  ['k', 10n ** 3n],
];

export function canonicalQuantity(value: unknown): unknown {
  if (typeof value === 'number' && Number.isInteger(value)) return canonicalQuantity(String(value));
  if (typeof value !== 'string') return value;
  const m = /^(\d+)(Ki|Mi|Gi|Ti|Pi|Ei|m|k|M|G|T|P|E)?$/.exec(value);
  if (!m) return value;
  const n = BigInt(m[1]);
  const suffix = m[2] ?? '';
  const binary = BINARY.find(([s]) => s === suffix);
  if (binary) {
    const bytes = n * binary[1];
    if (bytes === 0n) return '0';
    const unit = BINARY.find(([, f]) => bytes % f === 0n);
    return unit ? `${bytes / unit[1]}${unit[0]}` : String(bytes);
  }
  // In thousandths, so milli values and whole ones compare on one scale.
  const milli = suffix === 'm' ? n : n * (DECIMAL.find(([s]) => s === suffix)?.[1] ?? 1n) * 1000n;
  if (milli === 0n) return '0';
  if (milli % 1000n !== 0n) return `${milli}m`;
  const whole = milli / 1000n;
  const unit = DECIMAL.find(([, f]) => whole % f === 0n);
  return unit ? `${whole / unit[1]}${unit[0]}` : String(whole);
}

/** A container's resources with every quantity canonical. */
export function canonicalResources(r: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(r))
    out[k] =
      v && typeof v === 'object' && !Array.isArray(v)
        ? Object.fromEntries(Object.entries(v).map(([q, x]) => [q, canonicalQuantity(x)]))
        : v;
  return out;
}
