/**
 * `mesh: custom`: meshgate injects the proxy and the privileged init container itself, from templates the operator
 * sets (config `proxy`, `init`). Its containers are judged by equality with those templates (src/policy/identify.ts),
 * so this profile recognises no foreign containers. Pods ask for exemptions with meshgate's own annotations, which
 * meshgate hands to its init container as environment variables (`$(MESHGATE_EXCLUDE_…)` in the template's args).
 */
import { ANNOTATIONS } from '../contract/names.ts';
import { addCidrs, addPortRanges, emptySettings, type MeshProfile, type RedirectSettings } from './types.ts';

/** Environment variables meshgate sets on its init container, and the annotation each comes from. */
export const EXCLUSION_ENV = {
  MESHGATE_EXCLUDE_OUTBOUND_CIDRS: ANNOTATIONS.excludeOutboundCidrs,
  MESHGATE_EXCLUDE_OUTBOUND_PORTS: ANNOTATIONS.excludeOutboundPorts,
  MESHGATE_EXCLUDE_INBOUND_PORTS: ANNOTATIONS.excludeInboundPorts,
} as const;

function annotationSettings(a: Readonly<Record<string, string>>): RedirectSettings {
  const s = emptySettings();
  const key = (k: string) => `annotation ${k}`;
  addCidrs(s, key(ANNOTATIONS.excludeOutboundCidrs), a[ANNOTATIONS.excludeOutboundCidrs]);
  addPortRanges(s, key(ANNOTATIONS.excludeOutboundPorts), a[ANNOTATIONS.excludeOutboundPorts], 'outboundPorts');
  addPortRanges(s, key(ANNOTATIONS.excludeInboundPorts), a[ANNOTATIONS.excludeInboundPorts], 'inboundPorts');
  return s;
}

const notForeign = 'mesh custom recognises only containers that match its own templates';

export const custom: MeshProfile = {
  name: 'custom',
  title: 'meshgate (custom templates)',
  companion: false,
  names: { proxy: 'meshgate-proxy', init: 'meshgate-init', validator: 'meshgate-validate' },
  // meshgate's per-pod annotations (exemptions, proxy resources), which only this profile reads.
  annotations: Object.values(ANNOTATIONS),
  optOut: () => undefined,
  annotationSettings,
  judgeProxy: () => notForeign,
  judgeInit: () => ({ problem: notForeign }),
  judgeValidator: () => notForeign,
  cniSkips: () => undefined,
  statusOps: () => [],
};
