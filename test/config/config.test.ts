import { describe, expect, it } from 'vitest';
import { readFileSync, writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildConfig, ConfigError, loadConfig } from '../../src/config/load.ts';

const pinned = new URL('./defaults.json', import.meta.url);

describe('config defaults', () => {
  it('are pinned by testdata (regenerate with UPDATE_GOLDEN=1)', () => {
    const actual = JSON.stringify(buildConfig({}), null, 2) + '\n';
    if (process.env.UPDATE_GOLDEN) writeFileSync(pinned, actual);
    expect(actual).toBe(readFileSync(pinned, 'utf8'));
  });

  it('are frozen all the way down', () => {
    const c = buildConfig({});
    expect(Object.isFrozen(c)).toBe(true);
    expect(Object.isFrozen(c.proxy.resources.requests)).toBe(true);
    expect(() => ((c.redirect as { mode: string }).mode = 'off')).toThrow(TypeError);
  });
});

describe('config merging', () => {
  it('merges objects key by key and replaces arrays', () => {
    const c = buildConfig({ redirect: { mode: 'required' }, systemNamespaces: ['kube-system'] });
    expect(c.redirect).toEqual({ mode: 'required', onUnverifiedNode: 'reject' });
    expect(c.systemNamespaces).toEqual(['kube-system']);
  });

  it('accepts enforce-only with a null pod opt-in selector and a label map', () => {
    expect(buildConfig({ injection: { enabled: false } }).injection.enabled).toBe(false);
    expect(buildConfig({ injection: { podOptInNamespaceLabels: { team: 'a' } } }).injection.podOptInNamespaceLabels).toEqual({ team: 'a' });
  });
});

describe('config errors name the key and the value', () => {
  const cases: Array<[string, unknown, RegExp]> = [
    ['unknown top-level key', { redirct: {} }, /redirct: unknown key/],
    ['unknown nested key', { redirect: { mod: 'auto' } }, /redirect\.mod: unknown key/],
    ['wrong type', { proxy: { uid: '1337' } }, /proxy\.uid: expected number, got string/],
    ['bad enum', { redirect: { mode: 'sometimes' } }, /redirect\.mode: "sometimes" is not one of auto, required, off/],
    ['bad onUnverifiedNode', { redirect: { onUnverifiedNode: 'ignore' } }, /onUnverifiedNode: "ignore"/],
    ['port out of range', { proxy: { outboundPort: 70000 } }, /proxy\.outboundPort: 70000 is not a port/],
    ['root uid', { proxy: { uid: 0 } }, /proxy\.uid: 0 is not a non-root UID/],
    ['same uid', { validator: { uid: 1337 } }, /validator\.uid: must differ from proxy\.uid/],
    ['bad quantity', { proxy: { resources: { limits: { cpu: 'lots' } } } }, /proxy\.resources\.limits\.cpu: "lots" is not a Kubernetes quantity/],
    ['bad probe address', { validator: { probeAddress: 'example.com:80' } }, /validator\.probeAddress: "example\.com:80" is not IP:PORT/],
    ['non-string array item', { systemNamespaces: ['a', 3] }, /systemNamespaces\[1\]: expected string/],
    ['top level not a mapping', ['a'], /top level: expected a mapping/],
    ['duplicate container names', { init: { name: 'meshgate-proxy' } }, /must differ/],
  ];
  it.each(cases)('%s', (_name, raw, message) => {
    expect(() => buildConfig(raw, 'test.yaml')).toThrow(ConfigError);
    expect(() => buildConfig(raw, 'test.yaml')).toThrow(message);
  });

  it('reports every problem at once, with the file name', () => {
    try {
      buildConfig({ redirect: { mode: 'x', onUnverifiedNode: 'y' } }, 'cfg.yaml');
      expect.unreachable();
    } catch (err) {
      expect((err as ConfigError).problems).toHaveLength(2);
      expect((err as Error).message).toMatch(/^invalid configuration in cfg\.yaml/);
    }
  });

  it('loads YAML files and rejects unreadable or invalid ones', () => {
    const dir = mkdtempSync(join(tmpdir(), 'meshgate-cfg-'));
    writeFileSync(join(dir, 'ok.yaml'), 'redirect:\n  mode: off\n');
    writeFileSync(join(dir, 'bad.yaml'), 'redirect: [\n');
    expect(loadConfig(join(dir, 'ok.yaml')).redirect.mode).toBe('off');
    expect(() => loadConfig(join(dir, 'bad.yaml'))).toThrow(/bad\.yaml[\s\S]*not valid YAML/);
    expect(() => loadConfig(join(dir, 'missing.yaml'))).toThrow(/missing\.yaml[\s\S]*cannot read/);
  });
});
