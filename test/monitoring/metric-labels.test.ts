/**
 * meshgate_build_info in each of the three processes' registries, and the namespace label of refusals: on deny and
 * error only, bounded to the first MAX_REFUSAL_NAMESPACES namespaces (src/server/metrics.ts). The webhook's series
 * as really served are checked in scrape.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { createMetrics, MAX_REFUSAL_NAMESPACES, refusalNamespaces } from '../../src/server/metrics.ts';
import { createAgentMetrics } from '../../src/agent/metrics.ts';
import { createRepairMetrics } from '../../src/repair/metrics.ts';
import { versionInfo } from '../../src/util/version.ts';

/** The family's TYPE and its series, read from the text a scrape gets (label values here need no unescaping). */
function family(text: string, name: string) {
  const type = new RegExp(`^# TYPE ${name} (\\w+)$`, 'm').exec(text)?.[1];
  const series = [...text.matchAll(new RegExp(`^${name}\\{([^}]*)\\} (\\S+)$`, 'gm'))].map(([, labels, value]) => ({
    value: Number(value),
    labels: Object.fromEntries([...labels.matchAll(/(\w+)="([^"]*)"/g)].map(([, k, v]) => [k, v])),
  }));
  return { type, series };
}

describe('meshgate_build_info', () => {
  const v = versionInfo();
  // The node agent writes its own exposition (src/agent/exposition.ts); the others are prom-client registries.
  it.each([
    ['webhook', createMetrics().registry],
    ['node-agent', createAgentMetrics().registry],
    ['repair-controller', createRepairMetrics().registry],
  ] as Array<[string, { metrics(): Promise<string> }]>)(
    '%s: 1, labelled with the version, commit and Node.js version',
    async (_n, r) => {
      const m = family(await r.metrics(), 'meshgate_build_info');
      expect(m.type).toBe('gauge');
      expect(m.series).toEqual([
        { value: 1, labels: { version: v.version, commit: v.commit ?? 'unknown', node_version: process.version } },
      ]);
      expect(v.version).toMatch(/^\d+\.\d+\.\d+/);
    },
  );
});

describe('the namespace label of refusals', () => {
  it('only deny and error carry one; a review without a namespace none', () => {
    const label = refusalNamespaces();
    expect(label('allow', 'shop')).toBeUndefined();
    expect(label('patch', 'shop')).toBeUndefined();
    expect(label('deny', 'shop')).toBe('shop');
    expect(label('error', 'shop')).toBe('shop');
    expect(label('deny', undefined)).toBeUndefined();
  });

  it(`the first ${MAX_REFUSAL_NAMESPACES} namespaces keep theirs, later ones count as _other`, () => {
    const label = refusalNamespaces();
    for (let i = 0; i < MAX_REFUSAL_NAMESPACES; i++) expect(label('deny', `ns-${i}`)).toBe(`ns-${i}`);
    expect(label('deny', 'one-too-many')).toBe('_other');
    expect(label('error', 'ns-0')).toBe('ns-0');
    expect(label('deny', `ns-${MAX_REFUSAL_NAMESPACES - 1}`)).toBe(`ns-${MAX_REFUSAL_NAMESPACES - 1}`);
  });
});
