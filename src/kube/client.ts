/**
 * Kubernetes credentials: an explicit kubeconfig, else in-cluster service account, else none (the server then
 * runs on the embedded default with node facts from a file). The client library is loaded only when there are
 * credentials to use: it is the largest module meshgate has (~80 MiB resident).
 */
import { existsSync } from 'node:fs';
import type { KubeConfig } from '@kubernetes/client-node';

const IN_CLUSTER_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';

export async function loadKubeConfig(opts: {
  kubeconfig?: string;
  inCluster: boolean;
}): Promise<KubeConfig | undefined> {
  const inCluster = !opts.kubeconfig && opts.inCluster && existsSync(IN_CLUSTER_TOKEN);
  if (!opts.kubeconfig && !inCluster) return undefined;
  const { KubeConfig } = await import('@kubernetes/client-node');
  const kc = new KubeConfig();
  if (opts.kubeconfig) kc.loadFromFile(opts.kubeconfig);
  else kc.loadFromCluster();
  return kc;
}
