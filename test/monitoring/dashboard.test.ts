// The Grafana dashboard (charts/meshgate/dashboards/meshgate.json) as the chart ships it: a ConfigMap the dashboard
// sidecar picks up, a layout without overlaps, every query parsed by the real promtool (as recording rules) and every
// meshgate metric it reads present in meshgate's registries.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { describe, expect, it } from 'vitest';
import { chartDir, render, type Obj } from '../chart/helm.ts';
import { profileValues } from '../chart/profiles.ts';
import { meshgateFamilies, namesIn, seriesNames } from './names.ts';
import { runTool } from './tools.ts';

const dashboard = JSON.parse(readFileSync(join(chartDir, 'dashboards', 'meshgate.json'), 'utf8')) as Obj;
const panels = (dashboard.panels as Obj[]).filter((p) => p.type !== 'row');
const queries = panels.flatMap((p) =>
  (p.targets as Obj[]).map((t) => ({ panel: p.title as string, ref: t.refId as string, expr: t.expr as string })),
);
/** What Grafana substitutes before Prometheus sees a query. */
const VARIABLES: Record<string, string> = { $__rate_interval: '2m', $namespace: 'meshgate', $webhook_job: 'meshgate' };

describe('Grafana dashboard', () => {
  it("is off by default; enabled, a ConfigMap with the sidecar's label holding the dashboard JSON", async () => {
    expect((await render(profileValues('istio'))).all('ConfigMap').map((c) => c.metadata.name)).not.toContain(
      'meshgate-dashboard',
    );
    const r = await render(
      profileValues('istio', {
        metrics: { dashboard: { enabled: true, annotations: { grafana_folder: 'Mesh' }, namespace: 'monitoring' } },
      }),
    );
    const cm = r.one('ConfigMap', 'meshgate-dashboard');
    expect(cm.metadata).toMatchObject({
      namespace: 'monitoring',
      labels: { grafana_dashboard: '1' },
      annotations: { grafana_folder: 'Mesh' },
    });
    expect(JSON.parse(cm.data['meshgate.json'])).toEqual(dashboard);
  });

  it('has a data source variable and a namespace variable, and uses no other variables', () => {
    const vars = (dashboard.templating.list as Obj[]).map((v) => v.name);
    expect(vars).toEqual(['datasource', 'namespace', 'webhook_job']);
    // biome-ignore lint/suspicious/noTemplateCurlyInString: Grafana's own variable syntax, not a JS template
    for (const p of panels) expect(p.datasource, p.title).toEqual({ type: 'prometheus', uid: '${datasource}' });
    for (const q of queries) {
      const used = q.expr.match(/\$[A-Za-z_]+/g) ?? [];
      expect(
        used.filter((v) => !(v in VARIABLES)),
        `${q.panel} ${q.ref}`,
      ).toEqual([]);
    }
  });

  it('lays panels out on the 24-column grid without overlaps, with unique ids', () => {
    const all = dashboard.panels as Obj[];
    expect(new Set(all.map((p) => p.id)).size).toBe(all.length);
    const cells = new Set<string>();
    for (const p of all) {
      const { x, y, w, h } = p.gridPos;
      expect(x + w, p.title).toBeLessThanOrEqual(24);
      for (let i = x; i < x + w; i++)
        for (let j = y; j < y + h; j++) {
          expect(cells.has(`${i},${j}`), `${p.title} overlaps at ${i},${j}`).toBe(false);
          cells.add(`${i},${j}`);
        }
    }
    expect(panels.length).toBeGreaterThan(10);
    for (const p of panels) expect(p.targets.length, p.title).toBeGreaterThan(0);
  });

  it('every query parses (promtool check rules, each as a recording rule)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'meshgate-dashboard-'));
    try {
      const rules = queries.map((q, i) => ({
        record: `meshgate_dashboard:query_${i}`,
        expr: Object.entries(VARIABLES).reduce((e, [k, v]) => e.replaceAll(k, v), q.expr),
      }));
      writeFileSync(join(dir, 'queries.yaml'), stringify({ groups: [{ name: 'dashboard', rules }] }));
      const res = runTool('promtool', ['check', 'rules', 'queries.yaml'], undefined, dir);
      expect(res.code, res.stdout + res.stderr).toBe(0);
      expect(res.stdout).toContain(`SUCCESS: ${queries.length} rules found`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("every meshgate metric it reads exists in meshgate's registries, and it reads each component's", async () => {
    const families = await meshgateFamilies();
    const known = seriesNames(families);
    const used = queries.flatMap((q) => namesIn(q.expr));
    expect(used.filter((n) => !known.has(n))).toEqual([]);
    const components = new Set(used.flatMap((n) => families.get(n.replace(/_bucket$/, ''))?.components ?? []));
    expect([...components].sort()).toEqual(['node-agent', 'repair-controller', 'webhook']);
  });
});
