/**
 * Per-pod annotations that adjust what is injected. Every value is parsed here; an invalid one becomes a
 * problem naming the annotation and the value, and the pod is denied — never a silent default.
 */
import { ANNOTATIONS } from './constants.ts';
import type { Resources } from '../config/types.ts';
import { parseCidrList, parsePortList, parseQuantity } from './values.ts';
import { deepFreeze } from '../util/json.ts';
import { cached } from '../util/cache.ts';

export interface Overrides {
  resources: Resources;
  excludeInboundPorts: number[];
  excludeOutboundPorts: number[];
  excludeOutboundCidrs: string[];
}

export type OverridesResult = { ok: true; value: Overrides } | { ok: false; problems: string[] };

const RESOURCE_ANNOTATIONS: Array<[string, 'requests' | 'limits', 'cpu' | 'memory']> = [
  [ANNOTATIONS.proxyCpuRequest, 'requests', 'cpu'],
  [ANNOTATIONS.proxyCpuLimit, 'limits', 'cpu'],
  [ANNOTATIONS.proxyMemoryRequest, 'requests', 'memory'],
  [ANNOTATIONS.proxyMemoryLimit, 'limits', 'memory'],
];

/** Every annotation meshgate reads here, checked once per review for being a string. */
const OVERRIDE_KEYS = [...RESOURCE_ANNOTATIONS.map(([k]) => k), ANNOTATIONS.excludeInboundPorts, ANNOTATIONS.excludeOutboundPorts, ANNOTATIONS.excludeOutboundCidrs];

/** The result for a pod without override annotations (most pods): one frozen value per base, shared. */
const noOverrides = new WeakMap<Resources, OverridesResult>();

function defaults(base: Resources): OverridesResult {
  return cached(noOverrides, base, (b) => {
    const resources: Resources = { requests: { ...(b.requests ?? {}) }, limits: { ...(b.limits ?? {}) } };
    return deepFreeze({ ok: true, value: { resources, excludeInboundPorts: [], excludeOutboundPorts: [], excludeOutboundCidrs: [] } });
  });
}

export function parseOverrides(annotations: Record<string, unknown> | undefined, base: Resources): OverridesResult {
  if (!annotations || OVERRIDE_KEYS.every((k) => annotations[k] === undefined)) return defaults(base);
  const problems: string[] = [];
  // Only the apiserver guarantees string values; anything else reaching a meshgate key is named, not coerced.
  const a: Record<string, string> = {};
  for (const key of OVERRIDE_KEYS) {
    const v = annotations?.[key];
    if (v === undefined) continue;
    if (typeof v === 'string') a[key] = v;
    else problems.push(`annotation ${key}: expected a string, got ${JSON.stringify(v)}`);
  }
  const resources: Resources = { requests: { ...(base.requests ?? {}) }, limits: { ...(base.limits ?? {}) } };
  for (const [key, section, res] of RESOURCE_ANNOTATIONS) {
    if (a[key] === undefined) continue;
    const q = parseQuantity(a[key]);
    if (q.ok) resources[section]![res] = q.value;
    else problems.push(`annotation ${key}: ${q.error}`);
  }
  const lists = {
    excludeInboundPorts: parsePortList(a[ANNOTATIONS.excludeInboundPorts] ?? ''),
    excludeOutboundPorts: parsePortList(a[ANNOTATIONS.excludeOutboundPorts] ?? ''),
    excludeOutboundCidrs: parseCidrList(a[ANNOTATIONS.excludeOutboundCidrs] ?? ''),
  };
  for (const [field, parsed] of Object.entries(lists)) {
    if (!parsed.ok) problems.push(`annotation ${ANNOTATIONS[field as keyof typeof lists]}: ${parsed.error}`);
  }
  if (problems.length > 0) return { ok: false, problems };
  return {
    ok: true,
    value: {
      resources,
      excludeInboundPorts: (lists.excludeInboundPorts as { value: number[] }).value,
      excludeOutboundPorts: (lists.excludeOutboundPorts as { value: number[] }).value,
      excludeOutboundCidrs: (lists.excludeOutboundCidrs as { value: string[] }).value,
    },
  };
}
