/** SecretStore on the API: one Secret, optimistic concurrency through resourceVersion. */
import type { KubeClient } from './api/client.ts';
import type { KubeSecret } from './api/objects.ts';
import { core } from './api/paths.ts';
import { statusCode } from './errors.ts';
import type { SecretData, SecretStore } from '../tls/secret-source.ts';

const REQUIRED = ['ca.crt', 'ca.key', 'tls.crt', 'tls.key'] as const;
/** Present only during a CA rotation (tls/trust-state.ts). */
const OPTIONAL = ['next-ca.key', 'replicas.json'] as const;

export function kubeSecretStore(client: KubeClient, namespace: string, name: string): SecretStore {
  const secrets = core('secrets', { namespace });
  const secret = core('secrets', { namespace, name });
  const body = (data: SecretData, resourceVersion?: string): KubeSecret => ({
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
  const written = async (write: () => Promise<KubeSecret>): Promise<string | undefined> => {
    try {
      return (await write()).metadata?.resourceVersion ?? '';
    } catch (err) {
      if (statusCode(err) === 409) return undefined;
      throw err;
    }
  };
  return {
    async read() {
      try {
        const s = await client.get<KubeSecret>(secret);
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
        if (statusCode(err) === 404) return undefined;
        throw err;
      }
    },
    create: (data) => written(() => client.create<KubeSecret>(secrets, body(data))),
    replace: (data, resourceVersion) => written(() => client.update<KubeSecret>(secret, body(data, resourceVersion))),
  };
}
