/**
 * One TLS handshake with a webhook endpoint, to see the certificate it really serves (what the apiserver gets).
 * Nothing is sent after the handshake. The caller decides whom to dial: a URL webhook's host, or a Service's DNS
 * name only when running inside the cluster (from outside, those names do not resolve and pod IPs are not routed).
 */
import { X509Certificate } from 'node:crypto';
import { isIP } from 'node:net';
import { connect, type PeerCertificate } from 'node:tls';
import type { TlsProbe } from './facts.ts';

/** A handshake longer than this is as good as unreachable for the apiserver, whose webhook calls time out at 10 s. */
export const PROBE_TIMEOUT_MS = 3000;
/** Chain certificates kept: a leaf and its intermediates; a longer "chain" is not a serving setup. */
const MAX_CHAIN = 8;

export function probeTls(
  host: string,
  port: number,
  verifyHost: string,
  timeoutMs = PROBE_TIMEOUT_MS,
): Promise<TlsProbe> {
  const target = `${isIP(host) === 6 ? `[${host}]` : host}:${port}`;
  return new Promise((resolve) => {
    let settled = false;
    const done = (p: Omit<TlsProbe, 'target' | 'host'>) => {
      if (settled) return;
      settled = true;
      socket.destroy();
      resolve({ target, host: verifyHost, ...p });
    };
    // Trust is judged afterwards against the caBundle (judge-certs.ts); here only the served chain matters.
    const socket = connect({
      host,
      port,
      servername: isIP(verifyHost) ? undefined : verifyHost,
      rejectUnauthorized: false,
      timeout: timeoutMs,
    });
    socket.once('secureConnect', () => done({ chain: chainOf(socket.getPeerCertificate(true)) }));
    socket.once('timeout', () => done({ error: `no TLS handshake within ${timeoutMs} ms` }));
    socket.once('error', (err: NodeJS.ErrnoException) =>
      done({ error: err.code ? `${err.code}: ${err.message}` : err.message }),
    );
  });
}

/** The served chain as PEM, leaf first, following issuerCertificate until it loops (a self-signed root). */
function chainOf(leaf: PeerCertificate & { issuerCertificate?: PeerCertificate }): string[] {
  const out: string[] = [];
  let c: (PeerCertificate & { issuerCertificate?: PeerCertificate }) | undefined = leaf;
  const seen = new Set<string>();
  while (c?.raw && out.length < MAX_CHAIN && !seen.has(c.fingerprint256)) {
    seen.add(c.fingerprint256);
    out.push(new X509Certificate(c.raw).toString());
    c = c.issuerCertificate;
  }
  return out;
}
