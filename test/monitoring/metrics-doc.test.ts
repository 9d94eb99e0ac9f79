// docs/metrics.md: its metrics table is generated from the registries (scripts/metrics-doc.ts) and must be current;
// every alert the chart ships is described in it.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { METRICS_DOC, renderMetricsTable, withTable } from '../../scripts/metrics-doc.ts';
import { render, type Obj } from '../chart/helm.ts';
import { profileValues } from '../chart/profiles.ts';

const doc = readFileSync(METRICS_DOC, 'utf8');

describe('docs/metrics.md', () => {
  it('has the current metrics table (regenerate with: node scripts/metrics-doc.ts)', async () => {
    expect(
      withTable(doc, await renderMetricsTable()) === doc,
      'docs/metrics.md is out of date: run node scripts/metrics-doc.ts and commit it',
    ).toBe(true);
  });

  it('describes every alert of the PrometheusRule', async () => {
    const r = await render(profileValues('istio', { metrics: { prometheusRule: { enabled: true } } }));
    const alerts = new Set<string>(
      r.one('PrometheusRule').spec.groups.flatMap((g: Obj) => g.rules.map((x: Obj) => x.alert as string)),
    );
    expect(alerts.size).toBeGreaterThan(10);
    for (const a of alerts) expect(doc, a).toContain(`| \`${a}\` |`);
  });
});
