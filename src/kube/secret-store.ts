/** SecretStore on the API: one Secret, optimistic concurrency through resourceVersion. */
import { ApiException, CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import type { SecretData, SecretStore } from '../tls/secret-source.ts';

const KEYS = ['ca.crt', 'ca.key', 'tls.crt', 'tls.key'] as const;

function conflict(err: unknown): boolean {
  return err instanceof ApiException && err.code === 409;
}

export function kubeSecretStore(kc: KubeConfig, namespace: string, name: string): SecretStore {
  const api = kc.makeApiClient(CoreV1Api);
  const body = (data: SecretData, resourceVersion?: string) => ({
    metadata: { name, namespace, resourceVersion, labels: { 'app.kubernetes.io/managed-by': 'meshgate' } },
    type: 'kubernetes.io/tls',
    data: Object.fromEntries(KEYS.map((k) => [k, Buffer.from(data[k]).toString('base64')])),
  });
  return {
    async read() {
      try {
        const s = await api.readNamespacedSecret({ name, namespace });
        const d = s.data ?? {};
        if (!KEYS.every((k) => d[k])) return undefined;
        const data = Object.fromEntries(KEYS.map((k) => [k, Buffer.from(d[k], 'base64').toString('utf8')])) as unknown as SecretData;
        return { data, resourceVersion: s.metadata?.resourceVersion ?? '' };
      } catch (err) {
        if (err instanceof ApiException && err.code === 404) return undefined;
        throw err;
      }
    },
    async create(data) {
      try {
        await api.createNamespacedSecret({ namespace, body: body(data) });
        return true;
      } catch (err) {
        if (conflict(err)) return false;
        throw err;
      }
    },
    async replace(data, resourceVersion) {
      try {
        await api.replaceNamespacedSecret({ name, namespace, body: body(data, resourceVersion) });
        return true;
      } catch (err) {
        if (conflict(err)) return false;
        throw err;
      }
    },
  };
}
