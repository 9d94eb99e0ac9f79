/**
 * Keeps the caBundle of meshgate's own Mutating- and ValidatingWebhookConfiguration equal to the CA that signs
 * its serving certificate. RBAC limits this to those two objects (resourceNames). Each webhook entry is
 * patched only when its bundle differs, so a steady state writes nothing.
 */
import { AdmissionregistrationV1Api, PatchStrategy, setHeaderOptions, type KubeConfig } from '@kubernetes/client-node';

type Config = { webhooks?: Array<{ clientConfig?: { caBundle?: string } }> };

export function bundleOps(config: Config, caBundle: string): Array<{ op: 'add'; path: string; value: string }> {
  return (config.webhooks ?? []).flatMap((w, i) => (w.clientConfig?.caBundle === caBundle ? [] : [{ op: 'add' as const, path: `/webhooks/${i}/clientConfig/caBundle`, value: caBundle }]));
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
