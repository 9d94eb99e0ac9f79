// The scenario matrix as a person reads it: one table row per scenario with the figures issue 13 asks for, then
// each scenario's evidence (what a person sees) and, for a failed one, why.
import type { ScenarioResult } from './common.ts';

export const secs = (ms: number | undefined) => (ms === undefined ? 'never' : `${(ms / 1000).toFixed(1)} s`);

/** A header row and its rule, then the rows: columns 2–6 (the figures) right-aligned, the others left. */
export function printTable(rows: string[][]): void {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((row) => row[i].length)));
  for (const [i, row] of rows.entries()) {
    console.log(
      row
        .map((cell, j) => (j >= 2 && j <= 6 ? cell.padStart(widths[j]) : cell.padEnd(widths[j])))
        .join('  ')
        .trimEnd(),
    );
    if (i === 0) console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  }
}

/** A result's row: its id, `what` (its title, or its line), the counts, the times and the outcome. */
export function resultRow(r: ScenarioResult, what: string): string[] {
  return [
    r.id,
    what,
    String(r.created),
    String(r.running),
    String(r.unredirected),
    secs(r.rightMs),
    secs(r.durationMs),
    r.failures.length ? 'FAILED' : 'PASS',
  ];
}

export function printMatrix(results: ScenarioResult[]): void {
  const rows = [['', 'scenario', 'created', 'Running', 'Running unredirected', 'right again after', 'took', 'result']];
  for (const r of results) rows.push(resultRow(r, r.title));
  console.log('');
  printTable(rows);
  for (const r of results) {
    console.log(`\n${r.id} ${r.title}: ${r.failures.length ? 'FAILED' : 'PASS'}`);
    for (const s of r.seen) console.log(`  sees: ${s}`);
    for (const f of r.failures) console.log(`  FAIL: ${f}`);
  }
}
