import { describe, expect, it } from 'vitest';
import { readFileSync, writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildConfig, ConfigError, configFromFlags, loadConfig } from '../../src/config/load.ts';
import { compileConfig } from '../../src/config/compile.ts';
import { placeholderImage } from '../../src/config/semantics.ts';
import { MESH_NAMES } from '../../src/mesh/types.ts';
import { PROFILE_DEFAULTS } from '../../src/config/defaults.ts';
import { MeshgateConfigSchema } from '../../src/config/schema.ts';
import { rawConfig } from '../support/config.ts';

const pinned = new URL('./defaults.json', import.meta.url);

describe('config defaults', () => {
  it('are pinned per mesh profile (regenerate with UPDATE_GOLDEN=1)', () => {
    const profiles = Object.fromEntries(
      MESH_NAMES.map((m) => [m, m === 'custom' ? buildConfig(rawConfig('custom')) : buildConfig({ mesh: m })]),
    );
    const actual = `${JSON.stringify(profiles, null, 2)}\n`;
    if (process.env.UPDATE_GOLDEN === '1') writeFileSync(pinned, actual);
    expect(actual).toBe(readFileSync(pinned, 'utf8'));
  });

  it('are frozen all the way down, and so is the compiled form', () => {
    const c = buildConfig({ mesh: 'istio' });
    expect(Object.isFrozen(c.recognisedImages!.proxy)).toBe(true);
    expect(() => ((c.redirect as { mode: string }).mode = 'off')).toThrow(TypeError);
    const compiled = compileConfig(c);
    expect(Object.isFrozen(compiled.validator.securityContext)).toBe(true);
    expect(() => (compiled.validator.args as string[]).push('--x')).toThrow(TypeError);
  });

  it("name no image that does not exist: companion profiles inject nothing but meshgate's own validator", () => {
    for (const mesh of ['istio', 'linkerd'] as const) {
      const c = buildConfig({ mesh });
      expect(c.validator.image).toBe('ghcr.io/meshgate/meshgate:0.1.0');
      expect(c.proxy).not.toHaveProperty('image');
      expect(c.init).not.toHaveProperty('image');
    }
  });
});

describe('mesh is required and chooses the profile', () => {
  it.each([
    ['no config at all', undefined, /mesh: required: one of istio, linkerd, custom/],
    ['a config without mesh', { redirect: { mode: 'auto' } }, /mesh: required: .*it is missing/],
    ['an unknown mesh', { mesh: 'consul' }, /mesh: required: .*got "consul"/],
  ])('%s is an error', (_n, raw, message) => {
    expect(() => buildConfig(raw, 'test.yaml')).toThrow(message);
  });

  it('mesh custom refuses to start while an injected image is unset or a placeholder', () => {
    expect(() => buildConfig({ mesh: 'custom', cni: { pluginType: 'istio-cni' } })).toThrow(
      /proxy\.image: is not set[\s\S]*init\.image: is not set/,
    );
    expect(() => buildConfig(rawConfig('custom', { proxy: { image: 'ghcr.io/meshgate/proxy:0.1.0' } }))).toThrow(
      /proxy\.image: "ghcr\.io\/meshgate\/proxy:0\.1\.0" names an image that was never published/,
    );
    expect(() => buildConfig(rawConfig('custom', { init: { image: 'registry.example/init:1' } }))).toThrow(
      /init\.image: .* is on an example registry/,
    );
    expect(() => buildConfig(rawConfig('custom', { cni: { pluginType: '' } }))).toThrow(
      /cni\.pluginType: must name the mesh CNI plugin/,
    );
  });

  it.each([
    ['ghcr.io/meshgate/proxy-init:0.1.0', /never published/],
    ['<your-image>', /placeholder/],
    ['REPLACE_ME', /placeholder/],
    ['docker.io/istio/proxyv2:1.27.0', undefined],
    ['cr.l5d.io/linkerd/proxy:edge-25.10.1', undefined],
  ])('placeholderImage(%s)', (image, want) => {
    const why = placeholderImage(image);
    if (want) expect(why).toMatch(want);
    else expect(why).toBeUndefined();
  });

  it('--config and --mesh: exactly one', () => {
    expect(configFromFlags({ mesh: 'linkerd' }).proxy.outboundPort).toBe(4140);
    expect(() => configFromFlags({})).toThrow(/mesh: required/);
    expect(() => configFromFlags({ mesh: 'istio', config: 'x.yaml' })).toThrow(/go alone/);
  });
});

describe('config errors name the key and the value', () => {
  const cases: Array<[string, unknown, RegExp]> = [
    ['unknown top-level key', { mesh: 'istio', redirct: {} }, /redirct: unknown key/],
    ['unknown nested key', { mesh: 'istio', redirect: { mod: 'auto' } }, /redirect\.mod: unknown key/],
    [
      'a template key a companion profile does not use',
      { mesh: 'istio', proxy: { image: 'x' } },
      /proxy\.image: not used with mesh istio: the mesh's own injector injects/,
    ],
    ['Linkerd exempts no GID', { mesh: 'linkerd', proxy: { gid: 2102 } }, /proxy\.gid: not used with mesh linkerd/],
    [
      'recognised images under custom',
      rawConfig('custom', { recognisedImages: { proxy: [] } }),
      /recognisedImages: not used with mesh custom/,
    ],
    [
      'a removed key says what replaced it',
      { mesh: 'istio', injection: { enabled: false } },
      /injection\.enabled: removed: derived from mesh/,
    ],
    ['wrong type', { mesh: 'istio', proxy: { uid: '1337' } }, /proxy\.uid: expected number, got string/],
    [
      'bad enum',
      { mesh: 'istio', redirect: { mode: 'sometimes' } },
      /redirect\.mode: "sometimes" is not one of auto, required, off/,
    ],
    [
      'port out of range',
      { mesh: 'istio', proxy: { outboundPort: 70000 } },
      /proxy\.outboundPort: 70000 is not a port/,
    ],
    ['root uid', { mesh: 'istio', proxy: { uid: 0 } }, /proxy\.uid: 0 is not a non-root ID/],
    [
      "a loopback probe from another UID (never redirected by Istio's rules)",
      { mesh: 'istio', validator: { uid: 1338 } },
      /a loopback probe \(127\.0\.0\.6\) is redirected only for the proxy's UID\/GID/,
    ],
    [
      'an off-pod probe from the proxy UID (exempt)',
      { mesh: 'linkerd', validator: { uid: 2102 } },
      /traffic of the proxy UID 2102 is exempt/,
    ],
    [
      'a probe to 127.0.0.1',
      { mesh: 'istio', validator: { probeAddress: '127.0.0.1:15002' } },
      /127\.0\.0\.1 is never redirected/,
    ],
    [
      'a probe to a port the validator listens on',
      { mesh: 'istio', validator: { probeAddress: '127.0.0.6:15006' } },
      /port 15006 is a port the validator listens on/,
    ],
    [
      'bad quantity (custom)',
      rawConfig('custom', { proxy: { resources: { limits: { cpu: 'lots' } } } }),
      /proxy\.resources\.limits\.cpu: "lots" is not a Kubernetes quantity/,
    ],
    [
      'bad probe address',
      { mesh: 'istio', validator: { probeAddress: 'example.com:80' } },
      /validator\.probeAddress: "example\.com:80" is not IP:PORT/,
    ],
    [
      'an exclusion coverage out of range',
      { mesh: 'istio', exclusions: { outboundCidrCoverage: 0 } },
      /exclusions\.outboundCidrCoverage: 0 is not in 1-32/,
    ],
    [
      'empty recognised images',
      { mesh: 'istio', recognisedImages: { proxy: [] } },
      /recognisedImages\.proxy: must list the repositories/,
    ],
    ['non-string array item', { mesh: 'istio', systemNamespaces: ['a', 3] }, /systemNamespaces\[1\]: expected string/],
    ['top level not a mapping', ['a'], /top level: expected a mapping/],
    ['duplicate container names', { mesh: 'istio', init: { name: 'istio-proxy' } }, /must differ/],
  ];
  it.each(cases)('%s', (_name, raw, message) => {
    expect(() => buildConfig(raw, 'test.yaml')).toThrow(ConfigError);
    expect(() => buildConfig(raw, 'test.yaml')).toThrow(message);
  });

  it('reports every problem at once, with the file name', () => {
    try {
      buildConfig({ mesh: 'istio', redirect: { mode: 'x', onUnverifiedNode: 'y' } }, 'cfg.yaml');
      expect.unreachable();
    } catch (err) {
      expect((err as ConfigError).problems).toHaveLength(2);
      expect((err as Error).message).toMatch(/^invalid configuration in cfg\.yaml/);
    }
  });

  it('loads YAML files and rejects unreadable or invalid ones', () => {
    const dir = mkdtempSync(join(tmpdir(), 'meshgate-cfg-'));
    writeFileSync(join(dir, 'ok.yaml'), 'mesh: linkerd\nredirect:\n  mode: off\n');
    writeFileSync(join(dir, 'bad.yaml'), 'redirect: [\n');
    expect(loadConfig(join(dir, 'ok.yaml')).redirect.mode).toBe('off');
    expect(() => loadConfig(join(dir, 'bad.yaml'))).toThrow(/bad\.yaml[\s\S]*not valid YAML/);
    expect(() => loadConfig(join(dir, 'missing.yaml'))).toThrow(/missing\.yaml[\s\S]*cannot read/);
  });
});

// The loader knows keys and kinds only from src/config/schema.ts: these fail when the declaration, the profiles'
// defaults and the loader's per-mesh tables drift apart.
describe('the loader reads its shape from the schema', () => {
  it.each(MESH_NAMES)("accepts every key of the %s profile's defaults, as they are", (mesh) => {
    const given = structuredClone(PROFILE_DEFAULTS[mesh]);
    // custom's defaults leave the images and the plugin unset, which meshgate refuses until they are set.
    if (mesh === 'custom') {
      given.proxy.image = 'docker.io/istio/proxyv2:1.27.0';
      given.init.image = 'docker.io/istio/proxyv2:1.27.0';
      given.cni.pluginType = 'istio-cni';
    }
    expect(buildConfig(given)).toEqual(given);
  });

  it('lists the keys the schema declares and the profile takes', () => {
    expect(() => buildConfig({ mesh: 'linkerd', proxy: { uidd: 1 } })).toThrow(
      'proxy.uidd: unknown key (known: name, uid, outboundPort, inboundPort)',
    );
    expect(Object.keys(MeshgateConfigSchema.properties.proxy.properties)).toContain('gid');
  });

  it('closes a section the schema closes (proxy.resources), leaves Kubernetes objects free-form', () => {
    expect(() =>
      buildConfig(
        rawConfig('custom', { proxy: { image: 'docker.io/istio/proxyv2:1.27.0', resources: { claim: {} } } }),
      ),
    ).toThrow('proxy.resources.claim: unknown key (known: requests, limits)');
    const c = buildConfig(
      rawConfig('custom', {
        proxy: {
          image: 'docker.io/istio/proxyv2:1.27.0',
          env: [{ name: 'A', valueFrom: { secretKeyRef: { name: 's' } } }],
        },
      }),
    );
    expect(c.proxy.env).toEqual([{ name: 'A', valueFrom: { secretKeyRef: { name: 's' } } }]);
  });

  it('holds a namespace to one apps level: listed as restricted and as baseline at once is refused', () => {
    expect(() =>
      buildConfig({ mesh: 'istio', apps: { restrictedNamespaces: ['a', 'pay'], baselineNamespaces: ['pay'] } }),
    ).toThrow('apps.restrictedNamespaces and apps.baselineNamespaces both list pay: a namespace is held to one level');
    expect(buildConfig({ mesh: 'istio', apps: { restrictedNamespaces: ['pay'] } }).apps.restrictedNamespaces).toEqual([
      'pay',
    ]);
  });

  it("checks an enum against the schema's members before any value check", () => {
    expect(() => buildConfig({ mesh: 'istio', apps: { privileges: 'lax' } })).toThrow(
      'apps.privileges: "lax" is not one of node, restricted, baseline',
    );
    expect(() => buildConfig({ mesh: 'istio', enforcement: { default: 3 } })).toThrow(
      'enforcement.default: expected string, got number (3)',
    );
  });
});
