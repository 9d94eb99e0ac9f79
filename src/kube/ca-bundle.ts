/**
 * Keeps the caBundle of meshgate's own Mutating- and ValidatingWebhookConfiguration equal to the CA bundle its
 * serving certificates chain to (one CA, or the old and the new one while a CA rotates). RBAC limits this to
 * those two objects (resourceNames). Each webhook entry is patched only when its bundle differs, so a steady
 * state writes nothing. `caBundleHolds` is what a CA rotation asks before the new CA may sign: does every
 * webhook entry in both configurations already trust it?
 */
import { X509Certificate } from 'node:crypto';
import { splitPem } from '../tls/trust-state.ts';
import type { KubeClient } from './api/client.ts';
import { group } from './api/paths.ts';

type Config = { webhooks?: Array<{ clientConfig?: { caBundle?: string } }> };

export function bundleOps(config: Config, caBundle: string): Array<{ op: 'add'; path: string; value: string }> {
  return (config.webhooks ?? []).flatMap((w, i) =>
    w.clientConfig?.caBundle === caBundle
      ? []
      : [{ op: 'add' as const, path: `/webhooks/${i}/clientConfig/caBundle`, value: caBundle }],
  );
}

function fingerprints(pem: string): Set<string> {
  const out = new Set<string>();
  for (const p of splitPem(pem)) {
    try {
      out.add(new X509Certificate(p).fingerprint256);
    } catch {
      // A certificate that does not parse trusts nothing.
    }
  }
  return out;
}

/** Every webhook entry (and there is at least one) trusts every certificate in `bundlePem`. */
export function bundleHolds(config: Config, bundlePem: string): boolean {
  const want = [...fingerprints(bundlePem)];
  const hooks = config.webhooks ?? [];
  return (
    hooks.length > 0 &&
    hooks.every((w) => {
      const has = fingerprints(Buffer.from(w.clientConfig?.caBundle ?? '', 'base64').toString('utf8'));
      return want.every((f) => has.has(f));
    })
  );
}

const ADMISSION = 'admissionregistration.k8s.io/v1';
const KINDS = ['mutatingwebhookconfigurations', 'validatingwebhookconfigurations'] as const;

export async function syncCaBundle(client: KubeClient, name: string, caPem: string): Promise<number> {
  const caBundle = Buffer.from(caPem).toString('base64');
  let patched = 0;
  for (const kind of KINDS) {
    const path = group(ADMISSION, kind, { name });
    const ops = bundleOps(await client.get<Config>(path), caBundle);
    if (ops.length) await client.patch(path, 'json', ops);
    patched += ops.length;
  }
  return patched;
}

/** Both configurations, as the apiserver has them now, trust every CA in `bundlePem`. */
export async function caBundleHolds(client: KubeClient, name: string, bundlePem: string): Promise<boolean> {
  for (const kind of KINDS) {
    if (!bundleHolds(await client.get<Config>(group(ADMISSION, kind, { name })), bundlePem)) return false;
  }
  return true;
}
