/**
 * The corpus' admitted fractions, per source and mesh, under the default (`apps.privileges: node`) and under
 * `restricted`: printed by the test and kept in docs/corpus.md.
 */
import type { Judged } from './judge.ts';
import { CORPUS_MESHES, type CorpusMesh, SOURCES } from './sources.ts';

interface Row {
  source: string;
  mesh: CorpusMesh;
  node: Judged;
  restricted: Judged;
}

const TITLES: Readonly<Record<CorpusMesh, string>> = {
  istio: 'Istio',
  'istio-openshift': 'Istio on OpenShift',
  linkerd: 'Linkerd',
};

function fraction(rows: readonly Row[], key: 'node' | 'restricted'): string {
  if (rows.length === 0) return '–';
  const ok = rows.filter((r) => r[key].admitted).length;
  return `${ok}/${rows.length}`;
}

const percent = (rows: readonly Row[], key: 'node' | 'restricted') =>
  rows.length ? `${Math.round((100 * rows.filter((r) => r[key].admitted).length) / rows.length)} %` : '-';

export function corpusTable(results: readonly Row[]): { text: string; markdown: string } {
  const header = ['source', 'workloads', ...CORPUS_MESHES.map((m) => `${TITLES[m]}: default / restricted`)];
  const lines: string[][] = [];
  for (const s of SOURCES) {
    const mine = results.filter((r) => r.source === s.id);
    const per = CORPUS_MESHES.map((m) => mine.filter((r) => r.mesh === m));
    lines.push([
      s.id,
      String(per[0].length),
      ...per.map((r) => `${fraction(r, 'node')} / ${fraction(r, 'restricted')}`),
    ]);
  }
  const per = CORPUS_MESHES.map((m) => results.filter((r) => r.mesh === m));
  lines.push([
    '**all**',
    String(per[0].length),
    ...per.map(
      (r) =>
        `${fraction(r, 'node')} (${percent(r, 'node')}) / ${fraction(r, 'restricted')} (${percent(r, 'restricted')})`,
    ),
  ]);
  const markdown = [
    `| ${header.join(' | ')} |`,
    `|${header.map(() => '---').join('|')}|`,
    ...lines.map((l) => `| ${l.join(' | ')} |`),
  ].join('\n');
  const text = [
    'corpus: admitted at enforce (default apps.privileges node / restricted)',
    ...lines.map((l) => `  ${l[0].padEnd(30)} ${l[1].padStart(3)}  ${l.slice(2).join('   ')}`),
  ].join('\n');
  return { text, markdown };
}
