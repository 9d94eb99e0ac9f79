// The guides cannot rot: every YAML block in docs/istio.md, docs/linkerd.md, docs/install.md and docs/platforms/ is a
// values file that real helm renders and meshgate's own loader accepts; every `helm install` command in them renders
// with its `-f` file (a block of the same guide) and `--set` values; and every webhook name, reason code and
// values/config key the prose mentions exists.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { describe, expect, it } from 'vitest';
import { buildConfig } from '../../src/config/load.ts';
import { PROFILE_DEFAULTS } from '../../src/config/defaults.ts';
import { CATALOGUE } from '../../src/contract/codes/index.ts';
import type { MeshName } from '../../src/mesh/types.ts';
import { repoRoot } from '../e2e/harness/binaries.ts';
import { chartDir, render, type Obj } from './helm.ts';

const GUIDES: Array<[string, MeshName | undefined]> = [
  ['docs/istio.md', 'istio'],
  ['docs/linkerd.md', 'linkerd'],
  ['docs/install.md', undefined],
  ['docs/platforms/eks.md', undefined],
  ['docs/platforms/gke.md', undefined],
  ['docs/platforms/aks.md', undefined],
  ['docs/platforms/openshift.md', undefined],
  ['docs/platforms/cilium.md', undefined],
];

interface Block {
  name?: string;
  values: Obj;
}

function yamlBlocks(text: string): Block[] {
  return [...text.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => ({
    name: /^# ([\w.-]+\.ya?ml)\b/.exec(m[1])?.[1],
    values: parseYaml(m[1]) as Obj,
  }));
}

/** `helm install meshgate charts/meshgate …` commands, continuation lines joined, as argument lists. */
function helmInstalls(text: string): string[][] {
  const lines = text.replace(/\\\n\s*/g, ' ').split('\n');
  return lines
    .filter((l) => /^helm install meshgate charts\/meshgate\b/.test(l.trim()))
    .map((l) => l.replace(/#.*$/, '').trim().split(/\s+/));
}

/** Values from `--set a.b=c` arguments (scalars only, as the guides use them). */
function setValues(args: string[]): Obj {
  const out: Obj = {};
  args.forEach((a, i) => {
    if (a !== '--set') return;
    const [path, value] = args[i + 1].split(/=(.*)/s);
    const keys = path.split('.');
    let node = out;
    for (const k of keys.slice(0, -1)) node = node[k] ??= {};
    node[keys.at(-1)!] = value;
  });
  return out;
}

function deepMerge(a: Obj, b: Obj): Obj {
  const out = { ...a };
  for (const [k, v] of Object.entries(b))
    out[k] = v && typeof v === 'object' && !Array.isArray(v) && typeof a[k] === 'object' ? deepMerge(a[k], v) : v;
  return out;
}

async function loaderAccepts(values: Obj) {
  const r = await render(values);
  return {
    r,
    config: buildConfig(parseYaml(r.one('ConfigMap', 'meshgate').data['config.yaml']), 'rendered ConfigMap'),
  };
}

describe.each(GUIDES)('%s', (file, mesh) => {
  const text = readFileSync(join(repoRoot, file), 'utf8');
  const blocks = yamlBlocks(text);

  it('every YAML block is a values file helm renders and meshgate’s loader accepts', async () => {
    for (const b of blocks) {
      if (mesh) expect(b.values.mesh, b.name).toBe(mesh);
      const { config } = await loaderAccepts(b.values);
      expect(config.mesh).toBe(b.values.mesh);
    }
    if (mesh) expect(blocks.length).toBeGreaterThanOrEqual(2);
  });

  it('every helm install command renders, with its -f file taken from this guide', async () => {
    const commands = helmInstalls(text);
    expect(commands.length).toBeGreaterThanOrEqual(1);
    for (const args of commands) {
      const f = args.indexOf('-f');
      const fromFile = f < 0 ? {} : blocks.find((b) => b.name === args[f + 1])?.values;
      expect(fromFile, `${args.join(' ')}: no YAML block named ${args[f + 1]}`).toBeDefined();
      const values = deepMerge(fromFile!, setValues(args));
      expect(await loaderAccepts(values).then(() => 'ok')).toBe('ok');
    }
  });

  it('the webhook names, reason codes and keys it mentions exist', async () => {
    const names = [...text.matchAll(/"([a-z0-9-]+)\.(mutate|validate)\.meshgate\.io"/g)];
    if (names.length) {
      const { r } = await loaderAccepts(blocks[0].values);
      const rendered = [
        ...r.one('MutatingWebhookConfiguration').webhooks,
        ...r.one('ValidatingWebhookConfiguration').webhooks,
      ].map((w: Obj) => w.name);
      for (const [, entry, kind] of names) expect(rendered).toContain(`${entry}.${kind}.meshgate.io`);
    }
    // Every code a guide names is one the catalogue declares (src/contract/codes/).
    const codes = new Set(Object.values(CATALOGUE).flatMap((f) => Object.keys(f.codes)));
    for (const [, code] of text.matchAll(/\[([a-z_]+)\]`?\)?/g)) expect(codes, `[${code}]`).toContain(code);
    for (const [, code] of text.matchAll(/`([a-z]+_[a-z_]+)`/g)) {
      if (!/^(plugin|mesh|binary|node|no|unrendered|unparsable|cni|opt|redirect|affinity)_/.test(code)) continue;
      expect(codes, code).toContain(code);
    }
    const chartValues = parseYaml(readFileSync(join(chartDir, 'values.yaml'), 'utf8')) as Obj;
    for (const [, path] of text.matchAll(/`((?:webhook|nodeAgent|repairController|certs)\.[\w.]+)`/g)) {
      const found = path
        .split('.')
        .reduce<unknown>((n, k) => (n && typeof n === 'object' ? (n as Obj)[k] : undefined), chartValues);
      expect(found, `${file}: chart value ${path}`).toBeDefined();
    }
    for (const [, path] of text.matchAll(/`config\.([\w.]+)`/g)) {
      const profiles = mesh ? [mesh] : (['istio', 'linkerd', 'custom'] as const);
      const known = profiles.some(
        (m) =>
          path
            .split('.')
            .reduce<unknown>(
              (n, k) => (n && typeof n === 'object' && k in (n as Obj) ? (n as Obj)[k] : undefined),
              PROFILE_DEFAULTS[m],
            ) !== undefined,
      );
      expect(known, `${file}: config key ${path}`).toBe(true);
    }
  });
});
