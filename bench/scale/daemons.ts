/**
 * How the bench starts meshgate against its cluster: the two webhook configurations (registered once the measured
 * webhook is ready), and the webhook's and repair controller's arguments as the chart passes them.
 */
import { group } from '../../src/kube/api/paths.ts';
import type { daemonClient } from '../../test/e2e/daemon-client.ts';
import { OPT_IN } from './objects.ts';

export const WEBHOOK_CONFIG = 'meshgate';

/** meshgate's two webhook configurations: the apiserver calls the measured webhook (failurePolicy Ignore otherwise). */
export async function webhookConfigs(client: ReturnType<typeof daemonClient>, port: number, what: 'create' | 'delete') {
  for (const kind of ['mutatingwebhookconfigurations', 'validatingwebhookconfigurations']) {
    const path = group('admissionregistration.k8s.io/v1', kind);
    // Gone first either way: a cluster restored from a snapshot (snapshot.ts) may hold a previous run's.
    await client
      .delete(group('admissionregistration.k8s.io/v1', kind, { name: WEBHOOK_CONFIG }))
      .catch(() => undefined);
    if (what === 'delete') continue;
    const route = kind.startsWith('mutating') ? 'mutate' : 'validate';
    await client.create(path, {
      metadata: { name: WEBHOOK_CONFIG },
      webhooks: [
        {
          name: 'pods.meshgate.io',
          admissionReviewVersions: ['v1'],
          sideEffects: 'None',
          failurePolicy: 'Ignore',
          timeoutSeconds: 10,
          clientConfig: { url: `https://127.0.0.1:${port}/${route}` },
          namespaceSelector: { matchLabels: OPT_IN },
          rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
        },
      ],
    });
  }
}

export function webhookArgs(config: string, kubeconfig: string, port: number, keys: string): string[] {
  return [
    'serve',
    `--config=${config}`,
    `--kubeconfig=${kubeconfig}`,
    `--port=${port}`,
    '--host=127.0.0.1',
    '--cert-secret=meshgate-tls',
    `--webhook-config=${WEBHOOK_CONFIG}`,
    '--drain-seconds=0',
    '--webhook-timeout-seconds=10',
    `--mark-key-dir=${keys}`,
    '--log-level=info',
  ];
}

export function repairArgs(config: string, kubeconfig: string, port: number, keys: string): string[] {
  return [
    'repair-controller',
    `--config=${config}`,
    `--kubeconfig=${kubeconfig}`,
    '--lease-name=meshgate-repair-controller',
    `--port=${port}`,
    '--host=127.0.0.1',
    `--webhook-config=${WEBHOOK_CONFIG}`,
    `--mark-key-dir=${keys}`,
    '--unmeshed-pods=report',
    '--log-level=info',
  ];
}
