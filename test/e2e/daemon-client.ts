/**
 * The daemons' own Kubernetes client (src/kube/api) for what a test's client-node KubeConfig points at, as the same
 * identity: the kubeconfig goes through the daemons' kubeconfig reader, and an ImpersonatingKubeConfig's identity
 * becomes the kubeconfig's `as`, `as-groups` and `as-user-extra`, sent as the same Impersonate-* headers.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { accessFromDocument } from '../../src/kube/api/access.ts';
import { KubeClient, type ClientOptions } from '../../src/kube/api/client.ts';
import { ImpersonatingKubeConfig } from './impersonate.ts';

export function daemonClient(kc: KubeConfig, options?: ClientOptions): KubeClient {
  const doc = JSON.parse(kc.exportConfig()) as { users?: Array<{ user?: Record<string, unknown> }> };
  if (kc instanceof ImpersonatingKubeConfig) {
    const { user, group, extra = {} } = kc.identity;
    for (const u of doc.users ?? []) {
      u.user = {
        ...u.user,
        as: user,
        'as-groups': group ? [group] : [],
        'as-user-extra': Object.fromEntries(Object.entries(extra).map(([k, v]) => [k, [v]])),
      };
    }
  }
  return new KubeClient(accessFromDocument(doc, 'the test kubeconfig'), options);
}
