/**
 * Metric names as meshgate's registries really have them (scripts/metrics-doc.ts builds the three processes'
 * registries), so the alerts, the dashboard and docs/metrics.md are checked against what exists.
 */
export { meshgateFamilies, type Component } from '../../scripts/metrics-doc.ts';

/** The series names a family exposes: a histogram's _bucket, _sum and _count besides its own name. */
export function seriesNames(families: Map<string, { type: string }>): Set<string> {
  const names = new Set<string>();
  for (const [name, f] of families) {
    names.add(name);
    if (f.type === 'histogram') for (const s of ['_bucket', '_sum', '_count']) names.add(name + s);
  }
  return names;
}

/** meshgate_* names used in PromQL text. */
export function namesIn(promql: string): string[] {
  return [...new Set(promql.match(/\bmeshgate_[a-z0-9_]+/g) ?? [])];
}
