/**
 * The report for people (a table of sections, one ✔/‼/✖ line per check with its code, the things it found
 * beneath, a hint under every problem) and for machines (JSON with every item, the hints and the exit code).
 */
import { count, ITEMS_KEPT } from './kept.ts';
import { CHECKS, counts, exitCode, hintFor, SECTIONS, type Item, type Report, type Status } from './report.ts';

const MARK: Record<Status, string> = { ok: '✔', warn: '‼', fail: '✖', skip: '–' };
/** Items shown per check in the table: enough to act on, short enough to read; JSON lists all it kept (kept.ts). */
export const TABLE_ITEMS = 20;

function itemLine(i: Item): string[] {
  const reason = i.reason ? ` [${i.reason}]` : '';
  const lines = [`      ${MARK[i.status]} ${i.name}: ${i.message}${reason}`];
  for (const c of i.changes ?? []) lines.push(`          change ${c}`);
  if (i.command) lines.push(`          run: ${i.command}`);
  return lines;
}

export function renderTable(report: Report): string {
  const { context: c } = report;
  const out = [
    `meshgate check${c.view ? ` (${c.view})` : ''}: mesh ${c.mesh}, namespace ${c.names.namespace}, ` +
      `Kubernetes ${c.server ?? 'unknown'}`,
    `configuration: ${c.configSource}`,
  ];
  for (const section of SECTIONS) {
    const here = report.results.filter((r) => CHECKS[r.code].section === section);
    if (here.length === 0) continue;
    out.push('', section, '-'.repeat(section.length));
    for (const r of here) {
      out.push(`${MARK[r.status]} ${r.message}  [${r.code}]`);
      const items = r.items ?? [];
      // A passing check lists what it saw only when that is short; a problem lists what to act on first.
      const shown =
        r.status === 'ok' && items.length > 5
          ? []
          : [...items].sort((a, b) => rank(b.status) - rank(a.status)).slice(0, TABLE_ITEMS);
      for (const i of shown) out.push(...itemLine(i));
      if (items.length > shown.length && shown.length > 0)
        out.push(`      … and ${items.length - shown.length} more (-o json lists ${r.omitted ? 'them' : 'all'})`);
      if (r.omitted)
        out.push(
          `      … and ${count(r.omitted.count)} more ${r.omitted.of}, counted, not listed (a finding lists at most ${ITEMS_KEPT})`,
        );
      if (r.status === 'fail' || r.status === 'warn') out.push(`    hint: ${hintFor(r.code, c.names)}`);
    }
  }
  const n = counts(report);
  const code = exitCode(report);
  const warnings = `${n.warn} warning${n.warn === 1 ? '' : 's'}`;
  out.push(
    '',
    `Status: ${n.fail} failed, ${warnings}, ${n.ok} passed, ${n.skip} not checked; ` +
      `exit ${code}${code === 0 ? '' : ' (a check failed)'}`,
  );
  return `${out.join('\n')}\n`;
}

function rank(s: Status): number {
  return { skip: 0, ok: 1, warn: 2, fail: 3 }[s];
}

export function renderJson(report: Report): string {
  const results = report.results.map((r) =>
    r.status === 'fail' || r.status === 'warn' ? { ...r, hint: hintFor(r.code, report.context.names) } : r,
  );
  return `${JSON.stringify({ ...report, results, summary: counts(report), exitCode: exitCode(report) }, null, 2)}\n`;
}
