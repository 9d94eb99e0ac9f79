// certs.mode=cert-manager rendered by the real helm: the chart's own CA chain (a self-signed Issuer that signs only
// the CA, the CA Certificate whose renewals keep its key, the CA Issuer, the serving Certificate), what the webhook
// configurations ask the CA injector for, an existing issuer instead, and the schema of certs.certManager. That these
// objects do what they say with cert-manager itself: test/e2e/cert-manager.test.ts.
import { describe, expect, it } from 'vitest';
import { chartDir, helmWithValues, KUBE_VERSION, render, templateArgs, type Obj } from './helm.ts';
import { profileValues } from './profiles.ts';

const CONFIGS = ['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration'];
const certManager = (certs: Obj = {}) => profileValues('istio', { certs: { mode: 'cert-manager', ...certs } });
const cmObjects = (docs: Obj[]) => docs.filter((d) => String(d.apiVersion).startsWith('cert-manager.io/'));

describe('certs.mode=cert-manager', () => {
  it('self-managed (default): no cert-manager objects, caBundle left empty, no injection asked for', async () => {
    const r = await render(profileValues('istio'));
    expect(cmObjects(r.docs)).toEqual([]);
    for (const kind of CONFIGS) {
      for (const w of r.one(kind).webhooks) expect(w.clientConfig.caBundle).toBeUndefined();
      expect(r.one(kind).metadata.annotations?.['cert-manager.io/inject-ca-from']).toBeUndefined();
    }
  });

  it('renders the chain self-signed Issuer → CA Certificate → CA Issuer → serving Certificate', async () => {
    const r = await render(certManager());
    expect(
      cmObjects(r.docs)
        .map((d) => `${d.kind}/${d.metadata.name}`)
        .sort(),
    ).toEqual([
      'Certificate/meshgate-ca',
      'Certificate/meshgate-serving',
      'Issuer/meshgate-ca',
      'Issuer/meshgate-selfsigned',
    ]);
    expect(r.one('Issuer', 'meshgate-selfsigned').spec).toEqual({ selfSigned: {} });
    expect(r.one('Certificate', 'meshgate-ca').spec).toEqual({
      isCA: true,
      commonName: 'meshgate webhook CA',
      secretName: 'meshgate-ca',
      duration: '43800h',
      renewBefore: '8760h',
      // Kept across renewals: a serving certificate signed before a renewal still verifies against the renewed CA.
      privateKey: { algorithm: 'ECDSA', size: 256, rotationPolicy: 'Never' },
      issuerRef: { kind: 'Issuer', name: 'meshgate-selfsigned' },
    });
    expect(r.one('Issuer', 'meshgate-ca').spec).toEqual({ ca: { secretName: 'meshgate-ca' } });
    expect(r.one('Certificate', 'meshgate-serving').spec).toEqual({
      secretName: 'meshgate-tls',
      duration: '2160h',
      renewBefore: '720h',
      dnsNames: ['meshgate.meshgate.svc', 'meshgate.meshgate.svc.cluster.local'],
      privateKey: { algorithm: 'ECDSA', size: 256, rotationPolicy: 'Always' },
      issuerRef: { kind: 'Issuer', name: 'meshgate-ca' },
    });
    for (const d of cmObjects(r.docs)) {
      expect(d.metadata.namespace).toBe('meshgate');
      expect(d.metadata.labels['app.kubernetes.io/component']).toBe('webhook');
    }
  });

  it('the self-signed Issuer signs only the CA, and every issuerRef names an Issuer the chart renders', async () => {
    const r = await render(certManager());
    const issuers = new Map(r.all('Issuer').map((i) => [i.metadata.name, i]));
    for (const c of r.all('Certificate')) {
      expect(c.spec.issuerRef.kind).toBe('Issuer');
      const issuer = issuers.get(c.spec.issuerRef.name);
      expect(issuer, c.metadata.name).toBeDefined();
      // Only a CA may come from the self-signed issuer: a self-signed serving certificate would be its own CA.
      expect('selfSigned' in issuer!.spec).toBe(c.spec.isCA === true);
    }
  });

  it('both webhook configurations ask the CA injector for the serving Certificate’s CA, and render no caBundle', async () => {
    const r = await render(certManager());
    for (const kind of CONFIGS) {
      expect(r.one(kind).metadata.annotations['cert-manager.io/inject-ca-from']).toBe('meshgate/meshgate-serving');
      for (const w of r.one(kind).webhooks) expect(w.clientConfig.caBundle).toBeUndefined();
    }
  });

  it('durations come from certs.certManager and certs.certManager.ca', async () => {
    const r = await render(
      certManager({
        certManager: { duration: '720h', renewBefore: '240h', ca: { duration: '87600h', renewBefore: '17520h' } },
      }),
    );
    expect(r.one('Certificate', 'meshgate-serving').spec).toMatchObject({ duration: '720h', renewBefore: '240h' });
    expect(r.one('Certificate', 'meshgate-ca').spec).toMatchObject({ duration: '87600h', renewBefore: '17520h' });
  });

  it('names follow the release; the CA’s commonName stays within cert-manager’s 64 characters', async () => {
    const r = await render(certManager(), { release: 'mesh', namespace: 'mesh-system' });
    expect(r.one('Certificate', 'mesh-meshgate-ca').spec).toMatchObject({
      commonName: 'mesh-meshgate webhook CA',
      secretName: 'mesh-meshgate-ca',
      issuerRef: { kind: 'Issuer', name: 'mesh-meshgate-selfsigned' },
    });
    expect(r.one('Certificate', 'mesh-meshgate-serving').spec.issuerRef).toEqual({
      kind: 'Issuer',
      name: 'mesh-meshgate-ca',
    });
    expect(r.one('Issuer', 'mesh-meshgate-ca').spec.ca.secretName).toBe('mesh-meshgate-ca');
    expect(r.one('MutatingWebhookConfiguration').metadata.annotations['cert-manager.io/inject-ca-from']).toBe(
      'mesh-system/mesh-meshgate-serving',
    );
    // The longest release name helm takes (53), without "meshgate" in it: the fullname gets -meshgate appended.
    const long = await render(certManager(), { release: 'x'.repeat(53) });
    const cn = long.one('Certificate', `${'x'.repeat(53)}-meshgate-ca`).spec.commonName as string;
    expect(cn).toBe(`${'x'.repeat(53)} webhook CA`);
  });

  it('an existing issuer signs the serving certificate: no Issuer and no CA of the chart', async () => {
    const issuerRef = { kind: 'ClusterIssuer', name: 'corp-ca', group: 'cert-manager.io' };
    const r = await render(certManager({ certManager: { issuerRef } }));
    expect(cmObjects(r.docs).map((d) => `${d.kind}/${d.metadata.name}`)).toEqual(['Certificate/meshgate-serving']);
    expect(r.one('Certificate').spec.issuerRef).toEqual(issuerRef);
    expect(r.one('ValidatingWebhookConfiguration').metadata.annotations['cert-manager.io/inject-ca-from']).toBe(
      'meshgate/meshgate-serving',
    );
  });

  it('helm lint --strict passes with the chart’s CA and with an existing issuer', async () => {
    for (const values of [certManager(), certManager({ certManager: { issuerRef: { kind: 'Issuer', name: 'x' } } })]) {
      const res = await helmWithValues(['lint', '--strict', chartDir, '--kube-version', KUBE_VERSION], values);
      expect(res.code, res.stdout + res.stderr).toBe(0);
      expect(res.stdout).toContain('0 chart(s) failed');
    }
  });

  it.each([
    ['a CA duration in years', { ca: { duration: '5y' } }, "at '/certs/certManager/ca/duration'"],
    [
      'an unknown key under ca',
      { ca: { rotationPolicy: 'Always' } },
      "additional properties 'rotationPolicy' not allowed",
    ],
    ['an issuerRef kind that does not exist', { issuerRef: { kind: 'Vault', name: 'x' } }, "'Issuer', 'ClusterIssuer'"],
  ])('the schema refuses %s', async (_name, certManagerValues, message) => {
    const res = await helmWithValues(templateArgs(), certManager({ certManager: certManagerValues }));
    expect(res.code).not.toBe(0);
    expect(res.stderr).toContain("values don't meet the specifications of the schema");
    expect(res.stderr).toContain(message);
  });
});
