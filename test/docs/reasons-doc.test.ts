// docs/reasons.md is generated from the catalogue of codes (src/contract/codes/, scripts/reasons-doc.ts): it must be
// what the script writes now, and it must list every code of every family with its sentences.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { REASONS_DOC, renderReasonsDoc } from '../../scripts/reasons-doc.ts';
import { CATALOGUE } from '../../src/contract/codes/index.ts';

const doc = readFileSync(REASONS_DOC, 'utf8');

describe('docs/reasons.md', () => {
  it('is up to date (regenerate with: node scripts/reasons-doc.ts)', () => {
    expect(
      doc === renderReasonsDoc(),
      'docs/reasons.md is out of date: run node scripts/reasons-doc.ts and commit it',
    ).toBe(true);
  });

  it('lists every code of every family under its heading, with its meaning and fix', () => {
    const rows = [...doc.matchAll(/^\| `([^`]+)` \|/gm)].map((m) => m[1]);
    const codes = Object.values(CATALOGUE).flatMap((f) => Object.keys(f.codes));
    expect(rows).toEqual(codes);
    for (const f of Object.values(CATALOGUE)) {
      const at = doc.indexOf(`\n## ${f.title}\n`);
      expect(at, f.title).toBeGreaterThan(0);
      for (const [code, e] of Object.entries(f.codes)) {
        const row = doc.slice(at).match(new RegExp(`^\\| \`${code}\` \\|.*$`, 'm'))?.[0] ?? '';
        expect(row, code).toContain(e.meaning.replaceAll('|', '\\|'));
        if ('fix' in e && e.fix) expect(row, code).toContain(e.fix.replaceAll('|', '\\|'));
      }
    }
    // Spot checks against the code's own words.
    expect(doc).toMatch(
      /^\| `node_unverified` \| the pod's node has no verified CNI chain \| verify the node's CNI chain/m,
    );
    expect(doc).toMatch(/^\| `MeshRedirectFailed` \| .* \| repair \| event \|$/m);
  });
});
