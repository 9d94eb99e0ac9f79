/**
 * Issue 33 §8: a learned ConfigMap is trusted only when an installed injector reads it — the tie is the injector's
 * MutatingWebhookConfiguration, as istiod's and Linkerd's charts render it — and §3's control-plane facts are read
 * from the same ConfigMaps.
 */
import { describe, expect, it } from 'vitest';
import { installedConfigMaps, isInstalled, webhookConfigView } from '../../src/mesh/installed.ts';
import { controlPlaneFromConfigMap } from '../../src/kube/learned-control-plane.ts';

const mwc = (name: string, labels: Record<string, string>, clientConfig: Record<string, unknown>) =>
  webhookConfigView({
    metadata: { name, labels },
    webhooks: [{ name: 'rev.namespace.sidecar-injector.istio.io', clientConfig }],
  })!;

describe('which ConfigMaps an installed injector reads', () => {
  it('Istio: the revision of the Service each webhook calls, in its namespace', () => {
    const installed = installedConfigMaps('istio', [
      mwc(
        'istio-sidecar-injector',
        { 'istio.io/rev': 'default' },
        { service: { namespace: 'istio-system', name: 'istiod' } },
      ),
      mwc(
        'istio-sidecar-injector-canary',
        { 'istio.io/rev': 'canary' },
        {
          service: { namespace: 'istio-system', name: 'istiod-canary', path: '/inject' },
        },
      ),
      // A revision tag points at a revision's istiod.
      mwc(
        'istio-revision-tag-prod',
        { 'istio.io/tag': 'prod', 'istio.io/rev': 'canary' },
        {
          service: { namespace: 'istio-system', name: 'istiod-canary' },
        },
      ),
      // Some other webhook of the cluster.
      mwc('cert-manager-webhook', {}, { service: { namespace: 'cert-manager', name: 'cert-manager-webhook' } }),
    ]);
    expect([...installed].sort()).toEqual([
      'istio-system/istio',
      'istio-system/istio-canary',
      'istio-system/istio-sidecar-injector',
      'istio-system/istio-sidecar-injector-canary',
    ]);
    expect(isInstalled(installed, 'istio-system', 'istio-sidecar-injector-canary')).toBe(true);
    expect(isInstalled(installed, 'istio-system', 'istio-sidecar-injector-rogue')).toBe(false);
    expect(isInstalled(installed, 'demo', 'istio-sidecar-injector')).toBe(false);
  });

  it('Istio: a webhook calling a URL (an external istiod) names its revision by its label, in any learned namespace', () => {
    const installed = installedConfigMaps('istio', [
      mwc('istio-sidecar-injector-ext', { 'istio.io/rev': 'ext' }, { url: 'https://istiod.example:15017/inject' }),
      mwc('no-label', {}, { url: 'https://x.example/inject' }),
    ]);
    expect([...installed].sort()).toEqual(['*/istio-ext', '*/istio-sidecar-injector-ext']);
    expect(isInstalled(installed, 'istio-system', 'istio-sidecar-injector-ext')).toBe(true);
  });

  it('Linkerd: the proxy injector’s Service, in the control plane’s namespace', () => {
    const installed = installedConfigMaps('linkerd', [
      mwc(
        'linkerd-proxy-injector-webhook-config',
        {},
        { service: { namespace: 'linkerd', name: 'linkerd-proxy-injector' } },
      ),
      mwc('istio-sidecar-injector', {}, { service: { namespace: 'istio-system', name: 'istiod' } }),
    ]);
    expect([...installed].sort()).toEqual(['linkerd/linkerd-config', 'linkerd/linkerd-identity-trust-roots']);
    const byUrl = installedConfigMaps('linkerd', [
      mwc(
        'linkerd-proxy-injector-webhook-config',
        { 'linkerd.io/control-plane-component': 'proxy-injector', 'linkerd.io/control-plane-ns': 'l5d' },
        { url: 'https://injector.example/' },
      ),
      mwc('other', { 'linkerd.io/control-plane-ns': 'evil' }, { url: 'https://x.example/' }),
    ]);
    expect([...byUrl].sort()).toEqual(['l5d/linkerd-config', 'l5d/linkerd-identity-trust-roots']);
  });

  it('no webhook configuration: nothing is trusted', () => {
    expect(installedConfigMaps('istio', []).size).toBe(0);
    expect(webhookConfigView({ metadata: {} })).toBeUndefined();
  });
});

describe('control-plane facts from the mesh’s ConfigMaps', () => {
  const cm = (name: string, namespace: string, data: Record<string, string>) => ({
    metadata: { name, namespace },
    data,
  });

  it('reads the injector values, the mesh config, linkerd-config and the trust roots', () => {
    expect(
      controlPlaneFromConfigMap(
        'istio',
        cm('istio-sidecar-injector-canary', 'istio-system', { values: '{"revision":"canary"}' }),
      ),
    ).toMatchObject({ addresses: ['istiod-canary.istio-system.svc:15012'], certProviders: ['istiod'] });
    expect(
      controlPlaneFromConfigMap(
        'istio',
        cm('istio', 'istio-system', { mesh: 'defaultConfig:\n  discoveryAddress: istiod.x.svc:15012\n' }),
      ),
    ).toEqual({ addresses: ['istiod.x.svc:15012'] });
    expect(
      controlPlaneFromConfigMap('istio', cm('istio-ca-root-cert', 'istio-system', { 'root-cert.pem': 'x' })),
    ).toBeUndefined();
    expect(
      controlPlaneFromConfigMap('linkerd', cm('linkerd-config', 'l5d', { values: 'clusterDomain: corp.local\n' })),
    ).toMatchObject({ addresses: expect.arrayContaining(['linkerd-dst-headless.l5d.svc.corp.local.:8086']) });
    expect(
      controlPlaneFromConfigMap(
        'linkerd',
        cm('linkerd-identity-trust-roots', 'linkerd', {
          'ca-bundle.crt': '-----BEGIN CERTIFICATE-----\nQUJD\n-----END CERTIFICATE-----\n',
        }),
      ),
    ).toEqual({ trustAnchors: ['QUJD'] });
  });

  it('says what is unusable', () => {
    expect(
      controlPlaneFromConfigMap('istio', cm('istio-sidecar-injector', 'istio-system', { values: '{' })),
    ).toHaveProperty('problem');
    expect(controlPlaneFromConfigMap('linkerd', cm('linkerd-identity-trust-roots', 'linkerd', {}))).toEqual({
      problem: 'its ca-bundle.crt holds no certificate',
    });
  });
});
