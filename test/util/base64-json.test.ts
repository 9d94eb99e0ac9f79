/**
 * The patch encoder assembles base64 from cached pieces (src/util/base64-json.ts). Whatever the pieces, the
 * decoded text must parse to exactly the ops, and the base64 must be well formed, on the corpus's real
 * patches and on the shapes that could break the 3-byte alignment (odd lengths, multi-byte UTF-8).
 */
import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import { base64JsonPatch } from '../../src/util/base64-json.ts';
import { deepFreeze } from '../../src/util/json.ts';
import { podTemplates } from '../../src/manifests/workloads.ts';
import { decide } from '../../src/inject/decide.ts';
import { buildConfig } from '../../src/config/load.ts';
import { nodeFactsFromState } from '../../src/facts/node-state.ts';
import type { Pod } from '../../src/inject/pod.ts';

type Op = { op: string; path: string; value?: unknown };

function decoded(ops: Op[]): unknown {
  const b64 = base64JsonPatch(ops);
  // Canonical base64: re-encoding the bytes gives the same text, so no piece was misaligned, and '=' only ends it.
  const bytes = Buffer.from(b64, 'base64');
  expect(bytes.toString('base64')).toBe(b64);
  expect(b64.replace(/=+$/, '')).not.toContain('=');
  return JSON.parse(bytes.toString('utf8'));
}

const plain = (ops: Op[]) => JSON.parse(JSON.stringify(ops));

describe('base64JsonPatch', () => {
  const shared = deepFreeze({ name: 'proxy', args: ['--a', 'q"uote', 'é✓𝄞'], env: [{ name: 'X', value: '1', valueFrom: undefined }] });

  it('decodes to the ops: frozen values, fresh lists of them, strings, numbers, ops without a value', () => {
    const ops: Op[] = [
      { op: 'remove', path: '/spec/initContainers/2' },
      { op: 'add', path: '/spec/initContainers', value: [shared, shared] },
      { op: 'add', path: '/spec/containers/-', value: shared },
      { op: 'add', path: '/metadata/annotations/meshgate.io~1status', value: '{"mode":"cni"}\u2028' },
      { op: 'add', path: '/spec/affinity', value: { nodeAffinity: { x: [1, null, true, shared] } } },
      { op: 'replace', path: '/spec/volumes', value: [] },
      { op: 'add', path: '/x', value: [undefined, () => 1] },
    ];
    expect(decoded(ops)).toEqual(plain(ops));
    expect(decoded(ops)).toEqual(plain(ops)); // again, from the caches
    expect(decoded([])).toEqual([]);
  });

  it('keeps alignment whatever the byte length of each piece (0–8 bytes, multi-byte characters)', () => {
    for (let n = 0; n < 9; n++) {
      for (const ch of ['a', 'é', '✓', '𝄞']) {
        const s = ch.repeat(n);
        const ops: Op[] = [
          { op: 'add', path: `/a/${s}`, value: s },
          { op: 'add', path: '/b', value: deepFreeze({ s }) },
          { op: 'add', path: `/c${s}`, value: [deepFreeze([s]), s, n] },
        ];
        expect(decoded(ops)).toEqual(plain(ops));
      }
    }
  });

  it('stays correct past the bound of its piece cache', () => {
    for (let i = 0; i < 5000; i += 7) {
      const ops: Op[] = [{ op: 'add', path: `/metadata/labels/k${i}`, value: `v${i}` }];
      expect(decoded(ops)).toEqual(plain(ops));
    }
  });

  it('encodes the real patch of every corpus pod template', () => {
    const cfg = buildConfig({});
    const facts = nodeFactsFromState({ nodes: { 'node-a': { verified: true, kubeletVersion: 'v1.34.1' } } }, 'test');
    const dir = new URL('../../../shared/corpus/manifests/', import.meta.url);
    let patched = 0;
    for (const file of readdirSync(dir).filter((f) => /\.ya?ml$/.test(f))) {
      for (const doc of parseAllDocuments(readFileSync(new URL(file, dir), 'utf8'))) {
        const value = doc.errors.length ? undefined : doc.toJS();
        if (!value?.kind) continue;
        for (const t of podTemplates(value)) {
          const pod = { metadata: t.template.metadata ?? {}, spec: t.template.spec } as unknown as Pod;
          const d = decide({ pod, namespace: { name: 'apps' } }, facts, cfg);
          if (d.kind !== 'patch') continue;
          patched++;
          expect(decoded(d.ops)).toEqual(plain(d.ops));
        }
      }
    }
    expect(patched).toBeGreaterThan(20);
  });
});
