/**
 * What test/e2e/cert-manager.test.ts drives and measures: cert-manager renewals forced through the API the way
 * `cmctl renew` forces them, a steady stream of pod creates through the webhook, and the caBundle the apiserver
 * holds, sampled over time.
 */
import { X509Certificate } from 'node:crypto';
import {
  AdmissionregistrationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  type KubeConfig,
  type V1Pod,
} from '@kubernetes/client-node';
import { describeError, httpStatus, waitFor } from './harness/index.ts';

const CERTIFICATES = { group: 'cert-manager.io', version: 'v1', plural: 'certificates' } as const;

interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
  observedGeneration?: number;
}

interface Certificate {
  metadata: { name: string; generation?: number; resourceVersion?: string };
  spec: { secretName: string };
  status?: { conditions?: Condition[]; revision?: number; nextPrivateKeySecretName?: string };
}

export const serial = (pem: string): string => new X509Certificate(pem).serialNumber;

/** A certificate's public key (SPKI, base64): equal across a renewal that kept the key. */
export const publicKey = (pem: string): string =>
  new X509Certificate(pem).publicKey.export({ type: 'spki', format: 'der' }).toString('base64');

/** Subjects and serials of the certificates in a caBundle. */
export function describeBundle(pem: string): string {
  const certs = pem.match(/-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----/g) ?? [];
  if (certs.length === 0) return '(empty)';
  return certs
    .map((c) => {
      const x = new X509Certificate(c);
      const subject = x.subject?.replaceAll('\n', ',') || x.subjectAltName || '(no subject)';
      return `${subject} #${x.serialNumber.slice(0, 8)}…`;
    })
    .join(' + ');
}

/** The data of a Secret, decoded. */
export async function secretData(kc: KubeConfig, namespace: string, name: string): Promise<Record<string, string>> {
  const s = await kc.makeApiClient(CoreV1Api).readNamespacedSecret({ namespace, name });
  return Object.fromEntries(Object.entries(s.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString()]));
}

async function readCertificate(kc: KubeConfig, namespace: string, name: string): Promise<Certificate> {
  return (await kc
    .makeApiClient(CustomObjectsApi)
    .getNamespacedCustomObject({ ...CERTIFICATES, namespace, name })) as Certificate;
}

const condition = (c: Certificate, type: string) => c.status?.conditions?.find((x) => x.type === type);

/** What a timed-out wait shows: the Certificate's status as last read, then `more()` (e.g. cert-manager's logs). */
function describer(last: () => Certificate | undefined, more: () => string) {
  return () => `Certificate status: ${JSON.stringify(last()?.status)}\n${more()}`;
}

/** Ready, and no issuance under way: a renewal may be forced. `more`: extra text for a timeout's message. */
export async function waitSettled(
  kc: KubeConfig,
  namespace: string,
  name: string,
  more: () => string = () => '',
): Promise<Certificate> {
  let last: Certificate | undefined;
  let stuckSince: number | undefined;
  return waitFor(
    `Certificate ${namespace}/${name} Ready with no issuance under way`,
    async () => {
      last = await readCertificate(kc, namespace, name);
      const issuing = condition(last, 'Issuing');
      if (condition(last, 'Ready')?.status !== 'True') return false;
      if (issuing?.status !== 'True') return last;
      if (stuckIssuance(last)) {
        stuckSince ??= Date.now();
        if (Date.now() - stuckSince >= STUCK_MS) {
          await clearIssuing(kc, namespace, last);
          console.log(
            `[cert-renewal] ${namespace}/${name}: cert-manager's issuance stuck ${STUCK_MS / 1000} s on a key Secret it had removed (${last.status?.nextPrivateKeySecretName}); its Secret is current, Issuing cleared`,
          );
          stuckSince = undefined;
        }
      } else stuckSince = undefined;
      return false;
    },
    { timeoutMs: 120_000, describe: describer(() => last, more) },
  );
}

/** How long cert-manager's stuck issuance (stuckIssuance) is watched before it is cleared. */
const STUCK_MS = 20_000;

/**
 * cert-manager's own race, seen under load right after install: its trigger read "Secret does not exist" from a
 * lagging cache just after the first issuance, set Issuing=True (DoesNotExist) on a Ready Certificate and named a
 * next key Secret its signer then never found ("Referenced secret … not found" in its log); the CertificateRequest
 * waits for good. Cleared (clearIssuing), the trigger judges again from a current cache: nothing is due if the Secret
 * is there, a clean issuance if it is not.
 */
function stuckIssuance(c: Certificate): boolean {
  return condition(c, 'Issuing')?.reason === 'DoesNotExist' && c.status?.nextPrivateKeySecretName !== undefined;
}

/**
 * The Issuing condition removed through the status subresource, as the trigger would have left it, and the
 * CertificateRequests of the stuck revision (beyond the Certificate's own) deleted, so the next issuance starts
 * clean.
 */
async function clearIssuing(kc: KubeConfig, namespace: string, c: Certificate): Promise<void> {
  const api = kc.makeApiClient(CustomObjectsApi);
  const requests = { group: 'cert-manager.io', version: 'v1', plural: 'certificaterequests', namespace } as const;
  const list = (await api.listNamespacedCustomObject(requests)) as {
    items: Array<{ metadata: { name: string; annotations?: Record<string, string> } }>;
  };
  for (const r of list.items) {
    const a = r.metadata.annotations ?? {};
    if (a['cert-manager.io/certificate-name'] !== c.metadata.name) continue;
    if (Number(a['cert-manager.io/certificate-revision']) <= (c.status?.revision ?? 0)) continue;
    await api.deleteNamespacedCustomObject({ ...requests, name: r.metadata.name }).catch((err) => {
      if (httpStatus(err) !== 404) throw err;
    });
  }
  const conditions = (c.status?.conditions ?? []).filter((x) => x.type !== 'Issuing');
  const { nextPrivateKeySecretName: _, ...status } = c.status ?? {};
  await api
    .replaceNamespacedCustomObjectStatus({
      ...CERTIFICATES,
      namespace,
      name: c.metadata.name,
      body: { ...c, status: { ...status, conditions } },
    })
    .catch((err) => {
      if (httpStatus(err) !== 409) throw err; // changed meanwhile: judged again at the next poll
    });
}

/**
 * Forces a re-issuance as `cmctl renew` does: status condition Issuing=True, reason ManuallyTriggered, written through
 * the status subresource (retried on a conflict). Resolves with the new pair once cert-manager has stored it in the
 * Certificate's Secret and the Certificate is Ready again.
 */
export async function renew(
  kc: KubeConfig,
  namespace: string,
  name: string,
  more: () => string = () => '',
): Promise<{ before: string; after: Record<string, string> }> {
  const settled = await waitSettled(kc, namespace, name, more);
  const before = (await secretData(kc, namespace, settled.spec.secretName))['tls.crt'];
  const api = kc.makeApiClient(CustomObjectsApi);
  await waitFor(`Issuing=True written on Certificate ${namespace}/${name}`, async () => {
    const c = await readCertificate(kc, namespace, name);
    const conditions = (c.status?.conditions ?? []).filter((x) => x.type !== 'Issuing');
    conditions.push({
      type: 'Issuing',
      status: 'True',
      reason: 'ManuallyTriggered',
      message: 'Certificate re-issuance manually triggered',
      lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
      observedGeneration: c.metadata.generation,
    });
    try {
      await api.replaceNamespacedCustomObjectStatus({
        ...CERTIFICATES,
        namespace,
        name,
        body: { ...c, status: { ...c.status, conditions } },
      });
      return true;
    } catch (err) {
      if (httpStatus(err) === 409) return false;
      throw err;
    }
  });
  let last: Certificate | undefined;
  const after = await waitFor(
    `Certificate ${namespace}/${name} re-issued`,
    async () => {
      last = await readCertificate(kc, namespace, name);
      const data = await secretData(kc, namespace, settled.spec.secretName);
      return data['tls.crt'] !== before && data;
    },
    { timeoutMs: 60_000, describe: describer(() => last, more) },
  );
  await waitSettled(kc, namespace, name, more);
  return { before, after };
}

export interface Outcome {
  /** ms since the run started. */
  at: number;
  ms: number;
  error?: string;
}

/**
 * Creates pods at `perSecond` (open loop: a slow create does not delay the next) until `until()` says stop; at most
 * `maxInFlight` outstanding, after which a tick is skipped and counted.
 */
export async function createPods(o: {
  kc: KubeConfig;
  namespace: string;
  pod: (name: string) => V1Pod;
  perSecond: number;
  until: () => boolean;
  maxInFlight?: number;
}): Promise<{ outcomes: Outcome[]; skipped: number; seconds: number }> {
  const core = o.kc.makeApiClient(CoreV1Api);
  const outcomes: Outcome[] = [];
  const inFlight = new Set<Promise<void>>();
  const start = Date.now();
  let skipped = 0;
  for (let i = 0; !o.until(); i++) {
    const due = start + (i * 1000) / o.perSecond;
    await new Promise((r) => setTimeout(r, Math.max(0, due - Date.now())));
    if (inFlight.size >= (o.maxInFlight ?? 64)) {
      skipped++;
      continue;
    }
    const t0 = Date.now();
    const p: Promise<void> = core
      .createNamespacedPod({ namespace: o.namespace, body: o.pod(`load-${i}`) })
      .then(
        () => void outcomes.push({ at: t0 - start, ms: Date.now() - t0 }),
        (err) => void outcomes.push({ at: t0 - start, ms: Date.now() - t0, error: describeError(err) }),
      )
      .finally(() => inFlight.delete(p));
    inFlight.add(p);
  }
  await Promise.all(inFlight);
  return { outcomes: outcomes.sort((a, b) => a.at - b.at), skipped, seconds: (Date.now() - start) / 1000 };
}

/**
 * Every distinct caBundle of the named Mutating and ValidatingWebhookConfiguration, with when it was first seen (ms
 * after `start`).
 */
export function sampleCaBundles(kc: KubeConfig, name: string, start = Date.now(), everyMs = 200) {
  const api = kc.makeApiClient(AdmissionregistrationV1Api);
  const seen: Array<{ at: number; bundles: string[] }> = [];
  const read = async () => {
    const [m, v] = await Promise.all([
      api.readMutatingWebhookConfiguration({ name }),
      api.readValidatingWebhookConfiguration({ name }),
    ]);
    const bundles = [...(m.webhooks ?? []), ...(v.webhooks ?? [])].map((w) =>
      Buffer.from(w.clientConfig.caBundle ?? '', 'base64').toString(),
    );
    const key = JSON.stringify(bundles);
    if (JSON.stringify(seen.at(-1)?.bundles) !== key) seen.push({ at: Date.now() - start, bundles });
  };
  const timer = setInterval(() => void read().catch(() => undefined), everyMs);
  return {
    seen,
    read,
    stop: () => clearInterval(timer),
  };
}

/** p-th percentile (0–100) of `xs`, nearest rank. */
export function percentile(xs: number[], p: number): number {
  if (xs.length === 0) return Number.NaN;
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}
