/**
 * The TLS the webhook offers: Mozilla's "intermediate" profile without its DHE suites. TLS 1.2 only with ECDHE
 * key exchange (forward secrecy) and an AEAD cipher (no CBC, no SHA-1 MAC, no static RSA key exchange such as
 * AES128-SHA); all of TLS 1.3. The apiserver's Go client offers ECDHE-{ECDSA,RSA}-AES-GCM and CHACHA20 first,
 * so nothing it needs is lost; DHE is left out because Go never offers it and its parameters cost the server
 * a modular exponentiation per handshake.
 *
 * The options must be given again on every certificate swap: tls.Server#setSecureContext builds a new context
 * from what it is passed, and a field left out reverts to node's default (which includes the CBC suites).
 */
import type { SecureContextOptions } from 'node:tls';

/** TLS 1.2 suites, OpenSSL names, in Mozilla's order (AES-128 first: as strong in practice, faster). */
export const TLS12_CIPHERS: readonly string[] = Object.freeze([
  'ECDHE-ECDSA-AES128-GCM-SHA256',
  'ECDHE-RSA-AES128-GCM-SHA256',
  'ECDHE-ECDSA-AES256-GCM-SHA384',
  'ECDHE-RSA-AES256-GCM-SHA384',
  'ECDHE-ECDSA-CHACHA20-POLY1305',
  'ECDHE-RSA-CHACHA20-POLY1305',
]);

/**
 * TLS 1.3 suites. Node sends names starting with TLS_ to OpenSSL's TLS 1.3 list; leaving them out of
 * `ciphers` would disable TLS 1.3 altogether.
 */
export const TLS13_SUITES: readonly string[] = Object.freeze([
  'TLS_AES_128_GCM_SHA256',
  'TLS_AES_256_GCM_SHA384',
  'TLS_CHACHA20_POLY1305_SHA256',
]);

/** Mozilla intermediate's groups; Go offers X25519 and P-256 (and a post-quantum hybrid OpenSSL 3.0 lacks). */
export const ECDH_CURVES = 'X25519:prime256v1:secp384r1';

/** The policy part of a secure context: add the certificate and key to it. */
export const TLS_POLICY: Readonly<SecureContextOptions> = Object.freeze({
  minVersion: 'TLSv1.2',
  ciphers: [...TLS13_SUITES, ...TLS12_CIPHERS].join(':'),
  ecdhCurve: ECDH_CURVES,
  // Every suite offered is strong, so the client picks (Mozilla: "cipher preference: client chooses"): a
  // client without AES hardware can pick ChaCha20.
  honorCipherOrder: false,
});

/** A secure context for `pair` under the policy: for the server at start and for every certificate swap. */
export function secureContextOptions(pair: { cert: string; key: string }): SecureContextOptions {
  return { ...TLS_POLICY, cert: pair.cert, key: pair.key };
}
