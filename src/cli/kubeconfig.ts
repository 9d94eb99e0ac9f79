/**
 * Cluster credentials for the commands that talk to a cluster (`check`, `uninstall`), found the way kubectl finds
 * them. Usage errors (exit 2) name the flag or file that was wrong.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { UsageError } from '../util/args.ts';
import type { CliIO } from './io.ts';

const IN_CLUSTER_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';

/** Like kubectl: --kubeconfig, else $KUBECONFIG (its first file), else ~/.kube/config, else the service account. */
export function kubeConfig(
  f: { kubeconfig?: string; context?: string },
  env: CliIO['env'],
): { kc: KubeConfig; inCluster: boolean } {
  const kc = new KubeConfig();
  const home = env.HOME ? join(env.HOME, '.kube', 'config') : undefined;
  const file =
    f.kubeconfig ?? env.KUBECONFIG?.split(':').find((p) => p !== '') ?? (home && existsSync(home) ? home : undefined);
  let inCluster = false;
  if (file) {
    if (!existsSync(file)) throw new UsageError(`kubeconfig ${file} does not exist`);
    try {
      kc.loadFromFile(file);
    } catch (err) {
      throw new UsageError(`kubeconfig ${file}: ${(err as Error).message}`);
    }
  } else if (env.KUBERNETES_SERVICE_HOST && existsSync(IN_CLUSTER_TOKEN)) {
    kc.loadFromCluster();
    inCluster = true;
  } else {
    throw new UsageError('no cluster credentials: pass --kubeconfig FILE, set $KUBECONFIG, or run in a cluster');
  }
  if (f.context) {
    if (!kc.getContextObject(f.context))
      throw new UsageError(
        `--context ${f.context}: no such context (known: ${
          kc
            .getContexts()
            .map((c) => c.name)
            .join(', ') || 'none'
        })`,
      );
    kc.setCurrentContext(f.context);
  }
  if (!kc.getCurrentCluster())
    throw new UsageError(`the kubeconfig has no cluster for context "${kc.getCurrentContext()}"`);
  return { kc, inCluster };
}
