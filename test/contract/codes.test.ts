/**
 * The catalogue of codes (src/contract/codes/) and the code agree (issue 35): every code a `reason` or an Event names
 * in src/ and nri/ is a catalogue code of a component that runs there, and every catalogue code is emitted by each
 * component its entry names, read statically (./emissions.ts). A code added to the source without its entry, an entry
 * left for a code nothing emits any more, or an entry naming the wrong component fails here.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Emitter, ReasonEntry } from '../../src/contract/codes/entry.ts';
import { CATALOGUE, POD_CODES } from '../../src/contract/codes/index.ts';
import { ADMITTED_CODES } from '../../src/contract/codes/pod-admitted.ts';
import { AMBIENT_NODE_CODES } from '../../src/contract/codes/pod-ambient.ts';
import { REFUSED_CODES } from '../../src/contract/codes/pod-refused.ts';
import { VALIDATED_CODES } from '../../src/contract/codes/pod-validated.ts';
import { REASONS } from '../../src/contract/reasons.ts';
import { ADVICE, adviceFor } from '../../src/policy/mutate/advice.ts';
import { CNI_ADVICE, CNI_REASONS } from '../../src/cni/reasons.ts';
import { NODE_REASONS } from '../../src/facts/judge-node.ts';
import { VALIDATOR_REASONS, describeReason } from '../../src/validator/reasons.ts';
import { type Emission, emissions, goEmissions, KUBERNETES_REASONS, stringConstants } from './emissions.ts';

const ROOT = join(import.meta.dirname, '../..');

/**
 * Where each component's decisions are made, as paths from the repository's root (a folder ends in `/`). The pure
 * policy core, with the mesh profiles it asks (src/mesh/), is shared by both webhook handlers (and run by `explain`
 * and `check --pre`), so `mutate` and `validate` share it; the would-deny record reader (src/admission/level.ts) runs in the repair controller and `meshgate check`.
 */
const ROOTS: Record<Emitter, readonly string[]> = {
  mutate: ['src/admission/', 'src/policy/mutate/', 'src/policy/', 'src/policy/ambient/', 'src/mark/', 'src/mesh/'],
  validate: ['src/admission/', 'src/policy/mutate/', 'src/policy/', 'src/policy/ambient/', 'src/mark/', 'src/mesh/'],
  webhook: ['src/server/', 'src/admission/', 'src/facts/'],
  'node-agent': ['src/agent/', 'src/cni/', 'src/node/'],
  guard: ['src/agent/guard/'],
  'nri-plugin': ['nri/'],
  validator: ['src/validator/', 'src/cli/validate-redirect.ts', 'src/cli/validate-ambient.ts'],
  repair: ['src/repair/', 'src/node/', 'src/admission/level.ts'],
  check: ['src/check/', 'src/admission/level.ts'],
};
const runsIn = (emitter: Emitter, file: string) => ROOTS[emitter].some((r) => file === r || file.startsWith(r));

function files(dir: string, ext: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name), ext) : e.name.endsWith(ext) ? [join(dir, e.name)] : [],
  );
}

/** Every emission of src/ (the catalogue itself aside) and of the NRI plugin's Go sources (its tests aside). */
function scan(): Emission[] {
  const ts = files('src', '.ts').filter((f) => !f.startsWith('src/contract/codes/'));
  const text = new Map(ts.map((f) => [f, readFileSync(join(ROOT, f), 'utf8')]));
  const constants = new Map([...text].flatMap(([f, t]) => [...stringConstants(f, t)]));
  const go = files('nri', '.go').filter((f) => !f.endsWith('_test.go'));
  return [
    ...[...text].flatMap(([f, t]) => emissions(f, t, constants)),
    ...go.flatMap((f) => goEmissions(f, readFileSync(join(ROOT, f), 'utf8'))),
  ];
}

type Entry = { family: string; code: string; entry: ReasonEntry };
const ENTRIES: Entry[] = Object.entries(CATALOGUE).flatMap(([family, f]) =>
  Object.entries(f.codes).map(([code, entry]) => ({ family, code, entry: entry as ReasonEntry })),
);

/** Strict emissions no catalogue code of a component running in their file accounts for. */
function uncatalogued(found: readonly Emission[], entries: readonly Entry[]): string[] {
  return found.flatMap((e) => {
    if (!e.strict || typeof e.code !== 'string' || KUBERNETES_REASONS.has(e.code)) return [];
    const code = e.code;
    const same = entries.filter((x) => x.code === code);
    if (same.length === 0) return [`${e.file}:${e.line} emits "${code}", which is in no family of the catalogue`];
    if (same.some((x) => x.entry.emitters.some((m) => runsIn(m, e.file)))) return [];
    const named = same.map((x) => `${x.family}: ${x.entry.emitters.join(', ')}`).join('; ');
    return [`${e.file}:${e.line} emits "${code}", but its catalogue entry names no component running there (${named})`];
  });
}

/** Catalogue (code, emitter) pairs with no emission of the code where the emitter runs. */
function unemitted(found: readonly Emission[], entries: readonly Entry[]): string[] {
  return entries.flatMap(({ family, code, entry }) =>
    entry.emitters.flatMap((m) =>
      found.some((e) => runsIn(m, e.file) && (typeof e.code === 'string' ? e.code === code : e.code.test(code)))
        ? []
        : [`${family}.${code}: no emission where ${m} runs (${ROOTS[m].join(', ')})`],
    ),
  );
}

describe('the catalogue of codes', () => {
  const found = scan();

  it('finds the emissions it is about (sanity: the scan reads the tree)', () => {
    expect(found.filter((e) => e.strict).length).toBeGreaterThan(150);
    const at = (code: string) => found.filter((e) => e.code === code).map((e) => e.file);
    expect(at('proxy_identity_refused')).toEqual(expect.arrayContaining(['nri/policy.go']));
    expect(at('MeshRedirectFailed')).toEqual(expect.arrayContaining(['src/repair/failed/controller.ts']));
    expect(at('node_quarantined')).toEqual(expect.arrayContaining(['src/facts/judge-node.ts']));
  });

  it('holds every code a `reason` or an Event names (in a component its entry names)', () => {
    expect(uncatalogued(found, ENTRIES)).toEqual([]);
  });

  it('holds only codes emitted by each component its entry names', () => {
    expect(unemitted(found, ENTRIES)).toEqual([]);
  });

  it('declares each code once per family: the pod family is four files, none repeating a code', () => {
    const parts = [ADMITTED_CODES, REFUSED_CODES, VALIDATED_CODES, AMBIENT_NODE_CODES].flatMap((p) => Object.keys(p));
    expect(parts.length).toBe(new Set(parts).size);
    expect(Object.keys(POD_CODES)).toEqual(parts);
  });

  it('gives each code a sentence, a component and a surface; codes keep their shape', () => {
    for (const { family, code, entry } of ENTRIES) {
      const where = `${family}.${code}`;
      expect(entry.meaning.length, where).toBeGreaterThan(20);
      expect(entry.fix === undefined || entry.fix.length > 10, where).toBe(true);
      expect(entry.emitters.length, where).toBeGreaterThan(0);
      expect(entry.shows.length, where).toBeGreaterThan(0);
      expect(code, where).toMatch(family === 'event' ? /^(Mesh|Node)[A-Z][A-Za-z]+$/ : /^[a-z][a-z_]*[a-z]$/);
      // A Node condition's reason must match Kubernetes' reason regex.
      if (entry.shows.includes('node-condition'))
        expect(code, where).toMatch(/^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/);
    }
    expect(ENTRIES.length).toBeGreaterThan(140);
  });

  it('is what the lookups give: sentences, fixes and the validator order', () => {
    for (const [code, e] of Object.entries(POD_CODES)) {
      expect(REASONS[code as keyof typeof REASONS]).toBe(e.meaning);
      expect(adviceFor(code)).toBe('fix' in e ? e.fix : adviceFor('no_such_code'));
    }
    expect(Object.keys(ADVICE).length).toBe(Object.values(POD_CODES).filter((e) => 'fix' in e).length);
    for (const [code, e] of Object.entries(CATALOGUE.cni.codes)) {
      expect(CNI_REASONS[code as keyof typeof CNI_REASONS]).toBe(e.meaning);
      expect(CNI_ADVICE[code as keyof typeof CNI_ADVICE]).toBe(e.fix);
    }
    for (const [code, e] of Object.entries(CATALOGUE.node.codes))
      expect(NODE_REASONS[code as keyof typeof NODE_REASONS]).toBe(e.meaning);
    expect(VALIDATOR_REASONS).toEqual(Object.keys(CATALOGUE.validator.codes));
    for (const r of VALIDATOR_REASONS) expect(describeReason(r)).toBe(CATALOGUE.validator.codes[r].meaning);
  });
});

describe('the emission scan', () => {
  const src = `
    const DONE = 'made_done' satisfies string;
    export function f(x: { reason: string }) {
      if (x.reason === 'compared_only') return;
      const tested = new Set(['in_a_set']);
      api.event(pod, 'Warning', 'MeshMadeUp', 'a message');
      const r = { reason: cond ? 'made_up' : 'also_made_up', why: 'a_why' };
      const s = { reason: DONE, other: 'not_a_code_position' };
      const t = { reason: \`\${x.mesh}_allowed\` };
      return ['a_tuple', 'detail'];
    }`;
  const constants = stringConstants('src/x/a.ts', src);
  const got = emissions('src/x/a.ts', src, constants);
  const strict = got.filter((e) => e.strict).map((e) => String(e.code));

  it('takes `reason` literals, Event reasons and constants as strict, and leaves reads out', () => {
    expect(strict).toEqual(['MeshMadeUp', 'made_up', 'also_made_up', 'made_done']);
    const codes = got.map((e) => String(e.code));
    expect(codes).toEqual(expect.arrayContaining(['a_why', 'a_tuple', '/^[a-z_]+_allowed$/']));
    for (const read of ['compared_only', 'in_a_set', 'not_a_code_position']) expect(codes).not.toContain(read);
    expect(goEmissions('nri/p.go', 'const (\n\trefusedCode = "go_code"\n)').map((e) => [e.code, e.line])).toEqual([
      ['go_code', 2],
    ]);
  });

  it('reports a code absent from the catalogue, one whose component does not run there, and one emitted nowhere', () => {
    const entries: Entry[] = [
      { family: 'pod', code: 'made_up', entry: { meaning: 'm', emitters: ['repair'], shows: ['event'] } },
      { family: 'pod', code: 'x_allowed', entry: { meaning: 'm', emitters: ['check'], shows: ['event'] } },
      { family: 'pod', code: 'never_emitted', entry: { meaning: 'm', emitters: ['repair'], shows: ['event'] } },
    ];
    const there = got.map((e) => ({ ...e, file: 'src/repair/a.ts' }));
    expect(uncatalogued(there, entries)).toEqual([
      'src/repair/a.ts:6 emits "MeshMadeUp", which is in no family of the catalogue',
      'src/repair/a.ts:7 emits "also_made_up", which is in no family of the catalogue',
      'src/repair/a.ts:8 emits "made_done", which is in no family of the catalogue',
    ]);
    expect(uncatalogued(got, entries)).toContain(
      'src/x/a.ts:7 emits "made_up", but its catalogue entry names no component running there (pod: repair)',
    );
    expect(unemitted(there, entries)).toEqual([
      'pod.x_allowed: no emission where check runs (src/check/, src/admission/level.ts)',
      'pod.never_emitted: no emission where repair runs (src/repair/, src/node/, src/admission/level.ts)',
    ]);
  });
});
