/**
 * The daemons' cluster connection: an explicit kubeconfig, else the in-cluster service account (when
 * KUBERNETES_SERVICE_HOST is set and the token is mounted), else none (the webhook then runs on the embedded default
 * with node facts from a file). The client is meshgate's own (src/kube/api): @kubernetes/client-node, 42–48 MiB of
 * a daemon's RSS, stays with the CLI's `meshgate check`, which needs kubeconfig exec plugins and OIDC.
 */
import { inClusterAccess, kubeconfigAccess } from './api/access.ts';
import { KubeClient } from './api/client.ts';

export async function connectCluster(opts: {
  kubeconfig?: string;
  /** The process environment, when in-cluster credentials may be used; undefined: only a kubeconfig. */
  env?: Readonly<Record<string, string | undefined>>;
}): Promise<KubeClient | undefined> {
  const access = opts.kubeconfig
    ? await kubeconfigAccess(opts.kubeconfig)
    : opts.env
      ? inClusterAccess(opts.env)
      : undefined;
  return access && new KubeClient(access);
}
