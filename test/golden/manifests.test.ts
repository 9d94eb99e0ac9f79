/**
 * Golden tests over the real workload manifests in shared/corpus/manifests, discovered automatically:
 * `meshgate inject` output per input, per mesh profile and per node-state variant, each checked for idempotency
 * (injecting the output again changes nothing) and against the validating webhook. Istio's manifests go through
 * mesh istio (companion: its injected pods get the redirect decision), Linkerd's through mesh linkerd, and all
 * through mesh custom (meshgate injects). Regenerate with UPDATE_GOLDEN=1.
 */
import { describe, expect, it } from 'vitest';
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments, stringify } from 'yaml';
import { injectCommand } from '../../src/cli/inject.ts';
import { memoryIO } from '../../src/cli/io.ts';
import { expectGolden, expectOnly } from './golden.ts';
import { podTemplates } from '../../src/manifests/workloads.ts';
import { checkPosture } from '../../src/policy/posture.ts';
import { loadNodeState } from '../../src/facts/node-state.ts';
import { parsePod } from '../../src/pod/parse.ts';
import type { MeshName } from '../../src/mesh/types.ts';
import { rawConfig, testConfig } from '../support/config.ts';

const corpus = new URL('../../../shared/corpus/manifests/', import.meta.url);
const inputs = readdirSync(corpus)
  .filter((f) => !f.endsWith('.tsv'))
  .sort();

/** cni: one verified node (pods get the affinity, CNI mode); init: no verified node (privileged init). */
const variants = {
  cni: fileURLToPath(new URL('./testdata/node-state-verified.yaml', import.meta.url)),
  init: fileURLToPath(new URL('./testdata/node-state-none.yaml', import.meta.url)),
};

const configDir = mkdtempSync(join(tmpdir(), 'meshgate-golden-'));
const configFile = (mesh: MeshName) => {
  const file = join(configDir, `${mesh}.yaml`);
  writeFileSync(file, stringify(rawConfig(mesh)));
  return file;
};
const profiles: Array<[MeshName, string, (name: string) => boolean]> = [
  ['istio', configFile('istio'), (n) => n.startsWith('istio__')],
  ['linkerd', configFile('linkerd'), (n) => n.startsWith('linkerd__')],
  ['custom', configFile('custom'), () => true],
];

/** The validating webhook must accept every pod template meshgate patched (its status annotation is there). */
function expectPostureOk(yaml: string, nodeState: string, mesh: MeshName): void {
  const facts = loadNodeState(nodeState);
  const cfg = testConfig(mesh);
  for (const doc of parseAllDocuments(yaml)) {
    const value = doc.toJS();
    if (!value?.kind) continue;
    for (const ref of podTemplates(value)) {
      if (
        !(ref.template.metadata as { annotations?: Record<string, string> } | undefined)?.annotations?.[
          'meshgate.io/status'
        ]
      )
        continue;
      const parsed = parsePod({ metadata: ref.template.metadata, spec: ref.template.spec });
      if (!parsed.ok) throw new Error(parsed.error);
      const r = checkPosture({ pod: parsed.pod, namespace: ref.namespace ?? 'default' }, facts, cfg);
      expect(r.ok ? r : `${r.reason}: ${r.message}`, `${ref.kind} ${ref.name}`).toMatchObject({ ok: true });
    }
  }
}

async function inject(config: string, file: string, nodeState: string, stdin?: string) {
  const io = memoryIO(stdin ?? '');
  const code = await injectCommand(
    ['--config', config, '-f', stdin === undefined ? file : '-', '--node-state', nodeState],
    io,
  );
  return { code, out: io.out, err: io.err };
}

const goldenDir = new URL('./testdata/manifests/', import.meta.url);
const goldenOf = (mesh: MeshName, name: string, variant: string) =>
  new URL(`${mesh}/${name}.${variant}.golden`, goldenDir);

describe('golden: inject over shared/corpus/manifests', () => {
  it('finds the corpus', () => expect(inputs.length).toBeGreaterThan(20));

  it('holds no golden file whose input is gone', () =>
    expectOnly(
      goldenDir,
      profiles.flatMap(([mesh, , applies]) =>
        inputs.filter(applies).flatMap((name) => Object.keys(variants).map((v) => goldenOf(mesh, name, v))),
      ),
    ));

  for (const [mesh, config, applies] of profiles) {
    for (const name of inputs.filter(applies)) {
      for (const [variant, nodeState] of Object.entries(variants)) {
        it(`${mesh}: ${name} [${variant}]`, async () => {
          const first = await inject(config, fileURLToPath(new URL(name, corpus)), nodeState);
          const golden = goldenOf(mesh, name, variant);
          if (first.code !== 0) {
            // Refused or invalid inputs: the error is golden too, and nothing was written to stdout.
            expect(first.out).toBe('');
            expectGolden(golden, `exit ${first.code}\n${first.err.replaceAll(fileURLToPath(corpus), '<corpus>/')}`);
            return;
          }
          expectGolden(golden, first.out);
          expectPostureOk(first.out, nodeState, mesh);
          const second = await inject(config, '-', nodeState, first.out);
          expect(second.code, second.err).toBe(0);
          expect(second.out).toBe(first.out);
        });
      }
    }
  }
});
