/**
 * The patch encoder (src/util/base64-json.ts): the answer's patch decodes to exactly the ops, on the corpus's real
 * patches under every profile and on odd values (multi-byte UTF-8, undefined members).
 */
import { describe, expect, it } from 'vitest';
import { base64JsonPatch, jsonPatch, preEncode } from '../../src/util/base64-json.ts';
import { decide } from '../../src/inject/decide.ts';
import { nodeFactsFromState } from '../../src/facts/node-state.ts';
import { parsePod } from '../../src/pod/parse.ts';
import { testConfig } from '../support/config.ts';
import { corpusTemplatePods } from '../support/corpus.ts';

type Op = { op: string; path: string; value?: unknown };
const decoded = (ops: Op[]) => JSON.parse(Buffer.from(base64JsonPatch(ops), 'base64').toString('utf8'));

describe('base64JsonPatch', () => {
  it('decodes to the ops, odd values included', () => {
    const ops: Op[] = [
      { op: 'add', path: '/a~1b', value: { s: 'q"uote é✓𝄞', u: undefined, n: [1, null] } },
      { op: 'remove', path: '/x/0' },
    ];
    expect(decoded(ops)).toEqual(JSON.parse(JSON.stringify(ops)));
  });

  it("decodes to the ops of every corpus pod's patch under every profile", () => {
    const facts = nodeFactsFromState({ nodes: { 'node-a': { verified: true, kubeletVersion: 'v1.34.1' } } }, 'test');
    let patches = 0;
    for (const cfg of [testConfig('custom'), testConfig('istio'), testConfig('linkerd')])
      for (const t of corpusTemplatePods()) {
        const parsed = parsePod(t);
        if (!parsed.ok) continue;
        const d = decide({ pod: parsed.pod, namespace: 'apps' }, facts, cfg);
        if (d.kind !== 'patch') continue;
        patches++;
        expect(decoded(d.ops)).toEqual(JSON.parse(JSON.stringify(d.ops)));
      }
    expect(patches).toBeGreaterThan(10);
  });
});

describe('preEncode', () => {
  it('splices a template JSON that JSON.stringify would write, and freezes it so it cannot go stale', () => {
    const template = preEncode({ name: 'v', args: ['é✓𝄞', 'q"uote'], env: [{ name: 'X', valueFrom: undefined }] });
    const list = preEncode([{ name: 'a', emptyDir: {} }]);
    const ops: Op[] = [
      { op: 'add', path: '/spec/initContainers/0', value: template },
      { op: 'add', path: '/spec/volumes/-', value: list[0] },
      { op: 'add', path: '/spec/containers/-', value: { ...template, image: 'copy' } },
    ];
    expect(jsonPatch(ops)).toBe(JSON.stringify(ops));
    expect(Object.isFrozen(template.args)).toBe(true);
    expect(() => {
      (template as unknown as { name: string }).name = 'changed';
    }).toThrow();
  });
});
