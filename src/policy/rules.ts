/**
 * Rules for every container that is not the mesh's own (app, init and ephemeral containers alike), one check per
 * rule in the manner of Pod Security admission's policy checks: each reads field values, never names.
 * - proxy identity: the redirect rules exempt the proxy's UID (and GID); anything else running as it bypasses the
 *   proxy while the validator, under another identity, sees nothing wrong.
 * - network rewrite: a privileged container or one with NET_ADMIN/SYS_ADMIN can flush the redirect rules.
 * UIDs the pod spec leaves to the image cannot be seen at admission (README: threat model).
 */
import type { Compiled } from '../config/compile.ts';
import type { Pod } from '../contract/pod.ts';
import type { MeshIdentity } from '../mesh/types.ts';
import { canRewriteNetwork, effectiveGroup, effectiveUser } from '../pod/security.ts';
import { escalationProblem, privilegesIn, statedEscalationProblem } from './escalation.ts';
import { describeFound, type PodMesh } from './identify.ts';

export interface RuleVerdict {
  reason: 'proxy_identity' | 'redirect_tamper' | 'proxy_escalation';
  message: string;
}

/** The identity the pod's redirect exempts: the configured proxy's, with the GID the pod's own settings add. */
export type Exempt = Pick<MeshIdentity, 'proxyUid' | 'proxyGid'>;

export function proxyIdentityRule(pod: Pod, mesh: PodMesh, id: Exempt): RuleVerdict | undefined {
  const { proxyUid: uid, proxyGid: gid } = id;
  const why = 'whose traffic the redirect rules exempt: only the proxy may run as it';
  const podSc = pod.spec.securityContext;
  if (podSc?.runAsUser === uid)
    return {
      reason: 'proxy_identity',
      message: `the pod's securityContext.runAsUser is ${uid}, the proxy's UID, ${why}`,
    };
  if (gid !== undefined && podSc?.runAsGroup === gid)
    return {
      reason: 'proxy_identity',
      message: `the pod's securityContext.runAsGroup is ${gid}, the proxy's GID, ${why}`,
    };
  for (const f of mesh.apps) {
    if (effectiveUser(pod, f.container) === uid)
      return { reason: 'proxy_identity', message: `${describeFound(f)} runs as UID ${uid}, the proxy's, ${why}` };
    if (gid !== undefined && effectiveGroup(pod, f.container) === gid)
      return { reason: 'proxy_identity', message: `${describeFound(f)} runs as GID ${gid}, the proxy's, ${why}` };
  }
  return undefined;
}

export function networkRewriteRule(mesh: PodMesh): RuleVerdict | undefined {
  for (const f of mesh.apps) {
    const how = canRewriteNetwork(f.container);
    if (how)
      return {
        reason: 'redirect_tamper',
        message:
          `${describeFound(f)} ${how}, so it could remove the pod's redirect rules; ` +
          "only the mesh's own init container may",
      };
  }
  return undefined;
}

/**
 * Who can become the proxy beyond the explicit UID/GID (src/policy/escalation.ts), at the level the namespace is held
 * to: `node` refuses what the spec states (SETUID/SETGID added by name), `restricted` whatever could run as or become
 * the proxy, `baseline` nothing more. In `apps.baselineNamespaces` a finding is a warning instead (a namespace that
 * cannot comply yet), so the pod is admitted and the operator still sees it.
 */
export function escalationRule(
  pod: Pod,
  namespace: string,
  mesh: PodMesh,
  cfg: Compiled,
  id: Exempt,
): { verdict: RuleVerdict } | { warning: string } | undefined {
  const { level, relaxed } = privilegesIn(cfg.config.apps, namespace);
  if (level === 'baseline') return undefined;
  for (const f of mesh.apps) {
    const problem =
      level === 'restricted' ? escalationProblem(pod, f.container, id) : statedEscalationProblem(f.container, id);
    if (!problem) continue;
    const message = `${describeFound(f)} ${problem}`;
    if (relaxed) return { warning: `${message} (allowed here: namespace ${namespace} is in apps.baselineNamespaces)` };
    const where =
      level === 'restricted' && cfg.config.apps.privileges !== 'restricted'
        ? ` (namespace ${namespace} is in apps.restrictedNamespaces)`
        : '';
    return { verdict: { reason: 'proxy_escalation', message: `${message}${where}` } };
  }
  return undefined;
}
