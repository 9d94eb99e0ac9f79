// docs/values.md is generated from values.schema.json and values.yaml (scripts/values-doc.ts): it must be what the
// script writes now, and it must name every key values.yaml sets.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { describe, expect, it } from 'vitest';
import { renderValuesDoc, VALUES_DOC } from '../../scripts/values-doc.ts';
import { chartDir, type Obj } from './helm.ts';

const doc = readFileSync(VALUES_DOC, 'utf8');
const keys = [...doc.matchAll(/^\| `([^`]+)` \|/gm)].map((m) => m[1]);

function paths(v: unknown, prefix: string[] = []): string[] {
  if (!v || typeof v !== 'object' || Array.isArray(v) || Object.keys(v).length === 0) return [prefix.join('.')];
  return Object.entries(v as Obj).flatMap(([k, x]) => paths(x, [...prefix, k]));
}

describe('docs/values.md', () => {
  it('is up to date (regenerate with: node scripts/values-doc.ts)', () => {
    expect(
      doc === renderValuesDoc(),
      'docs/values.md is out of date: run node scripts/values-doc.ts and commit it',
    ).toBe(true);
  });

  it('documents every key values.yaml sets (or the key holding it)', () => {
    const values = parseYaml(readFileSync(join(chartDir, 'values.yaml'), 'utf8'));
    const missing = paths(values).filter((p) => !keys.some((k) => p === k || p.startsWith(`${k}.`)));
    expect(missing).toEqual([]);
    expect(keys).toEqual(
      expect.arrayContaining([
        'mesh',
        'webhook.hostNetwork',
        'nodeAgent.updateStrategy.type',
        'metrics.prometheusRule.certificateExpiryWarningDays',
        'config.cni.maxVerdictAgeSeconds',
      ]),
    );
  });

  it("gives config keys meshgate's own per-profile defaults and the profiles that take them", () => {
    expect(doc).toMatch(
      /^\| `config\.proxy\.uid` \| integer \| 1–2147483647 \| istio: `1337`<br>linkerd: `2102`<br>custom: `1337` \|/m,
    );
    expect(doc).toMatch(/^\| `config\.proxy\.image` \| string \| not empty \| `""` \| mesh custom only\. /m);
  });
});
