/**
 * Golden tests over the real workload manifests in shared/corpus/manifests, discovered automatically:
 * `meshgate inject` output per input and per node-state variant, each checked for idempotency (injecting the
 * output again changes nothing). Regenerate with UPDATE_GOLDEN=1.
 */
import { describe, expect, it } from 'vitest';
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { run } from '../../src/cli/inject.ts';
import { memoryIO } from '../../src/cli/io.ts';
import { expectGolden } from './golden.ts';
import { parseAllDocuments } from 'yaml';
import { podTemplates } from '../../src/manifests/workloads.ts';
import { checkPosture } from '../../src/policy/posture.ts';
import { loadNodeState } from '../../src/facts/node-state.ts';
import { buildConfig } from '../../src/config/load.ts';
import type { Pod } from '../../src/inject/pod.ts';

/**
 * The validating webhook must accept every pod template meshgate injected. Templates it skipped (another mesh's
 * proxy already there) are judged on their own: some of those are rightly refused (a proxy with no redirect).
 */
function expectPostureOk(yaml: string, nodeState: string): void {
  const facts = loadNodeState(nodeState);
  const cfg = buildConfig({});
  for (const doc of parseAllDocuments(yaml)) {
    const value = doc.toJS();
    if (!value?.kind) continue;
    for (const ref of podTemplates(value)) {
      if (!(ref.template.metadata as { annotations?: Record<string, string> } | undefined)?.annotations?.['meshgate.io/status']) continue;
      const pod = { metadata: ref.template.metadata, spec: ref.template.spec } as unknown as Pod;
      const r = checkPosture({ pod, namespace: { name: ref.namespace ?? 'default' } }, facts, cfg);
      expect(r.ok ? r : `${r.reason}: ${r.message}`, `${ref.kind} ${ref.name}`).toMatchObject({ ok: true });
    }
  }
}

const corpus = new URL('../../../shared/corpus/manifests/', import.meta.url);
const inputs = readdirSync(corpus).filter((f) => !f.endsWith('.tsv')).sort();

/** cni: one verified node (pods get the affinity, CNI mode); init: no verified node (privileged init). */
const variants = {
  cni: fileURLToPath(new URL('./testdata/node-state-verified.yaml', import.meta.url)),
  init: fileURLToPath(new URL('./testdata/node-state-none.yaml', import.meta.url)),
};

async function inject(file: string, nodeState: string, stdin?: string) {
  const io = memoryIO(stdin ?? '');
  const code = await run(['-f', stdin === undefined ? file : '-', '--node-state', nodeState], io);
  return { code, out: io.out, err: io.err };
}

describe('golden: inject over shared/corpus/manifests', () => {
  it('finds the corpus', () => expect(inputs.length).toBeGreaterThan(20));

  for (const name of inputs) {
    for (const [variant, nodeState] of Object.entries(variants)) {
      it(`${name} [${variant}]`, async () => {
        const first = await inject(fileURLToPath(new URL(name, corpus)), nodeState);
        const golden = new URL(`./testdata/manifests/${name}.${variant}.golden`, import.meta.url);
        if (first.code !== 0) {
          // Invalid inputs: the error is golden too, and nothing was written to stdout.
          expect(first.out).toBe('');
          expectGolden(golden, `exit ${first.code}\n${first.err.replaceAll(fileURLToPath(corpus), '<corpus>/')}`);
          return;
        }
        expectGolden(golden, first.out);
        expectPostureOk(first.out, nodeState);
        const second = await inject('-', nodeState, first.out);
        expect(second.code).toBe(0);
        expect(second.out).toBe(first.out);
      });
    }
  }
});
