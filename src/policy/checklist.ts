/**
 * Promotion is a checklist (issue 31 §4): for a pod enforce would refuse, every change that makes it admissible, at
 * once — not only the first refusal, as the webhook's message says it — each naming the container, the field as the
 * pod spec spells it (`securityContext.runAsUser`) or the setting of meshgate's config, and what to set. `meshgate
 * check --audit` groups them per workload (src/check/pod-groups.ts) and `meshgate explain` prints them under a
 * refusal, so a namespace can be made ready in one pass. Pure; the same rules as the webhooks (screen.ts, rules.ts,
 * escalation.ts), read for every container.
 */
import type { Compiled } from '../config/compile.ts';
import { INJECT_LABEL } from '../contract/names.ts';
import type { ReasonCode } from '../contract/reasons.ts';
import type { Container, Pod } from '../contract/pod.ts';
import { holdsCapability } from '../pod/capabilities.ts';
import { addedCapabilities, effectiveGroup, effectiveUser } from '../pod/security.ts';
import { privilegesIn } from './escalation.ts';
import { describeFound, identifyPod } from './identify.ts';

export interface Change {
  /** Where to change it: "container app", "init container warmup", "the pod", "meshgate's config". */
  readonly where: string;
  /** The field as the pod spec spells it, or the config key. */
  readonly field: string;
  /** What to do, completing "<where> <field>: …". */
  readonly to: string;
  readonly reason: ReasonCode;
}

/** One line: `container app: securityContext.runAsUser: set a UID other than 1337 [proxy_escalation]`. */
export function changeText(c: Change): string {
  return `${c.where}: ${c.field}: ${c.to} [${c.reason}]`;
}

const CONFIG = "meshgate's config";

function optOutChanges(pod: Pod, cfg: Compiled): Change[] {
  if (cfg.config.injection.allowPodOptOut) return [];
  const out: Change[] = [];
  const setting: Change = {
    where: CONFIG,
    field: 'injection.allowPodOptOut',
    to: 'or set it true where unmeshed pods are acceptable',
    reason: 'opt_out_refused',
  };
  if (cfg.profile.gateway?.(pod)) return out;
  if (pod.metadata?.labels?.[INJECT_LABEL] === 'false')
    out.push({
      where: 'the pod',
      field: `metadata.labels.${INJECT_LABEL}`,
      to: 'remove it',
      reason: 'opt_out_refused',
    });
  const theirs = cfg.profile.optOut(pod);
  if (theirs) out.push({ where: 'the pod', field: theirs, to: 'remove it', reason: 'opt_out_refused' });
  const none = cfg.profile.redirectOptOut?.(pod);
  if (none)
    out.push({ where: 'the pod', field: none.what, to: 'remove it (nothing is redirected)', reason: none.code });
  if (pod.spec.hostNetwork)
    out.push({
      where: 'the pod',
      field: 'spec.hostNetwork',
      to: 'remove it: a pod on the host network cannot be meshed (or run it outside the guarded namespaces)',
      reason: 'host_network',
    });
  return out.length ? [...out, setting] : out;
}

/** Every app container's changes under the rules that apply in `namespace`. */
function appChanges(pod: Pod, namespace: string, cfg: Compiled, apps: ReadonlyArray<{ c: Container; where: string }>) {
  const { proxyUid: uid, proxyGid: gid } = cfg.identity;
  const out: Change[] = [];
  const sc = pod.spec.securityContext;
  const otherId = (what: string, id: number) =>
    `set a ${what} other than ${id}, the proxy's, which the redirect exempts`;
  if (sc?.runAsUser === uid)
    out.push({
      where: 'the pod',
      field: 'spec.securityContext.runAsUser',
      to: otherId('UID', uid),
      reason: 'proxy_identity',
    });
  if (gid !== undefined && sc?.runAsGroup === gid)
    out.push({
      where: 'the pod',
      field: 'spec.securityContext.runAsGroup',
      to: otherId('GID', gid),
      reason: 'proxy_identity',
    });
  const { level, relaxed } = privilegesIn(cfg.config.apps, namespace);
  for (const { c, where } of apps) {
    const add = (field: string, to: string, reason: ReasonCode) => out.push({ where, field, to, reason });
    if (c.securityContext?.runAsUser === uid) add('securityContext.runAsUser', otherId('UID', uid), 'proxy_identity');
    if (gid !== undefined && c.securityContext?.runAsGroup === gid)
      add('securityContext.runAsGroup', otherId('GID', gid), 'proxy_identity');
    if (c.securityContext?.privileged === true) add('securityContext.privileged', 'set false', 'redirect_tamper');
    const added = addedCapabilities(c);
    const rewrite = ['ALL', 'NET_ADMIN', 'SYS_ADMIN'].filter((cap) => added.has(cap));
    if (rewrite.length) add('securityContext.capabilities.add', `remove ${rewrite.join(', ')}`, 'redirect_tamper');
    if (relaxed || level === 'baseline') continue;
    if (level === 'node') {
      const stated = ['SETUID', 'SETGID'].filter((cap) => added.has(cap) && holdsCapability(c, cap));
      if (stated.length) add('securityContext.capabilities.add', `remove ${stated.join(', ')}`, 'proxy_escalation');
      continue;
    }
    const u = effectiveUser(pod, c);
    if (u === undefined) add('securityContext.runAsUser', `set a UID (not ${uid})`, 'proxy_escalation');
    if (gid !== undefined && effectiveGroup(pod, c) === undefined)
      add('securityContext.runAsGroup', `set a GID (not ${gid})`, 'proxy_escalation');
    if (c.securityContext?.allowPrivilegeEscalation !== false)
      add('securityContext.allowPrivilegeEscalation', 'set false', 'proxy_escalation');
    if (['SETUID', 'SETGID', 'NET_RAW'].some((cap) => holdsCapability(c, cap)))
      add(
        'securityContext.capabilities.drop',
        'add ALL (SETUID, SETGID and NET_RAW must not be held; add back only what it needs)',
        'proxy_escalation',
      );
  }
  if (!relaxed && level !== 'baseline' && out.some((c) => c.reason === 'proxy_escalation'))
    out.push({
      where: CONFIG,
      field: 'apps.baselineNamespaces',
      to: `or list ${namespace} while its workloads cannot comply (admitted with a warning)`,
      reason: 'proxy_escalation',
    });
  return out;
}

/**
 * The changes that make `pod` admissible in `namespace` at enforce. Empty when no rule of the pod's own spec refuses
 * it (a refusal for its node, or a value the webhook's message names, is fixed as that message says).
 */
export function promotionChecklist(pod: Pod, namespace: string, cfg: Compiled): Change[] {
  const out = optOutChanges(pod, cfg);
  const mesh = identifyPod(pod, cfg);
  for (const i of mesh.impostors)
    out.push({
      where: describeFound(i),
      field: 'name',
      to:
        `rename it (${i.problem}); if it is the mesh's own from a registry meshgate does not know, add that ` +
        'repository to config.recognisedImages instead',
      reason: 'impostor_container',
    });
  const apps = mesh.apps.map((f) => ({ c: f.container, where: describeFound(f) }));
  return [...out, ...appChanges(pod, namespace, cfg, apps)];
}
