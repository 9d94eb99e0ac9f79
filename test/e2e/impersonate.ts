/**
 * The admin kubeconfig acting as someone else (the apiserver's impersonation headers), so tests exercise RBAC and
 * admission policies exactly as a component's service account, a kubelet or an operator would meet them.
 * Watches apply the same headers (client-node's Watch authenticates through applySecurityAuthentication).
 */
import { KubeConfig } from '@kubernetes/client-node';

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
