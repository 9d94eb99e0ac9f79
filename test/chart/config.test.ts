// The contract between chart and binary: for every mesh profile the ConfigMap helm renders must be accepted by
// meshgate's own loader and equal the profile's defaults (but for what only the chart knows), every meshgate process
// reads it, the chart's own notion of the profile (plugin type, validator name, failure exit codes) is meshgate's,
// and values.schema.json allows exactly the keys the loader knows for each profile.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { describe, expect, it } from 'vitest';
import { buildConfig } from '../../src/config/load.ts';
import { PROFILE_DEFAULTS } from '../../src/config/defaults.ts';
import { VALIDATION_FAILURES } from '../../src/repair/failed/failures.ts';
import type { MeshName } from '../../src/mesh/types.ts';
import { chartDir, render, type Obj } from './helm.ts';
import { CUSTOM_REQUIRED, MESHES, profileValues } from './profiles.ts';

async function renderedConfig(values: Obj, namespace = 'meshgate') {
  const r = await render(values, { namespace });
  const text = r.one('ConfigMap', 'meshgate').data['config.yaml'];
  return { r, text, config: buildConfig(parseYaml(text), 'rendered ConfigMap') };
}

const variants: Array<[string, MeshName, Obj, (c: ReturnType<typeof buildConfig>) => void]> = [
  [
    'istio, redirect required',
    'istio',
    { config: { redirect: { mode: 'required' } } },
    (c) => expect(c.redirect.mode).toBe('required'),
  ],
  [
    'istio, a mirror of Istio’s images',
    'istio',
    {
      config: {
        recognisedImages: {
          proxy: ['mirror.corp.io/istio/proxyv2'],
          init: ['mirror.corp.io/istio/proxyv2'],
          validator: ['mirror.corp.io/istio/proxyv2'],
        },
      },
    },
    (c) => expect(c.recognisedImages?.proxy).toEqual(['mirror.corp.io/istio/proxyv2']),
  ],
  [
    'istio, validate on unverified nodes, pod opt-out allowed',
    'istio',
    { config: { redirect: { onUnverifiedNode: 'validate' }, injection: { allowPodOptOut: true } } },
    (c) => expect([c.redirect.onUnverifiedNode, c.injection.allowPodOptOut]).toEqual(['validate', true]),
  ],
  [
    'linkerd, pod opt-in by label, another proxy UID',
    'linkerd',
    {
      config: {
        injection: { podOptInNamespaceLabels: { team: 'a' } },
        proxy: { uid: 2103 },
        validator: { uid: 2104, gid: 2104 },
      },
    },
    (c) => expect([c.injection.podOptInNamespaceLabels, c.proxy.uid]).toEqual([{ team: 'a' }, 2103]),
  ],
  [
    'linkerd, cni-plugin before v1.5.0 (no native sidecars)',
    'linkerd',
    { config: { cni: { redirectsNativeSidecars: false } } },
    (c) => expect(c.cni.redirectsNativeSidecars).toBe(false),
  ],
  [
    'custom templates with env, resources and volumes',
    'custom',
    {
      config: {
        proxy: { ...CUSTOM_REQUIRED.proxy, resources: { requests: { cpu: '50m' } }, env: [{ name: 'A', value: 'b' }] },
        injection: { nativeSidecar: 'off' },
        volumes: [{ name: 'meshgate-proxy-data', emptyDir: { medium: 'Memory' } }],
        validator: { timeoutSeconds: 2.5 },
      },
    },
    (c) => {
      expect(c.proxy.name).toBe('meshgate-proxy'); // merged over the defaults, not replaced
      expect(c.validator.timeoutSeconds).toBe(2.5);
      expect(c.volumes).toHaveLength(1);
    },
  ],
];

describe('rendered meshgate config', () => {
  it.each(MESHES)(
    'mesh %s: accepted by the loader and equal to the profile’s defaults but for namespace and image',
    async (mesh) => {
      const { config, text } = await renderedConfig(profileValues(mesh), 'mesh-system');
      // JSON (which is YAML): the node agent reads it without loading a YAML parser (src/config/load.ts).
      expect(JSON.parse(text).mesh).toBe(mesh);
      expect(config.meshNamespace).toBe('mesh-system');
      expect(config.validator.image).toBe('ghcr.io/meshgate/meshgate:0.1.0');
      const expected = structuredClone(PROFILE_DEFAULTS[mesh]) as Obj;
      if (mesh === 'custom') {
        Object.assign(expected.proxy, CUSTOM_REQUIRED.proxy);
        Object.assign(expected.init, CUSTOM_REQUIRED.init);
        Object.assign(expected.cni, CUSTOM_REQUIRED.cni);
      }
      expect({
        ...config,
        meshNamespace: 'meshgate',
        validator: { ...config.validator, image: expected.validator.image },
      }).toEqual(expected);
    },
  );

  it.each(variants)('%s', async (_name, mesh, values, check) => {
    check((await renderedConfig(profileValues(mesh, values))).config);
  });

  it('sets the validator image from the chart image unless config.validator.image is given', async () => {
    const image = async (values: Obj) => (await renderedConfig(profileValues('istio', values))).config.validator.image;
    expect(await image({ image: { repository: 'r.corp.io/mg', tag: '9.9' } })).toBe('r.corp.io/mg:9.9');
    expect(await image({ image: { digest: `sha256:${'a'.repeat(64)}` } })).toBe(
      `ghcr.io/meshgate/meshgate@sha256:${'a'.repeat(64)}`,
    );
    expect(await image({ config: { validator: { image: 'v.corp.io/v:1' } } })).toBe('v.corp.io/v:1');
  });

  it('renders no image that does not exist: every image is meshgate’s own or one the values named', async () => {
    for (const mesh of MESHES) {
      const { r } = await renderedConfig(profileValues(mesh));
      const images = r.docs.flatMap((d) =>
        [...(d.spec?.template?.spec?.containers ?? []), ...(d.spec?.template?.spec?.initContainers ?? [])].map(
          (c: Obj) => c.image,
        ),
      );
      expect(new Set(images), mesh).toEqual(new Set(['ghcr.io/meshgate/meshgate:0.1.0']));
      const text = r.docs.map((d) => JSON.stringify(d)).join('\n');
      expect(text).not.toMatch(/ghcr\.io\/meshgate\/proxy/);
    }
  });

  it('the webhook, the node agent and the repair controller all read this ConfigMap with --config', async () => {
    const { r } = await renderedConfig(profileValues('linkerd'));
    for (const [kind, name] of [
      ['Deployment', 'meshgate'],
      ['DaemonSet', 'meshgate-node-agent'],
      ['Deployment', 'meshgate-repair-controller'],
    ]) {
      const pod = r.one(kind, name).spec.template.spec;
      const c = pod.containers[0];
      const mount = c.volumeMounts.find((m: Obj) => m.name === 'config');
      expect(c.args, name).toContain(`--config=${mount.mountPath}/config.yaml`);
      expect(pod.volumes).toContainEqual({ name: 'config', configMap: { name: 'meshgate' } });
      // A config change restarts it: each reads the file once, at startup.
      expect(r.one(kind, name).spec.template.metadata.annotations['checksum/config']).toMatch(/^[0-9a-f]{64}$/);
    }
    expect(
      r.one('DaemonSet').spec.template.spec.containers[0].args.some((a: string) => a.startsWith('--plugin-type')),
    ).toBe(false);
  });
});

describe('the chart’s notion of each profile is meshgate’s', () => {
  it.each(MESHES)(
    'mesh %s: validator name and failure exit codes in the repair controller’s admission policy',
    async (mesh) => {
      const { r, config } = await renderedConfig(profileValues(mesh));
      const policy = JSON.stringify(r.one('ValidatingAdmissionPolicy', 'meshgate-repair-controller').spec);
      expect(policy).toContain(`s.name == '${config.validator.name}'`);
      expect(policy).toContain(`in [${VALIDATION_FAILURES[mesh].map((f) => f.exitCode).join(',')}]`);
    },
  );
});

describe('values.schema.json config section', () => {
  const schema = JSON.parse(readFileSync(join(chartDir, 'values.schema.json'), 'utf8'));
  const base: Obj = schema.properties.config.properties;
  /** The closures (additionalProperties: false) the allOf entries put on config for this mesh. */
  const closures = (mesh: MeshName): Obj[] =>
    schema.allOf
      .filter((e: Obj) => {
        const m = e.if.properties.mesh;
        return m.const === mesh || m.enum?.includes(mesh);
      })
      .map((e: Obj) => e.then.properties.config);
  const allowed = (props: Obj, limits: Obj[]): string[] =>
    Object.keys(props).filter((k) => limits.every((l) => l?.additionalProperties !== false || k in l.properties));

  /** Key paths (two levels) the schema allows for a mesh. */
  function schemaPaths(mesh: MeshName): string[] {
    const top = closures(mesh);
    return allowed(base, top).flatMap((k) => {
      const node = base[k];
      if (node.type !== 'object' || node.additionalProperties !== false) return [k];
      return allowed(
        node.properties,
        top.map((t) => t.properties?.[k]),
      ).map((sub) => `${k}.${sub}`);
    });
  }

  /** Key paths the loader accepts for a mesh: those of the profile's defaults (objects merge key by key). */
  function loaderPaths(mesh: MeshName): string[] {
    const d = PROFILE_DEFAULTS[mesh] as unknown as Obj;
    return Object.keys(d)
      .filter((k) => k !== 'mesh' && k !== 'meshNamespace')
      .flatMap((k) => {
        const v = d[k];
        return v && typeof v === 'object' && !Array.isArray(v) && k !== 'volumes'
          ? Object.keys(v).map((s) => `${k}.${s}`)
          : [k];
      });
  }

  it.each(MESHES)('mesh %s: the schema allows exactly the keys meshgate’s loader knows', (mesh) => {
    expect(
      schemaPaths(mesh).sort(),
      'keep charts/meshgate/values.schema.json (config) in step with src/config/defaults.ts',
    ).toEqual(loaderPaths(mesh).sort());
  });
});
