/**
 * Judges the webhooks' trust: every entry carries a caBundle, the certificate meshgate serves chains to it and
 * names the host the apiserver dials, and neither expires soon. The served certificate comes from a TLS
 * handshake when one was possible (what the apiserver really gets), else from meshgate's TLS Secret. Pure.
 */
import type { X509Certificate } from 'node:crypto';
import { daysLeft, namesHost, parseCaBundle, parsePemCerts, subjectOf, trustedBy } from './certs.ts';
import { isReadError, type Read, type SecretCerts, type TlsProbe, type WebhookConfig } from './facts.ts';
import { endpointOf, entriesOf, type WebhookEndpoint } from './judge-webhook.ts';
import { result, worst, type CheckResult, type Item } from './report.ts';

/**
 * Below this many days a certificate should already have been renewed: cert-manager renews 30 days before expiry
 * (the chart's renewBefore 720h) and self-managed certificates at two thirds of a one-year life.
 */
export const EXPIRY_WARN_DAYS = 30;

export interface CertFacts {
  mutating: Read<WebhookConfig>;
  validating: Read<WebhookConfig>;
  probes: ReadonlyMap<string, TlsProbe>;
  /** meshgate's TLS Secret (undefined: not found). */
  secret: Read<SecretCerts>;
  now: number;
}

export function judgeCaBundles(f: CertFacts): CheckResult {
  const entries = entriesOf([f.mutating, f.validating]);
  if (entries.length === 0) return { code: 'webhook_ca_bundle', status: 'skip', message: 'not checked: no webhooks' };
  const items: Item[] = [];
  const bundles = new Set<string>();
  for (const { config, entry } of entries) {
    const name = `${config.kind} ${config.name}/${entry.name}`;
    const parsed = parseCaBundle(entry.caBundle, name);
    if (!parsed.ok)
      items.push({ name, status: 'fail', message: `${parsed.error}: the apiserver cannot trust meshgate` });
    else bundles.add(parsed.certs.map((c) => c.fingerprint256).join(','));
  }
  if (items.length)
    return result(
      'webhook_ca_bundle',
      'fail',
      `${items.length} of ${entries.length} webhooks have no usable caBundle`,
      items,
    );
  if (bundles.size > 1) {
    return result(
      'webhook_ca_bundle',
      'warn',
      `the ${entries.length} webhooks carry ${bundles.size} different caBundles (normal only while a CA rotates)`,
    );
  }
  return result('webhook_ca_bundle', 'ok', `all ${entries.length} webhooks carry the same caBundle`);
}

interface Served {
  chain: X509Certificate[];
  source: string;
}

/** The certificate an endpoint serves: the handshake's, else the Secret's for a Service endpoint. */
function served(e: WebhookEndpoint, f: CertFacts): Served | { error: string } {
  const probe = f.probes.get(e.key);
  if (probe?.chain?.length) {
    const parsed = parsePemCerts(probe.chain.join('\n'), `the certificate ${probe.target} served`);
    return parsed.ok ? { chain: parsed.certs, source: `TLS handshake with ${probe.target}` } : { error: parsed.error };
  }
  const secret = f.secret;
  const unseen = probe?.error ? `no TLS handshake (${probe.error})` : 'not reachable from here';
  if (!e.service) return { error: `serving certificate not seen: ${unseen}` };
  if (secret === undefined) return { error: `serving certificate not seen: ${unseen}, and no TLS Secret was found` };
  if (isReadError(secret))
    return { error: `serving certificate not seen: ${unseen}, and Secret could not be read: ${secret.error}` };
  if (!secret.tlsCrt)
    return { error: `serving certificate not seen: Secret ${secret.namespace}/${secret.name} has no tls.crt` };
  const parsed = parsePemCerts(secret.tlsCrt, `Secret ${secret.namespace}/${secret.name} tls.crt`);
  return parsed.ok
    ? { chain: parsed.certs, source: `Secret ${secret.namespace}/${secret.name}` }
    : { error: parsed.error };
}

/** The served leaf per endpoint, with the bundle CA it chains to for each entry calling it. */
interface Judged {
  items: Item[];
  /** Certificates to judge for expiry, by fingerprint. */
  expiring: Map<string, { cert: X509Certificate; what: string }>;
}

function judgeServed(f: CertFacts): Judged {
  const items: Item[] = [];
  const expiring = new Map<string, { cert: X509Certificate; what: string }>();
  const seen = new Map<string, Served | { error: string }>();
  for (const { config, entry } of entriesOf([f.mutating, f.validating])) {
    const e = endpointOf(entry);
    const bundle = parseCaBundle(entry.caBundle, entry.name);
    if (!e || !bundle.ok) continue; // reported by webhook_endpoints_ready / webhook_ca_bundle
    const s = seen.get(e.key) ?? served(e, f);
    seen.set(e.key, s);
    const name = `${config.kind} ${config.name}/${entry.name}`;
    if ('error' in s) {
      items.push({ name, status: 'warn', message: s.error });
      continue;
    }
    const leaf = s.chain[0];
    expiring.set(leaf.fingerprint256, { cert: leaf, what: `serving certificate ${subjectOf(leaf)} (${s.source})` });
    const ca = trustedBy(s.chain, bundle.certs);
    if (!ca) {
      items.push({
        name,
        status: 'fail',
        reason: 'ca_mismatch',
        message:
          `the certificate from ${s.source} (issuer ${leaf.issuer.replace(/\n/g, ', ')}) is not issued by any CA ` +
          `in the caBundle (${bundle.certs.map(subjectOf).join('; ')}): the apiserver refuses the TLS handshake`,
      });
      continue;
    }
    expiring.set(ca.fingerprint256, { cert: ca, what: `CA ${subjectOf(ca)}` });
    if (!namesHost(leaf, e.host)) {
      items.push({
        name,
        status: 'fail',
        reason: 'host_mismatch',
        message:
          `the certificate from ${s.source} is not valid for ${e.host} (${leaf.subjectAltName ?? 'no SAN'}), ` +
          'the name the apiserver dials',
      });
      continue;
    }
    items.push({ name, status: 'ok', message: `${s.source}: issued by ${subjectOf(ca)}, valid for ${e.host}` });
  }
  return { items, expiring };
}

export function judgeCertificates(f: CertFacts): CheckResult[] {
  if (entriesOf([f.mutating, f.validating]).length === 0) {
    return [
      { code: 'serving_cert_trusted', status: 'skip', message: 'not checked: no webhooks' },
      { code: 'serving_cert_expiry', status: 'skip', message: 'not checked: no webhooks' },
    ];
  }
  const { items, expiring } = judgeServed(f);
  const trustStatus = worst(items.map((i) => i.status));
  const trustMessage =
    trustStatus === 'ok'
      ? 'the serving certificate chains to the caBundle and names the host the apiserver dials'
      : trustStatus === 'fail'
        ? 'the apiserver will not trust the serving certificate'
        : trustStatus === 'skip'
          ? 'not checked: no usable caBundle'
          : 'the serving certificate could not be checked';
  const trusted = result('serving_cert_trusted', trustStatus, trustMessage, items);
  if (expiring.size === 0)
    return [
      trusted,
      { code: 'serving_cert_expiry', status: 'skip', message: 'not checked: no serving certificate seen' },
    ];
  const expiry: Item[] = [...expiring.values()].map(({ cert, what }) => {
    const days = daysLeft(cert, f.now);
    const status = days < 0 ? 'fail' : days < EXPIRY_WARN_DAYS ? 'warn' : 'ok';
    const when = days < 0 ? `expired ${-days} days ago` : `expires in ${days} days`;
    return { name: what, status, message: `${when} (${new Date(cert.validTo).toISOString().slice(0, 10)})` };
  });
  const soonest = Math.min(...[...expiring.values()].map(({ cert }) => daysLeft(cert, f.now)));
  const status = worst(expiry.map((i) => i.status));
  const message = soonest < 0 ? 'a certificate has expired' : `the first certificate expires in ${soonest} days`;
  return [trusted, result('serving_cert_expiry', status, message, expiry)];
}
