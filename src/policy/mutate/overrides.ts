/**
 * mesh custom: per-pod annotations that size the injected proxy (meshgate.io/proxy-{cpu,memory}-{request,limit}).
 * Every value is parsed here; an invalid one is a problem naming the annotation and the value, and the pod is
 * denied — never a silent default. Exemptions from the redirect are not here: they are redirect settings, judged
 * by src/policy/exclusions.ts for every profile.
 */
import { ANNOTATIONS } from '../../contract/names.ts';
import type { Resources } from '../../config/types.ts';
import { parseQuantity } from '../../util/values.ts';
import type { DeepReadonly } from '../../util/readonly.ts';

const RESOURCE_ANNOTATIONS: ReadonlyArray<[string, 'requests' | 'limits', 'cpu' | 'memory']> = [
  [ANNOTATIONS.proxyCpuRequest, 'requests', 'cpu'],
  [ANNOTATIONS.proxyCpuLimit, 'limits', 'cpu'],
  [ANNOTATIONS.proxyMemoryRequest, 'requests', 'memory'],
  [ANNOTATIONS.proxyMemoryLimit, 'limits', 'memory'],
];

/** undefined: no override (the template's resources stand); otherwise the resources or the problems. */
export function proxyResources(
  annotations: Readonly<Record<string, string>> | undefined,
  base: DeepReadonly<Resources>,
): undefined | { ok: true; resources: Resources } | { ok: false; problems: string[] } {
  if (!annotations || RESOURCE_ANNOTATIONS.every(([k]) => annotations[k] === undefined)) return undefined;
  const resources = { requests: { ...(base.requests ?? {}) }, limits: { ...(base.limits ?? {}) } };
  const problems: string[] = [];
  for (const [key, section, res] of RESOURCE_ANNOTATIONS) {
    if (annotations[key] === undefined) continue;
    const q = parseQuantity(annotations[key]);
    if (q.ok) resources[section][res] = q.value;
    else problems.push(`annotation ${key}: ${q.error}`);
  }
  return problems.length ? { ok: false, problems } : { ok: true, resources };
}
