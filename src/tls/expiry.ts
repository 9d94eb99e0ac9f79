/**
 * What the expiry metrics report about a serving pair: when the serving certificate and the CA that issued it
 * expire, and how many CAs the bundle holds (two while a self-managed CA rotation overlaps old and new).
 * Parsed at scrape time from the pair the server is serving, so the figures can never lag a swap.
 */
import { X509Certificate } from 'node:crypto';
import type { CertPair } from './source.ts';
import { splitPem } from './trust-state.ts';

export interface Expiry {
  serving: Date;
  /** The bundle's CA that issued the serving certificate; absent when the bundle is unknown or holds no issuer. */
  ca?: Date;
  bundleSize: number;
}

export function certificateExpiry(pair: CertPair): Expiry {
  const leaf = new X509Certificate(pair.cert);
  const cas = splitPem(pair.ca ?? '').map((p) => new X509Certificate(p));
  const issuer = cas.find((ca) => leaf.checkIssued(ca) && leaf.verify(ca.publicKey));
  return { serving: leaf.validToDate, ca: issuer?.validToDate, bundleSize: cas.length };
}
