/**
 * meshgate's own init container (mesh custom) gets its per-pod exemptions as environment variables, which the
 * template's args reference as $(MESHGATE_EXCLUDE_…) and the kubelet expands. Reading them back judges the container
 * by what it will really be told, whatever the pod's annotations say later.
 */
import { EXCLUSION_ENV } from './custom.ts';
import { addCidrs, addPortRanges, emptySettings, type RedirectSettings } from './types.ts';
import type { Container, EnvVar } from '../contract/pod.ts';

const NAMES = Object.keys(EXCLUSION_ENV) as Array<keyof typeof EXCLUSION_ENV>;

/** The env meshgate gives its init container for the given annotation values (absent = empty). */
export function exclusionEnv(annotations: Readonly<Record<string, string>> | undefined): EnvVar[] {
  return NAMES.map((name) => ({ name, value: annotations?.[EXCLUSION_ENV[name]] ?? '' }));
}

export function ownInitSettings(c: Container): RedirectSettings | { problem: string } {
  const env = c.env ?? [];
  const names = env.map((e) => e.name);
  if (
    names.length !== NAMES.length ||
    !NAMES.every((n, i) => names[i] === n) ||
    env.some((e) => e.valueFrom !== undefined)
  ) {
    return { problem: `its env ${JSON.stringify(names)} is not the exemptions meshgate sets (${NAMES.join(', ')})` };
  }
  const s = emptySettings();
  const value = (n: keyof typeof EXCLUSION_ENV) => env.find((e) => e.name === n)?.value ?? '';
  const where = (n: string) => `init container env ${n}`;
  addCidrs(s, where('MESHGATE_EXCLUDE_OUTBOUND_CIDRS'), value('MESHGATE_EXCLUDE_OUTBOUND_CIDRS'));
  for (const [n, into] of [
    ['MESHGATE_EXCLUDE_OUTBOUND_PORTS', 'outboundPorts'],
    ['MESHGATE_EXCLUDE_INBOUND_PORTS', 'inboundPorts'],
  ] as const)
    addPortRanges(s, where(n), value(n), into);
  return s;
}
