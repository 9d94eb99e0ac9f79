/**
 * Kubernetes credentials: an explicit kubeconfig, else in-cluster service account, else none (the server then
 * runs on the embedded default with node facts from a file).
 */
import { existsSync } from 'node:fs';
import { KubeConfig } from '@kubernetes/client-node';

const IN_CLUSTER_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';

export function loadKubeConfig(opts: { kubeconfig?: string; inCluster: boolean }): KubeConfig | undefined {
  const kc = new KubeConfig();
  if (opts.kubeconfig) {
    kc.loadFromFile(opts.kubeconfig);
    return kc;
  }
  if (opts.inCluster && existsSync(IN_CLUSTER_TOKEN)) {
    kc.loadFromCluster();
    return kc;
  }
  return undefined;
}
