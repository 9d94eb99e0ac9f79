// A throwaway PKI for one control plane: a CA, the apiserver's serving certificate, client certificates for the
// admin and each component, and kubeconfigs. Keys come from node:crypto (native, fast); node-forge only builds
// and signs the X.509 certificates, which node:crypto cannot do.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import forge from 'node-forge';

export interface KeyPair {
  certPem: string;
  keyPem: string;
}

export interface CertificateRequest {
  commonName: string;
  /** Subject O= values; Kubernetes maps them to groups (e.g. system:masters). */
  organizations?: string[];
  dnsNames?: string[];
  ipAddresses?: string[];
  /** 'server' for TLS serving, 'client' for client auth. Default 'server'. */
  usage?: 'server' | 'client' | 'both';
  /** Default 7 days: longer than any test run, short enough that leaked files are useless soon. */
  validDays?: number;
}

/** RSA 2048: accepted everywhere (apiserver, etcd, webhooks' caBundle) and node:crypto makes one in ~50 ms. */
function newRsaKey(): { forgePrivate: forge.pki.rsa.PrivateKey; forgePublic: forge.pki.rsa.PublicKey; pem: string } {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
  });
  return {
    forgePrivate: forge.pki.privateKeyFromPem(privateKey) as forge.pki.rsa.PrivateKey,
    forgePublic: forge.pki.publicKeyFromPem(publicKey) as forge.pki.rsa.PublicKey,
    pem: privateKey,
  };
}

function baseCert(publicKey: forge.pki.PublicKey, validDays: number): forge.pki.Certificate {
  const cert = forge.pki.createCertificate();
  cert.publicKey = publicKey;
  // 16 random bytes with the top bit cleared: a positive serial, as RFC 5280 requires.
  const serial = randomBytes(16);
  serial[0] = serial[0]! & 0x7f;
  cert.serialNumber = serial.toString('hex');
  // Backdated one hour so small clock differences never make a fresh certificate "not yet valid".
  cert.validity.notBefore = new Date(Date.now() - 3_600_000);
  cert.validity.notAfter = new Date(Date.now() + validDays * 86_400_000);
  return cert;
}

export class CertificateAuthority {
  readonly certPem: string;
  readonly keyPem: string;
  private readonly cert: forge.pki.Certificate;
  private readonly key: forge.pki.rsa.PrivateKey;

  constructor(commonName = 'meshgate-e2e-ca') {
    const k = newRsaKey();
    const cert = baseCert(k.forgePublic, 7);
    const subject = [{ name: 'commonName', value: commonName }];
    cert.setSubject(subject);
    cert.setIssuer(subject);
    cert.setExtensions([
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
      { name: 'subjectKeyIdentifier' },
    ]);
    cert.sign(k.forgePrivate, forge.md.sha256.create());
    this.cert = cert;
    this.key = k.forgePrivate;
    this.certPem = forge.pki.certificateToPem(cert);
    this.keyPem = k.pem;
  }

  /** Issues a leaf certificate signed by this CA (e.g. a webhook's serving certificate for 127.0.0.1). */
  issue(req: CertificateRequest): KeyPair {
    const k = newRsaKey();
    const cert = baseCert(k.forgePublic, req.validDays ?? 7);
    cert.setSubject([
      { name: 'commonName', value: req.commonName },
      ...(req.organizations ?? []).map((o) => ({ name: 'organizationName', value: o })),
    ]);
    cert.setIssuer(this.cert.subject.attributes);
    const usage = req.usage ?? 'server';
    const altNames = [
      ...(req.dnsNames ?? []).map((value) => ({ type: 2, value })), // 2 = dNSName
      ...(req.ipAddresses ?? []).map((ip) => ({ type: 7, ip })), // 7 = iPAddress
    ];
    cert.setExtensions([
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
      {
        name: 'extKeyUsage',
        serverAuth: usage !== 'client',
        clientAuth: usage !== 'server',
      },
      ...(altNames.length > 0 ? [{ name: 'subjectAltName', altNames }] : []),
      { name: 'authorityKeyIdentifier', keyIdentifier: this.cert.generateSubjectKeyIdentifier().getBytes() },
    ]);
    cert.sign(this.key, forge.md.sha256.create());
    return { certPem: forge.pki.certificateToPem(cert), keyPem: k.pem };
  }
}

/** A bare RSA key pair in PEM (PKCS#1 private, SPKI public), e.g. for service-account token signing. */
export function newSigningKey(): { privatePem: string; publicPem: string } {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
  });
  return { privatePem: privateKey, publicPem: publicKey };
}

/** A kubeconfig (JSON is valid YAML) with everything embedded, so it works from any working directory. */
export function kubeconfig(server: string, caPem: string, client: KeyPair, user: string): string {
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  return JSON.stringify(
    {
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'meshgate-e2e', cluster: { server, 'certificate-authority-data': b64(caPem) } }],
      users: [
        {
          name: user,
          user: { 'client-certificate-data': b64(client.certPem), 'client-key-data': b64(client.keyPem) },
        },
      ],
      contexts: [{ name: 'meshgate-e2e', context: { cluster: 'meshgate-e2e', user } }],
      'current-context': 'meshgate-e2e',
    },
    null,
    2,
  );
}
