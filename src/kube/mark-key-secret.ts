/**
 * Creates the admission mark's Secret (src/mark/keys.ts) with a fresh random key when it does not exist: what the
 * webhook does at start, so the key is made in the cluster — never rendered by `helm template` into a manifest
 * that GitOps tools store and re-render with a new key each time. Create only: an existing Secret (made by another
 * replica, an earlier install, or the admin) is never read or changed here; the kubelet mounts it.
 */
import type { KubeClient } from './api/client.ts';
import type { KubeSecret } from './api/objects.ts';
import { core } from './api/paths.ts';
import { statusCode } from './errors.ts';
import { KEY_FILES, generateKey } from '../mark/keys.ts';

/** `created`: this call made the Secret, with `key`; `exists`: it was there already. */
export type MarkSecretResult = { created: true; key: Buffer } | { created: false };

export async function ensureMarkKeySecret(
  client: KubeClient,
  namespace: string,
  name: string,
): Promise<MarkSecretResult> {
  const key = generateKey();
  try {
    await client.create<KubeSecret>(core('secrets', { namespace }), {
      metadata: {
        name,
        namespace,
        labels: { 'app.kubernetes.io/managed-by': 'meshgate' },
        annotations: {
          'meshgate.io/purpose':
            'signs meshgate.io/admitted on the pods meshgate admits; rotation: docs/security.md (the admission mark)',
        },
      },
      type: 'Opaque',
      data: { [KEY_FILES.sign]: key.toString('base64') },
    } satisfies KubeSecret);
    return { created: true, key };
  } catch (err) {
    if (statusCode(err) === 409) return { created: false };
    throw err;
  }
}
