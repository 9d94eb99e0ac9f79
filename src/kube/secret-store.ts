/** SecretStore on the API: one Secret, optimistic concurrency through resourceVersion. */
import { ApiException, CoreV1Api, type KubeConfig, type V1Secret } from '@kubernetes/client-node';
import type { SecretData, SecretStore } from '../tls/secret-source.ts';

const REQUIRED = ['ca.crt', 'ca.key', 'tls.crt', 'tls.key'] as const;
/** Present only during a CA rotation (tls/trust-state.ts). */
const OPTIONAL = ['next-ca.key', 'replicas.json'] as const;

function conflict(err: unknown): boolean {
  return err instanceof ApiException && err.code === 409;
}

export function kubeSecretStore(kc: KubeConfig, namespace: string, name: string): SecretStore {
  const api = kc.makeApiClient(CoreV1Api);
  const body = (data: SecretData, resourceVersion?: string): V1Secret => ({
    metadata: { name, namespace, resourceVersion, labels: { 'app.kubernetes.io/managed-by': 'meshgate' } },
    type: 'kubernetes.io/tls',
    // A replace sends every key it wants kept: an optional key left out is removed from the Secret.
    data: Object.fromEntries(
      [...REQUIRED, ...OPTIONAL].flatMap((k) =>
        data[k] === undefined ? [] : [[k, Buffer.from(data[k]).toString('base64')]],
      ),
    ),
  });
  /** The write's new resourceVersion, or undefined when another replica's write came first. */
  const written = async (write: () => Promise<V1Secret>): Promise<string | undefined> => {
    try {
      return (await write()).metadata?.resourceVersion ?? '';
    } catch (err) {
      if (conflict(err)) return undefined;
      throw err;
    }
  };
  return {
    async read() {
      try {
        const s = await api.readNamespacedSecret({ name, namespace });
        const d = s.data ?? {};
        const missing = REQUIRED.filter((k) => !d[k]);
        if (missing.length)
          throw new Error(
            `Secret ${namespace}/${name} lacks ${missing.join(', ')}; delete it and meshgate creates a new one`,
          );
        const keys = [...REQUIRED, ...OPTIONAL].filter((k) => d[k] !== undefined);
        const data = Object.fromEntries(
          keys.map((k) => [k, Buffer.from(d[k], 'base64').toString('utf8')]),
        ) as unknown as SecretData;
        return { data, resourceVersion: s.metadata?.resourceVersion ?? '' };
      } catch (err) {
        if (err instanceof ApiException && err.code === 404) return undefined;
        throw err;
      }
    },
    create: (data) => written(() => api.createNamespacedSecret({ namespace, body: body(data) })),
    replace: (data, resourceVersion) =>
      written(() => api.replaceNamespacedSecret({ name, namespace, body: body(data, resourceVersion) })),
  };
}
