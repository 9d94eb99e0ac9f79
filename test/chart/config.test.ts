// The contract between chart and binary: the ConfigMap helm renders must be accepted by meshgate's own config
// loader in every mode, the chart's defaults must be meshgate's defaults, and values.schema.json must describe
// exactly the keys the loader knows (so a value the schema accepts never becomes a startup error).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { describe, expect, it } from 'vitest';
import { buildConfig } from '../../src/config/load.ts';
import { defaultConfig } from '../../src/config/defaults.ts';
import { chartDir, render, type Obj } from './helm.ts';

async function renderedConfig(values: Obj, namespace = 'meshgate') {
  const r = await render(values, { namespace });
  const cm = r.one('ConfigMap', 'meshgate');
  const text = cm.data['config.yaml'];
  return { text, config: buildConfig(parseYaml(text), 'rendered ConfigMap'), deployment: r.one('Deployment') };
}

const modes: Array<[string, Obj, (c: ReturnType<typeof buildConfig>) => void]> = [
  ['redirect auto (default)', {}, (c) => expect(c.redirect.mode).toBe('auto')],
  ['redirect required', { config: { redirect: { mode: 'required' } } }, (c) => expect(c.redirect.mode).toBe('required')],
  ['redirect off', { config: { redirect: { mode: 'off' } } }, (c) => expect(c.redirect.mode).toBe('off')],
  ['validate on unverified nodes', { config: { redirect: { onUnverifiedNode: 'validate' } } }, (c) => expect(c.redirect.onUnverifiedNode).toBe('validate')],
  ['enforce-only behind Istio', { config: { injection: { enabled: false, nativeSidecar: 'off' } } }, (c) => {
    expect(c.injection.enabled).toBe(false);
    expect(c.injection.nativeSidecar).toBe('off');
  }],
  ['cert-manager, Ignore', { certs: { mode: 'cert-manager' }, webhook: { mutating: { failurePolicy: 'Ignore' } } }, (c) => expect(c.redirect.mode).toBe('auto')],
  ['custom templates', {
    config: {
      proxy: { image: 'registry.example/proxy:1', uid: 2001, resources: { requests: { cpu: '50m' } }, env: [{ name: 'A', value: 'b' }] },
      init: { image: 'registry.example/init:1', args: ['redirect', '--x'] },
      validator: { uid: 2002, timeoutSeconds: 2.5, probeAddress: '192.0.2.9:80' },
      injection: { podOptInNamespaceLabels: { team: 'a' }, recognisedProxyContainers: ['istio-proxy'] },
      volumes: [{ name: 'meshgate-proxy-data', emptyDir: { medium: 'Memory' } }],
    },
  }, (c) => {
    expect(c.proxy.uid).toBe(2001);
    expect(c.proxy.name).toBe(defaultConfig.proxy.name); // merged over the defaults, not replaced
    expect(c.validator.timeoutSeconds).toBe(2.5);
    expect(c.injection.podOptInNamespaceLabels).toEqual({ team: 'a' });
  }],
];

describe('rendered meshgate config', () => {
  it.each(modes)('is accepted by buildConfig: %s', async (_name, values, check) => {
    const { config } = await renderedConfig(values);
    expect(config.meshNamespace).toBe('meshgate');
    check(config);
  });

  it('equals meshgate’s built-in defaults, except what only the chart knows', async () => {
    const { config } = await renderedConfig({}, 'mesh-system');
    expect(config.meshNamespace).toBe('mesh-system');
    expect(config.validator.image).toBe('ghcr.io/meshgate/meshgate:0.1.0');
    expect({ ...config, meshNamespace: defaultConfig.meshNamespace, validator: { ...config.validator, image: defaultConfig.validator.image } })
      .toEqual(defaultConfig);
  });

  it('sets the validator image from the chart image unless config.validator.image is given', async () => {
    expect((await renderedConfig({ image: { repository: 'r.example/mg', tag: '9.9' } })).config.validator.image).toBe('r.example/mg:9.9');
    expect((await renderedConfig({ image: { digest: `sha256:${'a'.repeat(64)}` } })).config.validator.image).toBe(`ghcr.io/meshgate/meshgate@sha256:${'a'.repeat(64)}`);
    expect((await renderedConfig({ config: { validator: { image: 'v.example/v:1' } } })).config.validator.image).toBe('v.example/v:1');
  });

  it('is the file the Deployment passes to --config', async () => {
    const { deployment } = await renderedConfig({});
    const c = deployment.spec.template.spec.containers[0];
    const mount = c.volumeMounts.find((m: Obj) => m.name === 'config');
    expect(c.args).toContain(`--config=${mount.mountPath}/config.yaml`);
  });
});

describe('values.schema.json config section', () => {
  const schema = JSON.parse(readFileSync(join(chartDir, 'values.schema.json'), 'utf8'));

  /** Keys only one side has, walking the schema's closed objects and the defaults in parallel. */
  function mismatches(node: Obj, value: Obj, prefix: string, out: string[]): string[] {
    const props: Obj = node.properties ?? {};
    for (const k of new Set([...Object.keys(props), ...Object.keys(value)])) {
      const path = `${prefix}${k}`;
      if (!(k in props)) out.push(`${path}: in meshgate's config but not in the schema`);
      else if (!(k in value)) out.push(`${path}: in the schema but unknown to meshgate's config`);
      else if (props[k].additionalProperties === false && value[k] && typeof value[k] === 'object') mismatches(props[k], value[k], `${path}.`, out);
    }
    return out;
  }

  it('allows exactly the keys meshgate’s loader knows (meshNamespace is the chart’s)', () => {
    const problems = mismatches(schema.properties.config, defaultConfig, '', []);
    expect(problems, 'keep charts/meshgate/values.schema.json (config) in step with src/config/types.ts').toEqual([
      "meshNamespace: in meshgate's config but not in the schema",
    ]);
  });
});
