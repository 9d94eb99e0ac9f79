/**
 * The Secret-backed source outside a rotation: agreeing on one pair, renewing it, giving up on endless lost
 * races, upgrading a Secret written by the previous meshgate (RSA from node-forge), refusing a broken Secret
 * with an error that names the key, and the caBundle helpers.
 */
import { describe, expect, it } from 'vitest';
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { SecretSource, type SecretStore } from '../../src/tls/secret-source.ts';
import { MemorySecretStore } from '../../src/tls/memory-store.ts';
import { fromSecretData, toSecretData, type SecretData } from '../../src/tls/trust-state.ts';
import { issueCA, issueLeaf } from '../../src/tls/authority.ts';
import { bundleHolds, bundleOps } from '../../src/kube/ca-bundle.ts';
import { CertificateAuthority as ForgeCA } from '../e2e/harness/pki.ts';
import { LEAF_MS, MINUTE, OVERLAP_MS, cluster, issuerOf } from './rotation-helpers.ts';

const serial = (pem: string) => new X509Certificate(pem).serialNumber;

describe('SecretSource', () => {
  it('replicas starting together agree on one pair: one creates, the others adopt it', async () => {
    const store = new MemorySecretStore();
    const replicas = [0, 1, 2].map(
      (i) => new SecretSource({ store, sans: ['meshgate.meshgate.svc'], replicaId: `r${i}`, manual: true }),
    );
    await Promise.all(replicas.map((r) => r.start()));
    expect(store.peek()!.resourceVersion).toBe('1');
    expect(new Set(replicas.map((r) => r.current().cert)).size).toBe(1);
    expect(replicas[0].current().ca).toBe(store.peek()!.data['ca.crt']);
    const leaf = new X509Certificate(replicas[0].current().cert);
    expect(leaf.publicKey.asymmetricKeyDetails?.namedCurve).toBe('prime256v1');
    expect(leaf.signatureAlgorithm).toMatch(/ecdsa/i);
  });

  it('renews the serving certificate at two thirds of its life, keeping the CA (the caBundle does not change)', async () => {
    const c = cluster();
    const [a, b] = [c.replica('a'), c.replica('b')];
    await a.start();
    await b.start();
    const first = a.current();
    c.clock.advance(LEAF_MS * 0.5);
    await a.sync();
    expect(a.current().cert).toBe(first.cert);
    c.clock.advance(LEAF_MS * 0.2);
    const seen: string[] = [];
    a.onChange((p) => seen.push(serial(p.cert)));
    await a.sync();
    expect(c.store.peek()!.resourceVersion).toBe('2');
    expect(serial(a.current().cert)).not.toBe(serial(first.cert));
    expect(seen).toEqual([serial(a.current().cert)]);
    expect(a.current().ca).toBe(first.ca);
    expect(issuerOf(a.current().cert, c.bundle())).toBe(c.bundle()[0].fingerprint256);
    await b.sync();
    expect(b.current().cert).toBe(a.current().cert);
    expect(c.events.map((e) => e.event)).toEqual(['created', 'leaf_renewed']);
  });

  it('gives up with a clear error when it keeps losing the race', async () => {
    const store: SecretStore = {
      read: async () => undefined,
      create: async () => undefined,
      replace: async () => undefined,
    };
    await expect(new SecretSource({ store, sans: ['x'], where: 'Secret m/t' }).sync()).rejects.toThrow(
      /Secret m\/t: could not agree .* after 5 attempts/,
    );
  });

  it('refuses overlapMs shorter than the replica timeout (a live replica could be missed)', () => {
    expect(
      () => new SecretSource({ store: new MemorySecretStore(), sans: ['x'], pollMs: 60_000, overlapMs: 60_000 }),
    ).toThrow(/overlapMs .* replicaTimeoutMs/);
  });

  it('rotates a Secret written by the previous meshgate (RSA CA and certificate from node-forge) to ECDSA P-256', async () => {
    const old = new ForgeCA('meshgate-ca-legacy');
    const pair = old.issue({ commonName: '127.0.0.1', ipAddresses: ['127.0.0.1'] });
    const c = cluster();
    await c.store.create({
      'ca.crt': old.certPem,
      'ca.key': old.keyPem,
      'tls.crt': pair.certPem,
      'tls.key': pair.keyPem,
    });
    const r = c.replica('r1');
    await r.start();
    // At once: a P-256 CA is prepared, and the serving certificate gets a P-256 key (still signed by the RSA CA).
    expect(c.events.map((e) => e.event)).toEqual(['ca_prepared', 'leaf_renewed']);
    expect(c.events[0]).toMatchObject({ why: 'ca_not_p256' });
    const [rsa, ec] = c.bundle();
    expect(rsa.publicKey.asymmetricKeyType).toBe('rsa');
    expect(ec.publicKey.asymmetricKeyDetails?.namedCurve).toBe('prime256v1');
    expect(issuerOf(r.current().cert, c.bundle())).toBe(rsa.fingerprint256);
    expect(new X509Certificate(r.current().cert).publicKey.asymmetricKeyDetails?.namedCurve).toBe('prime256v1');

    c.published.bundle = r.current().ca!;
    c.clock.advance(OVERLAP_MS);
    await r.sync();
    expect(c.bundle().map((x) => x.fingerprint256)).toEqual([ec.fingerprint256]);
    expect(issuerOf(r.current().cert, c.bundle())).toBe(ec.fingerprint256);
  });
});

describe('the Secret layout', () => {
  const now = Date.now();
  const a = issueCA(10 * LEAF_MS, now);
  const b = issueCA(10 * LEAF_MS, now + MINUTE);
  const leafA = issueLeaf(a, ['x'], LEAF_MS, now);
  const good: SecretData = { 'ca.crt': a.cert, 'ca.key': a.key, 'tls.crt': leafA.cert, 'tls.key': leafA.key };

  it('round-trips a preparing state: the second CA with next-ca.key is the next signer', () => {
    const prepared: SecretData = {
      ...good,
      'ca.crt': a.cert + b.cert,
      'next-ca.key': b.key,
      'replicas.json': '{"r1":{"ca":"x","at":1}}',
    };
    const s = fromSecretData(prepared, 'Secret m/t');
    expect(s.next?.x509.fingerprint256).toBe(b.x509.fingerprint256);
    expect(s.retiring).toBeUndefined();
    expect(toSecretData(s)).toEqual({ ...prepared, 'ca.crt': a.x509.toString() + b.x509.toString() });
    // Without next-ca.key the second CA is the old one being retired.
    const leafB = issueLeaf(b, ['x'], LEAF_MS, now);
    const promoted = fromSecretData(
      { 'ca.crt': a.cert + b.cert, 'ca.key': b.key, 'tls.crt': leafB.cert, 'tls.key': leafB.key },
      'Secret m/t',
    );
    expect(promoted.retiring?.fingerprint256).toBe(a.x509.fingerprint256);
    expect(promoted.signer.x509.checkPrivateKey(createPrivateKey(b.key))).toBe(true);
  });

  const c3 = issueCA(LEAF_MS, now);
  it.each([
    [
      'tls.key of another certificate',
      { 'tls.key': issueLeaf(a, ['x'], LEAF_MS, now).key },
      /Secret m\/t: tls.key: it does not match tls.crt/,
    ],
    [
      'tls.crt from a CA not in ca.crt',
      { 'ca.crt': b.cert, 'ca.key': b.key },
      /tls.crt was not issued by a CA in ca.crt/,
    ],
    ['ca.key of another CA', { 'ca.key': b.key }, /ca.key: the CA key does not match/],
    ['three CAs', { 'ca.crt': a.cert + b.cert + c3.cert }, /ca.crt holds 3 certificates/],
    ['no CA', { 'ca.crt': 'nothing' }, /ca.crt holds 0 certificates/],
    ['next-ca.key without a second CA', { 'next-ca.key': b.key }, /next-ca.key is set but ca.crt holds no second CA/],
    [
      'replicas.json not JSON',
      { 'ca.crt': a.cert + b.cert, 'next-ca.key': b.key, 'replicas.json': '{' },
      /replicas.json is not JSON/,
    ],
    [
      'a report without "at"',
      { 'ca.crt': a.cert + b.cert, 'next-ca.key': b.key, 'replicas.json': '{"p":{"ca":"x"}}' },
      /the report of "p" needs/,
    ],
  ] as const)('refuses %s, naming the key', (_what, change, message) => {
    expect(() => fromSecretData({ ...good, ...change }, 'Secret m/t')).toThrow(message);
  });
});

describe('caBundle', () => {
  it('patches only webhooks whose bundle differs', () => {
    const ops = bundleOps({ webhooks: [{ clientConfig: { caBundle: 'same' } }, { clientConfig: {} }, {}] }, 'same');
    expect(ops.map((o) => o.path)).toEqual(['/webhooks/1/clientConfig/caBundle', '/webhooks/2/clientConfig/caBundle']);
  });

  it('holds a bundle only when every webhook entry trusts every CA in it, in any order', () => {
    const [a, b] = [issueCA(LEAF_MS, Date.now()), issueCA(LEAF_MS, Date.now())];
    const b64 = (s: string) => Buffer.from(s).toString('base64');
    const hooks = (...bundles: string[]) => ({
      webhooks: bundles.map((x) => ({ clientConfig: { caBundle: b64(x) } })),
    });
    expect(bundleHolds(hooks(b.cert + a.cert, a.cert + b.cert), a.cert + b.cert)).toBe(true);
    expect(bundleHolds(hooks(a.cert + b.cert, a.cert), a.cert + b.cert)).toBe(false);
    expect(bundleHolds(hooks(), a.cert)).toBe(false);
    expect(bundleHolds({ webhooks: [{ clientConfig: {} }] }, a.cert)).toBe(false);
  });
});
