/**
 * Keeps the caBundle of meshgate's own Mutating- and ValidatingWebhookConfiguration equal to the CA bundle its
 * serving certificates chain to (one CA, or the old and the new one while a CA rotates). RBAC limits this to
 * those two objects (resourceNames). Each webhook entry is patched only when its bundle differs, so a steady
 * state writes nothing. `caBundleHolds` is what a CA rotation asks before the new CA may sign: does every
 * webhook entry in both configurations already trust it?
 */
import { X509Certificate } from 'node:crypto';
import { AdmissionregistrationV1Api, PatchStrategy, setHeaderOptions, type KubeConfig } from '@kubernetes/client-node';
import { splitPem } from '../tls/trust-state.ts';

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

export async function syncCaBundle(kc: KubeConfig, name: string, caPem: string): Promise<number> {
  const api = kc.makeApiClient(AdmissionregistrationV1Api);
  const caBundle = Buffer.from(caPem).toString('base64');
  const json = setHeaderOptions('Content-Type', PatchStrategy.JsonPatch);
  let patched = 0;
  const mutating = await api.readMutatingWebhookConfiguration({ name });
  const mOps = bundleOps(mutating as Config, caBundle);
  if (mOps.length) await api.patchMutatingWebhookConfiguration({ name, body: mOps }, json);
  const validating = await api.readValidatingWebhookConfiguration({ name });
  const vOps = bundleOps(validating as Config, caBundle);
  if (vOps.length) await api.patchValidatingWebhookConfiguration({ name, body: vOps }, json);
  patched += mOps.length + vOps.length;
  return patched;
}

/** Both configurations, as the apiserver has them now, trust every CA in `bundlePem`. */
export async function caBundleHolds(kc: KubeConfig, name: string, bundlePem: string): Promise<boolean> {
  const api = kc.makeApiClient(AdmissionregistrationV1Api);
  const mutating = await api.readMutatingWebhookConfiguration({ name });
  const validating = await api.readValidatingWebhookConfiguration({ name });
  return bundleHolds(mutating as Config, bundlePem) && bundleHolds(validating as Config, bundlePem);
}
