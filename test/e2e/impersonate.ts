/**
 * The admin kubeconfig acting as someone else (the apiserver's impersonation headers), so tests exercise RBAC and
 * admission policies exactly as a component's service account, a kubelet or an operator would meet them.
 * Watches apply the same headers (client-node's Watch authenticates through applySecurityAuthentication).
 */
import { KubeConfig, RbacAuthorizationV1Api, type V1PolicyRule } from '@kubernetes/client-node';
import { describeError } from './harness/wait.ts';

export interface Identity {
  user: string;
  /** One group: client-node sends one value per header, and the apiserver does not split a comma-joined one. */
  group?: string;
  /** Extra user info, e.g. the node-name claim of a pod-bound service-account token. */
  extra?: Record<string, string>;
}

export class ImpersonatingKubeConfig extends KubeConfig {
  readonly identity: Identity;
  constructor(admin: KubeConfig, identity: Identity) {
    super();
    this.identity = identity;
    this.loadFromString(admin.exportConfig());
  }

  override async applySecurityAuthentication(context: Parameters<KubeConfig['applySecurityAuthentication']>[0]) {
    await super.applySecurityAuthentication(context);
    context.setHeaderParam('Impersonate-User', this.identity.user);
    if (this.identity.group) context.setHeaderParam('Impersonate-Group', this.identity.group);
    for (const [k, v] of Object.entries(this.identity.extra ?? {}))
      context.setHeaderParam(`Impersonate-Extra-${encodeURIComponent(k)}`, v);
  }
}

/** RBAC binds meshgate's roles to the service account by its user name; no group is needed. */
export const serviceAccount = (namespace: string, name: string): Identity => ({
  user: `system:serviceaccount:${namespace}:${name}`,
});

/** A kubelet as the Node authorizer and NodeRestriction know it. */
export const kubelet = (node: string): Identity => ({ user: `system:node:${node}`, group: 'system:nodes' });

/** The claim a pod-bound service-account token carries: the node its pod runs on. */
export const NODE_CLAIM = 'authentication.kubernetes.io/node-name';

/** The admin kubeconfig acting as `who`, with a token bound to a pod on `node` when one is given. */
export const impersonate = (admin: KubeConfig, who: Identity, node?: string): ImpersonatingKubeConfig =>
  new ImpersonatingKubeConfig(admin, node ? { ...who, extra: { ...who.extra, [NODE_CLAIM]: node } } : who);

/** A ClusterRole `name` with `rules`, bound to the user `who`: someone RBAC alone would let act. */
export async function grantClusterRole(admin: KubeConfig, name: string, rules: V1PolicyRule[], who: Identity) {
  const rbac = admin.makeApiClient(RbacAuthorizationV1Api);
  await rbac.createClusterRole({ body: { metadata: { name }, rules } });
  await rbac.createClusterRoleBinding({
    body: {
      metadata: { name },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
      subjects: [{ kind: 'User', name: who.user, apiGroup: 'rbac.authorization.k8s.io' }],
    },
  });
}

/** 'allowed', or the API error in one line: what tests of RBAC and admission policies compare. */
export const outcome = (call: Promise<unknown>): Promise<string> =>
  call.then(
    () => 'allowed',
    (err) => describeError(err),
  );

/**
 * In `namespace`, a Role `name` with `rules` (or, with `clusterRole`, that ClusterRole, e.g. the built-in `edit`),
 * bound to the user `who`: what a namespace's RoleBinding grants a team.
 */
export async function grantRole(
  admin: KubeConfig,
  namespace: string,
  name: string,
  grant: { rules: V1PolicyRule[] } | { clusterRole: string },
  who: Identity,
) {
  const rbac = admin.makeApiClient(RbacAuthorizationV1Api);
  if ('rules' in grant)
    await rbac.createNamespacedRole({ namespace, body: { metadata: { name }, rules: grant.rules } });
  await rbac.createNamespacedRoleBinding({
    namespace,
    body: {
      metadata: { name },
      roleRef: {
        apiGroup: 'rbac.authorization.k8s.io',
        kind: 'rules' in grant ? 'Role' : 'ClusterRole',
        name: 'rules' in grant ? name : grant.clusterRole,
      },
      subjects: [{ kind: 'User', name: who.user, apiGroup: 'rbac.authorization.k8s.io' }],
    },
  });
}

/** The Role a namespace admin may be given over their own Namespace object (the apiserver scopes it there). */
export const EDIT_OWN_NAMESPACE: V1PolicyRule[] = [
  { apiGroups: [''], resources: ['namespaces', 'namespaces/status'], verbs: ['get', 'patch'] },
];
