/**
 * The workloads the e2e suites create, built one way: a Deployment or DaemonSet `name` whose pods are labelled
 * app=<name> (plus `labels`), selected by that label, and run `spec`; and the wait for a DaemonSet to be ready.
 */
import type { AppsV1Api, V1DaemonSet, V1Deployment, V1PodSpec } from '@kubernetes/client-node';
import { waitFor } from './harness/index.ts';

/** A container's securityContext that passes Pod Security restricted's container checks: UID/GID 1000, no escalation. */
export const UNPRIVILEGED = {
  runAsNonRoot: true,
  runAsUser: 1000,
  runAsGroup: 1000,
  allowPrivilegeEscalation: false,
  capabilities: { drop: ['ALL'] },
};

export function deployment(
  name: string,
  spec: V1PodSpec | undefined,
  replicas = 1,
  labels: Record<string, string> = {},
): V1Deployment {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name, ...labels } }, spec },
    },
  };
}

export function daemonSet(name: string, spec: V1PodSpec | undefined): V1DaemonSet {
  return {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name },
    spec: { selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec } },
  };
}

/**
 * Waits until DaemonSet `namespace/name` has a ready pod on each of `nodes` nodes (`updated`: and each of them of
 * its current template, after a rollout restart).
 */
export function daemonSetReady(
  apps: AppsV1Api,
  namespace: string,
  name: string,
  nodes: number,
  opts: { updated?: boolean; timeoutMs: number },
): Promise<boolean> {
  return waitFor(
    `${opts.updated ? 'the restarted' : 'the'} DaemonSet ${namespace}/${name} ready on ${nodes} nodes`,
    async () => {
      const ds = await apps.readNamespacedDaemonSet({ name, namespace });
      const scheduled = opts.updated ? ds.status?.updatedNumberScheduled : ds.status?.desiredNumberScheduled;
      return scheduled === nodes && ds.status?.numberReady === nodes;
    },
    { timeoutMs: opts.timeoutMs },
  );
}
