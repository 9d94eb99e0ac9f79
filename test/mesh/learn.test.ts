/**
 * What the installed mesh injects, read from its own ConfigMap values (src/mesh/learn.ts): Istio's per revision
 * (global.hub, global.proxy.image, global.proxy_init.image, as pkg/kube/inject builds the image), Linkerd's
 * linkerd-config (proxy.image.name, the older proxyInit.image.name). The e2e test feeds it the ConfigMap rendered by
 * Istio's own chart (test/e2e/istio-managed.test.ts).
 */
import { describe, expect, it } from 'vitest';
import {
  isIstioInjectorConfigMap,
  isLinkerdConfigMap,
  istioInjectorImages,
  istioProxyImage,
  linkerdConfigImages,
  unionImages,
} from '../../src/mesh/learn.ts';
import { withLearned } from '../../src/config/learned.ts';
import { cfg } from '../policy/mutate/fixtures.ts';

describe("Istio's istio-sidecar-injector values", () => {
  it.each<[string, unknown, string, string]>([
    [
      'AKS add-on',
      { global: { hub: 'mcr.microsoft.com/oss/istio', tag: '1.24.6-distroless' } },
      'mcr.microsoft.com/oss/istio/proxyv2',
      'mcr.microsoft.com/oss/istio/proxyv2',
    ],
    [
      'GKE ASM',
      { global: { hub: 'gcr.io/gke-release/asm', tag: '1.16.7-asm.10', proxy: { image: 'proxyv2' } } },
      'gcr.io/gke-release/asm/proxyv2',
      'gcr.io/gke-release/asm/proxyv2',
    ],
    [
      'a private mirror with its own image name',
      { global: { hub: 'registry.corp/mesh', proxy: { image: 'istio-proxy-fips' } } },
      'registry.corp/mesh/istio-proxy-fips',
      'registry.corp/mesh/istio-proxy-fips',
    ],
    [
      'a full proxy image (with a "/")',
      { global: { hub: 'docker.io/istio', proxy: { image: 'registry.corp/istio/proxyv2:1.27.0' } } },
      'registry.corp/istio/proxyv2',
      'registry.corp/istio/proxyv2',
    ],
    [
      'a separate init image (with a "/")',
      { global: { hub: 'docker.io/istio', proxy_init: { image: 'registry.corp/istio/proxyv2-init' } } },
      'docker.io/istio/proxyv2',
      'registry.corp/istio/proxyv2-init',
    ],
    [
      'an init image without a "/" is not used (the template takes the proxy image)',
      { global: { hub: 'docker.io/istio', proxy_init: { image: 'proxyv2' } } },
      'docker.io/istio/proxyv2',
      'docker.io/istio/proxyv2',
    ],
  ])('%s', (_n, values, proxy, init) => {
    expect(istioInjectorImages(values)).toEqual({ proxy: [proxy], init: [init], validator: [init] });
  });

  // The one reader of Istio's values: check --pre shows the image the injector writes, learning trusts its repository.
  it.each<[string, unknown, string | undefined]>([
    [
      'hub, default image and tag',
      { global: { hub: 'docker.io/istio', tag: '1.27.0' } },
      'docker.io/istio/proxyv2:1.27.0',
    ],
    ['a numeric tag, as fmt.Sprint writes it', { global: { hub: 'h.io/i', tag: 1.27 } }, 'h.io/i/proxyv2:1.27'],
    ['an image with a "/" as it is', { global: { hub: 'x.io', proxy: { image: 'r.io/p:1' } } }, 'r.io/p:1'],
    ['no hub and no registry in the image', { global: { proxy: { image: 'proxyv2' } } }, undefined],
  ])('istioProxyImage: %s', (_n, values, image) => {
    expect(istioProxyImage(values)).toBe(image);
  });

  it.each<[string, unknown, RegExp]>([
    ['no hub', { global: { tag: '1.27.0' } }, /no global\.hub/],
    ['not an object', 'text', /no global\.hub/],
    ['an empty hub', { global: { hub: ' ' } }, /no global\.hub/],
  ])('refuses values with %s', (_n, values, problem) => {
    expect(istioInjectorImages(values)).toEqual({ problem: expect.stringMatching(problem) });
  });

  it('finds the ConfigMap of every revision, and only those', () => {
    expect(
      ['istio-sidecar-injector', 'istio-sidecar-injector-canary', 'istio-sidecar-injector-asm-1-24'].every(
        isIstioInjectorConfigMap,
      ),
    ).toBe(true);
    expect(['istio', 'istio-sidecar-injectorx', 'values'].some(isIstioInjectorConfigMap)).toBe(false);
  });
});

describe("Linkerd's linkerd-config values", () => {
  it('one image for the proxy, its init container and its validator', () => {
    expect(
      linkerdConfigImages({ proxy: { image: { name: 'registry.corp/linkerd/proxy', version: 'edge-25.10.1' } } }),
    ).toEqual({
      proxy: ['registry.corp/linkerd/proxy'],
      init: ['registry.corp/linkerd/proxy'],
      validator: ['registry.corp/linkerd/proxy'],
    });
  });

  it('the older proxyInit image beside it', () => {
    const l = linkerdConfigImages({
      proxy: { image: { name: 'cr.l5d.io/linkerd/proxy' } },
      proxyInit: { image: { name: 'cr.l5d.io/linkerd/proxy-init' } },
    });
    expect(l).toMatchObject({ init: ['cr.l5d.io/linkerd/proxy', 'cr.l5d.io/linkerd/proxy-init'] });
  });

  it('refuses values without proxy.image.name', () => {
    expect(linkerdConfigImages({ proxy: {} })).toEqual({ problem: expect.stringMatching(/no proxy\.image\.name/) });
    expect(isLinkerdConfigMap('linkerd-config')).toBe(true);
    expect(isLinkerdConfigMap('linkerd-config-overrides')).toBe(false);
  });
});

describe('the configuration with learned images', () => {
  const learned = {
    proxy: ['mcr.microsoft.com/oss/istio/proxyv2'],
    init: ['mcr.microsoft.com/oss/istio/proxyv2'],
    validator: ['mcr.microsoft.com/oss/istio/proxyv2'],
  };

  it('trusts them beside the configured ones, each once', () => {
    const base = cfg('istio');
    const c = withLearned(base, { images: learned });
    expect(c.identity.images.proxy).toEqual([...base.identity.images.proxy, 'mcr.microsoft.com/oss/istio/proxyv2']);
    expect(base.identity.images.proxy).not.toContain('mcr.microsoft.com/oss/istio/proxyv2');
    expect(unionImages([learned, learned]).proxy).toEqual(['mcr.microsoft.com/oss/istio/proxyv2']);
  });

  it('is the given configuration itself when nothing was learned', () => {
    const base = cfg('istio');
    expect(withLearned(base, { images: { proxy: [], init: [], validator: [] } })).toBe(base);
  });
});
