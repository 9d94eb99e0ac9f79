// One source of truth for meshgate's configuration: meshgate's loader (src/config/load.ts, semantics.ts) decides what
// a config is; values.schema.json must accept exactly those values, so an install the schema lets through never
// crash-loops on the loader and a value the loader takes is never refused by helm. The cases are generated from the
// schema's own constraints, for every config key each mesh profile allows (every enum member and a non-member, each
// bound and one past it, a wrong type, an empty required string or list) and run through both: the real helm
// (schema and the chart's template checks) and the loader on the ConfigMap helm rendered (or, where helm refused, on
// the same config as the chart would write it). They must agree, except where the loader rejects a combination of
// keys that no per-key schema can see; those rules are listed here, each with the loader's message.
import { parse as parseYaml } from 'yaml';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildConfig } from '../../src/config/load.ts';
import type { MeshName } from '../../src/mesh/types.ts';
import { chartDir, helmWithValues, parseManifests, templateArgs, type Obj } from './helm.ts';
import { MESHES, profileValues } from './profiles.ts';

const schema = JSON.parse(readFileSync(join(chartDir, 'values.schema.json'), 'utf8')) as Obj;

/**
 * The loader's rules between keys (src/config/semantics.ts): the schema checks each key alone, so a value valid on
 * its own can break one of these with the profile's other defaults. The chart cannot know them without restating
 * the loader; meshgate refuses to start with these messages.
 */
const CROSS_KEY_RULES: Array<[string, RegExp]> = [
  [
    'a loopback probe needs the validator to run as the proxy',
    /^validator\.uid\/gid: a loopback probe \(127\.0\.0\.6\) is redirected only for the proxy's UID\/GID/,
  ],
  [
    'an off-pod probe needs the validator not to run as the proxy',
    /^validator\.uid: the probe \S+ leaves the loopback/,
  ],
  [
    'the probe must not target a port the validator listens on',
    /^validator\.probeAddress: port \d+ is a port the validator listens on/,
  ],
  ['container names must differ', /^proxy\.name, init\.name and validator\.name must differ$/],
  ['custom: the init container needs args or a command', /^init\.args: must tell the init container what to redirect$/],
  ['only Istio has an ambient mode', /^ambient\.enabled: only mesh istio has an ambient mode, not (linkerd|custom)$/],
];

const resolve = (node: Obj): Obj =>
  node?.$ref
    ? resolve(
        (node.$ref as string)
          .replace('#/', '')
          .split('/')
          .reduce((o: Obj, k: string) => o[k], schema),
      )
    : node;

/** The closures (additionalProperties: false) the allOf entries put on config for `mesh`, walked to `path`. */
function allowedFor(mesh: MeshName, path: string[]): boolean {
  for (const entry of schema.allOf as Obj[]) {
    const m = entry.if.properties.mesh;
    if (!(m.const === mesh || m.enum?.includes(mesh))) continue;
    let node: Obj | undefined = entry.then.properties.config;
    for (const key of path) {
      if (!node || node === (true as unknown)) break;
      if (node.additionalProperties === false && node.properties && !(key in node.properties)) return false;
      node = node.properties?.[key];
    }
  }
  return true;
}

interface Case {
  path: string[];
  value: unknown;
  why: string;
}

/** Candidate values for one key, from its schema: inside and just outside every constraint. */
function candidates(s: Obj): Array<[unknown, string]> {
  const out: Array<[unknown, string]> = [];
  if (s.enum)
    return [
      ...s.enum.map((v: unknown) => [v, 'enum member'] as [unknown, string]),
      ['not-a-member', 'not an enum member'],
    ];
  const type = Array.isArray(s.type) ? s.type : [s.type];
  if (type.includes('integer') || type.includes('number')) {
    if (s.minimum !== undefined) out.push([s.minimum, 'minimum'], [s.minimum - 1, 'below minimum']);
    if (s.maximum !== undefined) out.push([s.maximum, 'maximum'], [s.maximum + 1, 'above maximum']);
    if (s.exclusiveMinimum !== undefined)
      out.push([s.exclusiveMinimum, 'at exclusive minimum'], [s.exclusiveMinimum + 0.5, 'above exclusive minimum']);
    if (type.includes('integer')) out.push([(s.minimum ?? 1) + 0.5, 'not whole']);
    out.push(['7', 'a string']);
  } else if (type.includes('boolean')) {
    out.push([true, 'true'], [false, 'false'], ['true', 'a string']);
  } else if (type.includes('string')) {
    if (s.minLength) out.push(['', 'empty']);
    if (s.pattern === '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')
      out.push(['valid-name', 'a DNS label'], ['Not_A_Name', 'not a DNS label']);
    out.push([5, 'a number']);
  } else if (type.includes('array') && s.items?.type === 'string') {
    out.push([['x'], 'one string'], [[1], 'a number in the list']);
    if (s.minItems) out.push([[], 'empty list']);
  } else if (type.includes('array') || type.includes('object')) {
    out.push(['x', 'a string instead']);
  }
  return out;
}

/** Every config leaf the schema knows, with its (resolved) schema. */
function leaves(node: Obj, path: string[] = []): Array<[string[], Obj]> {
  const s = resolve(node);
  if (s.type === 'object' && s.additionalProperties === false && s.properties) {
    return Object.entries(s.properties as Obj).flatMap(([k, v]) => leaves(v as Obj, [...path, k]));
  }
  return [[path, s]];
}

function casesFor(mesh: MeshName): Case[] {
  return leaves(schema.properties.config)
    .filter(([path]) => allowedFor(mesh, path))
    .flatMap(([path, s]) => candidates(s).map(([value, why]) => ({ path, value, why })));
}

const setPath = (path: string[], value: unknown): Obj =>
  path.reduceRight<unknown>((v, k) => ({ [k]: v }), value) as Obj;

function merge(a: Obj, b: Obj): Obj {
  const out = { ...a };
  for (const [k, v] of Object.entries(b))
    out[k] = v && typeof v === 'object' && !Array.isArray(v) && a[k] && typeof a[k] === 'object' ? merge(a[k], v) : v;
  return out;
}

interface Outcome {
  helm: boolean;
  helmError: string;
  loaderProblems: string[];
}

async function judge(mesh: MeshName, c: Case): Promise<Outcome> {
  const values = profileValues(mesh, { config: {} });
  values.config = merge(values.config, setPath(c.path, c.value));
  const res = await helmWithValues(templateArgs(), values);
  let config: Obj;
  if (res.code === 0) {
    config = parseYaml(parseManifests(res.stdout).one('ConfigMap', 'meshgate').data['config.yaml']);
  } else {
    // What the chart would have written (templates/_profile.tpl meshgate.config): mesh, the values, the namespace.
    config = {
      mesh,
      ...values.config,
      meshNamespace: 'meshgate',
      validator: { image: 'ghcr.io/meshgate/meshgate:0.1.0', ...(values.config.validator ?? {}) },
    };
  }
  let loaderProblems: string[] = [];
  try {
    buildConfig(config, 'case');
  } catch (err) {
    loaderProblems = (err as { problems?: string[] }).problems ?? [(err as Error).message];
  }
  return {
    helm: res.code === 0,
    helmError: res.stderr
      .split('\n')
      .filter((l) => l.startsWith('- at') || l.includes('Error'))
      .join(' '),
    loaderProblems,
  };
}

/** Runs `work` over `items`, `n` at a time (helm is a process per case). */
async function pool<T, R>(items: T[], n: number, work: (t: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await work(items[i]);
      }
    }),
  );
  return out;
}

describe("values.schema.json (config) and meshgate's loader agree", () => {
  it.each(MESHES)(
    'mesh %s: every generated value is accepted by both or refused by both',
    async (mesh) => {
      const cases = casesFor(mesh);
      const outcomes = await pool(cases, 3, (c) => judge(mesh, c));
      const disagreements: string[] = [];
      const crossKey: string[] = [];
      cases.forEach((c, i) => {
        const o = outcomes[i];
        const loader = o.loaderProblems.length === 0;
        const label = `config.${c.path.join('.')} = ${JSON.stringify(c.value)} (${c.why})`;
        if (o.helm === loader) return;
        if (o.helm && !loader && o.loaderProblems.every((p) => CROSS_KEY_RULES.some(([, re]) => re.test(p)))) {
          crossKey.push(`${label}: ${o.loaderProblems.join('; ')}`);
          return;
        }
        disagreements.push(
          `${label}: helm ${o.helm ? 'accepts' : `refuses (${o.helmError})`}, the loader ${loader ? 'accepts' : `refuses (${o.loaderProblems.join('; ')})`}`,
        );
      });
      console.log(
        `mesh ${mesh}: ${cases.length} generated values, ${outcomes.filter((o) => o.helm).length} accepted by both, ${crossKey.length} refused by the loader only through a rule between keys:\n  ${crossKey.join('\n  ') || '(none)'}`,
      );
      expect(cases.length).toBeGreaterThan(40);
      expect(disagreements).toEqual([]);
    },
    180_000,
  );

  it('each cross-key rule is real: a value the schema accepts that the loader refuses with exactly that message', async () => {
    const values: Array<[MeshName, string[], unknown]> = [
      ['istio', ['validator', 'uid'], 1],
      ['linkerd', ['proxy', 'uid'], 65534],
      ['istio', ['proxy', 'inboundPort'], 15002],
      ['custom', ['init', 'name'], 'meshgate-validate'],
      ['custom', ['init', 'args'], []],
      ['linkerd', ['ambient', 'enabled'], true],
    ];
    const outcomes = await Promise.all(values.map(([mesh, path, value]) => judge(mesh, { path, value, why: 'rule' })));
    CROSS_KEY_RULES.forEach(([name, re], i) => {
      expect(outcomes[i].helm, name).toBe(true);
      expect(
        outcomes[i].loaderProblems.some((p) => re.test(p)),
        `${name}: ${outcomes[i].loaderProblems.join('; ')}`,
      ).toBe(true);
    });
  });
});
