/**
 * Issue 31 §4: for a pod enforce would refuse, every change that makes it admissible, at once — the container, the
 * field as the pod spec spells it, what to set — where the webhook's message names only the first refusal. Each row
 * is a pod with several problems; applying the listed changes must make it admissible (checked by the webhooks'
 * own rules), so the list is complete, not just plausible.
 */
import { describe, expect, it } from 'vitest';
import { type Change, changeText, promotionChecklist } from '../../src/policy/checklist.ts';
import { checkPosture } from '../../src/policy/posture.ts';
import type { Container, Pod } from '../../src/contract/pod.ts';
import type { MeshName } from '../../src/mesh/types.ts';
import { cfg, input, istioPod, verified } from './mutate/fixtures.ts';

const app = (securityContext: Record<string, unknown>, name = 'app'): Container => ({
  name,
  image: 'nginx',
  securityContext,
});
const withApps = (containers: Container[], spec: Partial<Pod['spec']> = {}) =>
  istioPod({ containers: [...containers, istioPod().spec.containers[1]], nodeName: 'good', ...spec });

/** The changes applied as an operator would: each field set as asked (a valid, non-proxy identity; ALL dropped). */
function apply(p: Pod, changes: readonly Change[]): Pod {
  const out = structuredClone(p);
  const all = [...(out.spec.initContainers ?? []), ...out.spec.containers, ...(out.spec.ephemeralContainers ?? [])];
  for (const c of changes) {
    if (c.where === "meshgate's config") continue;
    if (c.where === 'the pod') {
      if (c.field === 'spec.hostNetwork') delete out.spec.hostNetwork;
      if (c.field.startsWith('spec.securityContext.')) {
        const k = c.field.slice('spec.securityContext.'.length) as 'runAsUser' | 'runAsGroup';
        out.spec.securityContext = { ...out.spec.securityContext, [k]: 4000 };
      }
      continue;
    }
    const name = c.where.replace(/^(ephemeral |init )?container /, '');
    const target = all.find((x) => x.name === name)!;
    target.securityContext = target.securityContext ?? {};
    const sc = target.securityContext;
    if (c.field === 'securityContext.runAsUser') sc.runAsUser = 4000;
    if (c.field === 'securityContext.runAsGroup') sc.runAsGroup = 4000;
    if (c.field === 'securityContext.allowPrivilegeEscalation') sc.allowPrivilegeEscalation = false;
    if (c.field === 'securityContext.privileged') sc.privileged = false;
    if (c.field === 'securityContext.capabilities.drop') sc.capabilities = { ...sc.capabilities, drop: ['ALL'] };
    if (c.field === 'securityContext.capabilities.add') {
      const remove = c.to.replace(/^remove /, '').split(', ');
      sc.capabilities = { ...sc.capabilities, add: sc.capabilities?.add?.filter((x) => !remove.includes(x)) };
    }
  }
  return out;
}

/** [case, mesh, privileges, pod, the changes as text] */
const rows: Array<[string, MeshName, 'node' | 'restricted', Pod, string[]]> = [
  [
    'default: the proxy UID on the pod, NET_ADMIN and SETUID added on two containers',
    'istio',
    'node',
    withApps(
      [app({ capabilities: { add: ['NET_ADMIN'] } }), app({ capabilities: { add: ['SETUID', 'SETGID'] } }, 'worker')],
      { securityContext: { runAsUser: 1337 } },
    ),
    [
      "the pod: spec.securityContext.runAsUser: set a UID other than 1337, the proxy's, which the redirect exempts [proxy_identity]",
      'container app: securityContext.capabilities.add: remove NET_ADMIN [redirect_tamper]',
      'container worker: securityContext.capabilities.add: remove SETUID, SETGID [proxy_escalation]',
      "meshgate's config: apps.baselineNamespaces: or list demo while its workloads cannot comply (admitted with a warning) [proxy_escalation]",
    ],
  ],
  [
    'restricted: every field the rule asks, for each container, init containers too',
    'istio',
    'restricted',
    istioPod({
      nodeName: 'good',
      initContainers: [...istioPod().spec.initContainers!, app({ runAsUser: 0 }, 'warmup')],
      containers: [app({}), istioPod().spec.containers[1]],
    }),
    [
      'init container warmup: securityContext.runAsGroup: set a GID (not 1337) [proxy_escalation]',
      'init container warmup: securityContext.allowPrivilegeEscalation: set false [proxy_escalation]',
      'init container warmup: securityContext.capabilities.drop: add ALL (SETUID, SETGID and NET_RAW must not be held; add back only what it needs) [proxy_escalation]',
      'container app: securityContext.runAsUser: set a UID (not 1337) [proxy_escalation]',
      'container app: securityContext.runAsGroup: set a GID (not 1337) [proxy_escalation]',
      'container app: securityContext.allowPrivilegeEscalation: set false [proxy_escalation]',
      'container app: securityContext.capabilities.drop: add ALL (SETUID, SETGID and NET_RAW must not be held; add back only what it needs) [proxy_escalation]',
      "meshgate's config: apps.baselineNamespaces: or list demo while its workloads cannot comply (admitted with a warning) [proxy_escalation]",
    ],
  ],
  [
    'a hostNetwork pod: the field, or the setting',
    'istio',
    'node',
    { ...withApps([app({})]), spec: { ...withApps([app({})]).spec, hostNetwork: true } },
    [
      'the pod: spec.hostNetwork: remove it: a pod on the host network cannot be meshed (or run it outside the guarded namespaces) [host_network]',
      "meshgate's config: injection.allowPodOptOut: or set it true where unmeshed pods are acceptable [opt_out_refused]",
    ],
  ],
  ['an admissible pod needs nothing', 'istio', 'node', withApps([app({})]), []],
];

describe('promotionChecklist lists every change, not only the first refusal', () => {
  it.each(rows)('%s', (_n, mesh, privileges, p, expected) => {
    const c = cfg(mesh, { apps: { privileges } });
    const changes = promotionChecklist(p, 'demo', c);
    expect(changes.map(changeText)).toEqual(expected);
    if (mesh === 'istio') expect(checkPosture(input(apply(p, changes)), verified, c)).toMatchObject({ ok: true });
  });

  it('names the impostor and both ways out', () => {
    const p = withApps([app({})]);
    p.spec.containers[1] = { ...p.spec.containers[1], image: 'evil/proxy:1' };
    expect(promotionChecklist(p, 'demo', cfg('istio')).map(changeText)).toEqual([
      expect.stringMatching(
        /^container istio-proxy: name: rename it \(image evil\/proxy:1 is not one of the recognised proxy images .*add that repository to config.recognisedImages instead \[impostor_container\]$/,
      ),
    ]);
  });
});
